package ci_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub Actions workflow the tests look at.
type workflow struct {
	Name        string                    `yaml:"name"`
	On          map[string]map[string]any `yaml:"on"`
	Permissions map[string]string         `yaml:"permissions"`
	Concurrency struct {
		Group            string `yaml:"group"`
		CancelInProgress bool   `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		If          string            `yaml:"if"`
		Permissions map[string]string `yaml:"permissions"`
		Steps       []struct {
			ID   string            `yaml:"id"`
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
			Run  string            `yaml:"run"`
			If   string            `yaml:"if"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) *workflow {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(src, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(w.Jobs) == 0 {
		t.Fatalf("%s: no jobs", name)
	}
	return &w
}

// minMajor is the oldest major version of each action the workflows may
// use: the current ones (Node 24), no older.
var minMajor = map[string]int{
	"actions/checkout":          6,
	"actions/setup-go":          6,
	"actions/upload-artifact":   7,
	"actions/download-artifact": 8,
	"actions/cache":             5,
}

// pinnedUse is a uses: line pinned by commit, with the version in a
// comment (GitHub's security hardening guide: a tag can be moved, a commit
// cannot).
var pinnedUse = regexp.MustCompile(`(?m)^\s*(?:- )?uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40}) # v(\d+)\.\d+\.\d+$`)

// checkCommon checks what both workflows must do: current actions, each
// pinned by commit with its version in a comment, no expression expanded
// inside a run script (a value from the event, put in the script's text,
// could inject commands: values go through env), no write permission but
// those listed, no state file (never committed: docs/running.md, "State and resume").
func checkCommon(t *testing.T, file string, w *workflow, writes ...string) {
	t.Helper()
	allowed := map[string]bool{}
	for _, p := range writes {
		allowed[p] = true
	}
	for p, v := range w.Permissions {
		if v != "read" && v != "none" && !allowed[p] {
			t.Errorf("%s: permission %s: %s", file, p, v)
		}
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(src), "state.json") || strings.Contains(string(src), "state file") {
		t.Errorf("%s: speaks of state files: they are never committed", file)
	}
	pinned := map[string]string{} // action@sha → major
	for _, m := range pinnedUse.FindAllStringSubmatch(string(src), -1) {
		pinned[m[1]+"@"+m[2]] = m[3]
	}
	for name, job := range w.Jobs {
		if len(job.Permissions) > 0 {
			t.Errorf("%s: job %s sets its own permissions", file, name)
		}
		for _, s := range job.Steps {
			if strings.Contains(s.Run, "${{") {
				t.Errorf("%s: step %q expands an expression in its script: pass it in env", file, s.Name)
			}
			if s.Uses == "" {
				continue
			}
			action, _, _ := strings.Cut(s.Uses, "@")
			want, known := minMajor[action]
			if !known {
				t.Errorf("%s: step uses %s, an action the test does not know", file, s.Uses)
				continue
			}
			major, ok := pinned[s.Uses]
			if !ok {
				t.Errorf("%s: %s: want it pinned by a full commit SHA with the version in a comment (uses: %s@SHA # vX.Y.Z)", file, s.Uses, action)
				continue
			}
			if n, _ := strconv.Atoi(major); n < want {
				t.Errorf("%s: %s: the current major is v%d", file, s.Uses, want)
			}
		}
	}
}

func TestPlanWorkflow(t *testing.T) {
	const file = "cadence-plan.yml"
	w := readWorkflow(t, file)
	checkCommon(t, file, w)
	if len(w.On) != 1 || w.On["pull_request"] == nil {
		t.Errorf("%s: want only the pull_request trigger (never pull_request_target), got %v", file, w.On)
	}
	paths, _ := w.On["pull_request"]["paths"].([]any)
	for _, want := range []string{"**/*.hcl", "**/*.hcl.json"} {
		if !containsAny(paths, want) {
			t.Errorf("%s: pull_request paths lack %q", file, want)
		}
	}
	if len(w.Permissions) != 1 || w.Permissions["contents"] != "read" {
		t.Errorf("%s: permissions %v: want contents: read only (the pull request's code runs here)", file, w.Permissions)
	}
	if !strings.Contains(w.Concurrency.Group, "github.event.pull_request.number") || !w.Concurrency.CancelInProgress {
		t.Errorf("%s: want a concurrency group per pull request that cancels the older run, got %+v", file, w.Concurrency)
	}
	version := w.Env["CADENCE_VERSION"]
	if !regexp.MustCompile(`^(v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?|[0-9a-f]{12,40})$`).MatchString(version) {
		t.Errorf("%s: CADENCE_VERSION %q: want a release tag or a commit", file, version)
	}
	src, _ := os.ReadFile(file)
	if strings.Contains(string(src), "@latest") {
		t.Errorf("%s: installs @latest: a new release would change the check unreviewed", file)
	}
	if n := strings.Count(string(src), "CADENCE_VERSION:"); n != 1 {
		t.Errorf("%s: CADENCE_VERSION set %d times: want one variable", file, n)
	}
	var install, plan, upload, summary, cached bool
	cacheID := ""
	for _, s := range w.Jobs["plan"].Steps {
		if strings.HasPrefix(s.Uses, "actions/cache@") {
			// The built binary, keyed by the pinned version: a pull request
			// rebuilds cadence only when the version changes.
			cacheID = s.ID
			cached = strings.Contains(s.With["key"], "env.CADENCE_VERSION") && s.With["path"] != ""
		}
		if strings.Contains(s.Run, `go install "github.com/cadence-run/cadence/cmd/cadence@${CADENCE_VERSION}"`) {
			install = cacheID != "" && strings.Contains(s.If, "steps."+cacheID+".outputs.cache-hit != 'true'")
		}
		if strings.Contains(s.Run, "cadence plan -offline") {
			plan = strings.Contains(s.Run, "-format markdown") && strings.Contains(s.Run, `-- "${files[@]}"`)
			summary = strings.Contains(s.Run, "$GITHUB_STEP_SUMMARY")
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			upload = s.With["name"] == "cadence-plan" && s.If == "always()"
		}
		if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["persist-credentials"] != "false" {
			t.Errorf("%s: checkout keeps the token in .git/config", file)
		}
	}
	if !install || !plan || !upload || !summary || !cached {
		t.Errorf("%s: install pinned on a cache miss %v, plan the changed files as Markdown %v, write the job summary %v, upload the artifact %v, cache the binary by version %v",
			file, install, plan, summary, upload, cached)
	}
}

func TestCommentWorkflow(t *testing.T) {
	const file = "cadence-comment.yml"
	w := readWorkflow(t, file)
	checkCommon(t, file, w, "pull-requests")
	planName := readWorkflow(t, "cadence-plan.yml").Name
	run := w.On["workflow_run"]
	if len(w.On) != 1 || run == nil {
		t.Fatalf("%s: want only the workflow_run trigger, got %v", file, w.On)
	}
	if wf, _ := run["workflows"].([]any); len(wf) != 1 || wf[0] != planName {
		t.Errorf("%s: workflow_run.workflows %v: want [%q]", file, run["workflows"], planName)
	}
	if types, _ := run["types"].([]any); len(types) != 1 || types[0] != "completed" {
		t.Errorf("%s: workflow_run.types %v: want [completed]", file, run["types"])
	}
	if w.Permissions["pull-requests"] != "write" || w.Permissions["actions"] != "read" {
		t.Errorf("%s: permissions %v: want pull-requests: write, actions: read", file, w.Permissions)
	}
	if !strings.Contains(w.Concurrency.Group, "github.event.workflow_run.head_branch") {
		t.Errorf("%s: want a concurrency group per pull request branch, got %q", file, w.Concurrency.Group)
	}
	// workflow_run runs the workflow file of the default branch only: until
	// it is merged there, no comment is posted, and the file says so.
	if src, _ := os.ReadFile(file); !strings.Contains(string(src), "default branch") || !strings.Contains(string(src), "only once this file is on the default branch") {
		t.Errorf("%s: does not say that it runs only once it is on the default branch", file)
	}
	job, ok := w.Jobs["comment"]
	if !ok {
		t.Fatalf("%s: no comment job", file)
	}
	if !strings.Contains(job.If, "github.event.workflow_run.event == 'pull_request'") {
		t.Errorf("%s: the job runs for other events than pull requests: if %q", file, job.If)
	}
	var download, script bool
	for _, s := range job.Steps {
		if strings.HasPrefix(s.Uses, "actions/checkout@") {
			// The default branch only: never the pull request's head.
			for _, k := range []string{"ref", "repository"} {
				if v, ok := s.With[k]; ok {
					t.Errorf("%s: checkout with %s: %q: the privileged workflow must not check out the pull request", file, k, v)
				}
			}
			if s.With["persist-credentials"] != "false" {
				t.Errorf("%s: checkout keeps the token in .git/config", file)
			}
		}
		if strings.HasPrefix(s.Uses, "actions/download-artifact@") {
			download = s.With["name"] == "cadence-plan" && s.With["run-id"] == "${{ github.event.workflow_run.id }}"
		}
		if regexp.MustCompile(`\bgit\s+(checkout|fetch|switch|pull)\b|\bgh\s+pr\s+checkout\b`).MatchString(s.Run) {
			t.Errorf("%s: step %q fetches or checks out code: %q", file, s.Name, s.Run)
		}
		if s.Run != "" && s.Run != "node .github/cadence/comment.mjs" {
			t.Errorf("%s: step %q runs %q: the only script is comment.mjs of the default branch", file, s.Name, s.Run)
		}
		if s.Run == "node .github/cadence/comment.mjs" {
			script = s.Env["CADENCE_HEAD_SHA"] == "${{ github.event.workflow_run.head_sha }}" && s.Env["GITHUB_TOKEN"] != ""
		}
	}
	if !download || !script {
		t.Errorf("%s: download the plan run's artifact %v, run comment.mjs with the planned head %v", file, download, script)
	}
}

func containsAny(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
