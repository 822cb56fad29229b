// Package ci_test tests the GitHub Actions example: comment.mjs, the script
// that posts the plan as a pull-request comment, against a local fake of
// the GitHub REST endpoints it calls, and the two workflows' important
// properties. The script's tests need node (CI has it: .ci/run).
package ci_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

const (
	marker = "<!-- cadence-plan -->"
	bot    = "github-actions[bot]"
	token  = "test-token"
	repo   = "acme/waves"
	pr     = 7
	head   = "0123456789abcdef0123456789abcdef01234567"
)

// comment is an issue comment of the fake.
type comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
}

// fakeGitHub serves the endpoints comment.mjs calls: GET a pull request,
// list its issue comments (30 a page unless per_page, with a Link header),
// create a comment, update one. denyWrites answers 403 to create and
// update, as GitHub does for a read-only token.
type fakeGitHub struct {
	mu         sync.Mutex
	comments   []comment
	headSHA    string
	denyWrites bool
	nextID     int64
	posts      int
	patches    int
	pages      int
	badAuth    int
}

func (f *fakeGitHub) add(login, body string) {
	f.nextID++
	c := comment{ID: f.nextID, Body: body}
	c.User.Login = login
	f.comments = append(f.comments, c)
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+token {
		f.badAuth++
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	base := "/repos/" + repo
	issue := fmt.Sprintf("%s/issues/%d/comments", base, pr)
	writeJSON := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	readBody := func() (string, bool) {
		var in struct{ Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
			writeJSON(http.StatusUnprocessableEntity, map[string]string{"message": "body is missing"})
			return "", false
		}
		if utf8.RuneCountInString(in.Body) > 65536 {
			writeJSON(http.StatusUnprocessableEntity, map[string]string{"message": "Body is too long (maximum is 65536 characters)"})
			return "", false
		}
		return in.Body, true
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == fmt.Sprintf("%s/pulls/%d", base, pr):
		writeJSON(http.StatusOK, map[string]any{"number": pr, "head": map[string]string{"sha": f.headSHA}})
	case r.Method == http.MethodGet && r.URL.Path == issue:
		f.pages++
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		if per <= 0 {
			per = 30
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		lo, hi := min((page-1)*per, len(f.comments)), min(page*per, len(f.comments))
		if hi < len(f.comments) {
			w.Header().Set("Link", fmt.Sprintf(`<http://%s%s?per_page=%d&page=%d>; rel="next"`, r.Host, issue, per, page+1))
		}
		writeJSON(http.StatusOK, append([]comment{}, f.comments[lo:hi]...))
	case r.Method == http.MethodPost && r.URL.Path == issue:
		if f.denyWrites {
			writeJSON(http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
			return
		}
		body, ok := readBody()
		if !ok {
			return
		}
		f.posts++
		f.add(bot, body)
		writeJSON(http.StatusCreated, f.comments[len(f.comments)-1])
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, base+"/issues/comments/"):
		if f.denyWrites {
			writeJSON(http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
			return
		}
		id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, base+"/issues/comments/"), 10, 64)
		body, ok := readBody()
		if !ok {
			return
		}
		for i := range f.comments {
			if f.comments[i].ID == id {
				f.patches++
				f.comments[i].Body = body
				writeJSON(http.StatusOK, f.comments[i])
				return
			}
		}
		writeJSON(http.StatusNotFound, map[string]string{"message": "Not Found"})
	default:
		writeJSON(http.StatusNotFound, map[string]string{"message": "Not Found: " + r.Method + " " + r.URL.Path})
	}
}

// ours returns the comments by the bot that carry the marker.
func (f *fakeGitHub) ours() []comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []comment
	for _, c := range f.comments {
		if c.User.Login == bot && strings.HasPrefix(c.Body, marker) {
			out = append(out, c)
		}
	}
	return out
}

// run is one run of comment.mjs: its output and exit code, and the job
// summary it wrote.
type run struct {
	out     string
	code    int
	summary string
}

// runScript runs comment.mjs against f with plan as the artifact's plan.md;
// extra are more environment variables (KEY=value).
func runScript(t *testing.T, f *fakeGitHub, plan string, extra ...string) run {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: comment.mjs's tests need Node.js 18 or later (CI installs it; see .ci/run): %v", err)
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	dir := t.TempDir()
	art := filepath.Join(dir, "artifact")
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"plan.md": plan, "pr": strconv.Itoa(pr) + "\n", "head-sha": head + "\n"} {
		if err := os.WriteFile(filepath.Join(art, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	summary := filepath.Join(dir, "summary.md")
	cmd := exec.Command(node, "comment.mjs")
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"GITHUB_API_URL=" + srv.URL, "GITHUB_REPOSITORY=" + repo, "GITHUB_TOKEN=" + token,
		"GITHUB_STEP_SUMMARY=" + summary, "CADENCE_PLAN_DIR=" + art,
		"CADENCE_HEAD_SHA=" + head, "CADENCE_RUN_URL=https://github.com/acme/waves/actions/runs/42",
	}, extra...)
	out, err := cmd.CombinedOutput()
	r := run{out: string(out)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("node comment.mjs: %v", err)
	}
	if b, err := os.ReadFile(summary); err == nil {
		r.summary = string(b)
	}
	if f.badAuth > 0 {
		t.Errorf("the script called the API without the token %d times", f.badAuth)
	}
	return r
}

const plan1 = "**cadence plan** for wave <code>alpha</code>: **1 to run**\n\n| | Lot |\n|---|---|\n| `+` run | <code>hello</code> |\n"

func TestCommentFirstRunCreates(t *testing.T) {
	f := &fakeGitHub{headSHA: head}
	f.add("someone", "LGTM")
	r := runScript(t, f, plan1)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.out)
	}
	ours := f.ours()
	if len(ours) != 1 || f.posts != 1 || f.patches != 0 {
		t.Fatalf("want one created comment, got %d (posts %d, patches %d): %s", len(ours), f.posts, f.patches, r.out)
	}
	if want := marker + "\n" + plan1; ours[0].Body != want {
		t.Errorf("body:\n%q\nwant\n%q", ours[0].Body, want)
	}
}

func TestCommentUpdateFindsMarker(t *testing.T) {
	f := &fakeGitHub{headSHA: head}
	// 150 comments: cadence's on the second page of 100; a comment by
	// someone else that carries the marker comes first and is left alone.
	f.add("mallory", marker+"\nnot cadence's")
	for i := 0; i < 120; i++ {
		f.add("someone", fmt.Sprintf("comment %d", i))
	}
	f.add(bot, marker+"\nthe old plan")
	for i := 0; i < 28; i++ {
		f.add("someone", fmt.Sprintf("later %d", i))
	}
	r := runScript(t, f, plan1)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.out)
	}
	if f.posts != 0 || f.patches != 1 || f.pages < 2 {
		t.Fatalf("want one update found on page 2: posts %d, patches %d, pages read %d: %s", f.posts, f.patches, f.pages, r.out)
	}
	ours := f.ours()
	if len(ours) != 1 || ours[0].ID != 122 || !strings.Contains(ours[0].Body, "<code>alpha</code>") {
		t.Errorf("the bot's comment (id 122) was not updated: %+v", ours)
	}
	if f.comments[0].Body != marker+"\nnot cadence's" {
		t.Errorf("someone else's comment changed: %q", f.comments[0].Body)
	}
	// a second run updates the same comment again: still one
	if r := runScript(t, f, plan1+"\nmore\n"); r.code != 0 || f.posts != 0 || f.patches != 2 || len(f.ours()) != 1 {
		t.Errorf("second run: exit %d, posts %d, patches %d, ours %d: %s", r.code, f.posts, f.patches, len(f.ours()), r.out)
	}
}

func TestCommentReadOnlyToken(t *testing.T) {
	f := &fakeGitHub{headSHA: head, denyWrites: true}
	r := runScript(t, f, plan1)
	if r.code != 0 {
		t.Fatalf("a read-only token failed the check: exit %d: %s", r.code, r.out)
	}
	if len(f.comments) != 0 {
		t.Errorf("a comment was posted: %+v", f.comments)
	}
	if !strings.Contains(r.out, "cannot comment on pull request #7 (HTTP 403: Resource not accessible by integration)") {
		t.Errorf("output does not say why: %s", r.out)
	}
	if !strings.Contains(r.summary, "cannot comment") || !strings.Contains(r.summary, "<code>hello</code>") {
		t.Errorf("the plan is not in the job summary: %q", r.summary)
	}
}

func TestCommentHeadMoved(t *testing.T) {
	f := &fakeGitHub{headSHA: strings.Repeat("f", 40)}
	r := runScript(t, f, plan1)
	if r.code != 0 || len(f.comments) != 0 || !strings.Contains(r.out, "a newer plan run comments") {
		t.Errorf("an old run commented, or failed: exit %d, comments %d: %s", r.code, len(f.comments), r.out)
	}
}

func TestCommentNothingPlanned(t *testing.T) {
	f := &fakeGitHub{headSHA: head}
	if r := runScript(t, f, ""); r.code != 0 || len(f.comments) != 0 {
		t.Fatalf("an empty plan commented, or failed: exit %d, comments %d: %s", r.code, len(f.comments), r.out)
	}
	f.add(bot, marker+"\nthe old plan")
	if r := runScript(t, f, "\n"); r.code != 0 || f.patches != 1 || !strings.Contains(f.comments[0].Body, "no longer changes a wave file") {
		t.Errorf("the old comment was not updated: exit %d, %+v: %s", r.code, f.comments, r.out)
	}
}

func TestCommentBadArtifact(t *testing.T) {
	f := &fakeGitHub{headSHA: head}
	r := runScript(t, f, plan1, "CADENCE_PR=7; rm -rf /")
	if r.code == 0 || !strings.Contains(r.out, "is not a number") || len(f.comments) != 0 {
		t.Errorf("a malformed pull request number was used: exit %d: %s", r.code, r.out)
	}
}

func TestCommentOverLimit(t *testing.T) {
	// Several waves' plans, each near cadence's own Markdown limit, the
	// cut falling inside a code fence within a <details> section.
	var b strings.Builder
	for w := 0; w < 3; w++ {
		fmt.Fprintf(&b, "**cadence plan** for wave <code>w%d</code>: **100 to run**\n\n<details><summary>Totals</summary>\n\n```text\n", w)
		for i := 0; b.Len() < (w+1)*30000; i++ {
			fmt.Fprintf(&b, "line %d of wave %d: é ü ✓ 𝄞\n", i, w)
		}
		b.WriteString("```\n\n</details>\n\n---\n\n")
	}
	f := &fakeGitHub{headSHA: head}
	r := runScript(t, f, b.String())
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.out)
	}
	ours := f.ours()
	if len(ours) != 1 {
		t.Fatalf("want one comment, got %d: %s", len(ours), r.out)
	}
	body := ours[0].Body
	if n := utf8.RuneCountInString(body); n >= 65536 || len(body) >= 65536 {
		t.Errorf("body has %d characters, %d bytes: over the limit", n, len(body))
	}
	if !strings.HasSuffix(body, "The whole plan is in the [job summary and the `cadence-plan` artifact of the plan run](https://github.com/acme/waves/actions/runs/42).\n") ||
		!strings.Contains(body, "**Truncated:** the plan is longer than a GitHub comment allows (65,536 characters).") {
		t.Errorf("no truncation note at the end: …%q", body[max(0, len(body)-300):])
	}
	fences := 0
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "```") {
			fences++
		}
	}
	if fences%2 != 0 {
		t.Errorf("a code fence is left open (%d fence lines): the note would be code", fences)
	}
	if o, c := strings.Count(body, "<details>"), strings.Count(body, "</details>"); o != c {
		t.Errorf("%d <details> opened, %d closed", o, c)
	}
	if !utf8.ValidString(body) {
		t.Error("the cut split a character")
	}
}

func TestCommentNeutralises(t *testing.T) {
	plan := "**cadence plan** for wave <code>x</code>\n\n- ⚠ ping @alice and @org/team about #12, acme/other#3 and GH-4\n" +
		"- esc \x1b[31mred\x1b[0m bell\x07 del\x7f cr\r\n- bidi \u202eevil\u2066 c1\u0085\n" +
		"- kept: &#8203; @&#8203;bob # 1 email a@b\n- entities &#64;dave &#x40;erin &commat;frank &#35;7 &num;8\n\n```text\nError: in @carol's #5\n```\n"
	f := &fakeGitHub{headSHA: head}
	r := runScript(t, f, plan)
	if r.code != 0 || len(f.ours()) != 1 {
		t.Fatalf("exit %d: %s", r.code, r.out)
	}
	body := f.ours()[0].Body
	for _, want := range []string{
		"ping @\u200balice and @\u200borg/team about #\u200b12, acme/other#\u200b3 and GH\u200b-4",
		"esc ␛[31mred␛[0m bell␇ del␡ cr\n",
		"bidi \ufffdevil\ufffd c1\ufffd",
		"kept: &#8203; @&#8203;bob # 1 email a@\u200bb",
		"Error: in @\u200bcarol's #\u200b5",
		"entities &#64;\u200bdave &#x40;\u200berin &commat;\u200bfrank &#35;\u200b7 &num;\u200b8",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%q", want, body)
		}
	}
	if strings.ContainsAny(body, "\x1b\x07\x7f\r\u202e\u2066\u0085") {
		t.Errorf("a control character got through: %q", body)
	}
}
