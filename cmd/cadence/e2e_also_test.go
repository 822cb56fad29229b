//go:build unix

package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// alsoWave is the wave of the neighbour tests: lot a of repo app also
// edits repo web, whose test gate is webTest.
func alsoWave(webTest, lot string) waveOpts {
	return waveOpts{Lot: "  also = [repo.web]\n" + lot, More: `
repo "web" {
  path = "web"
  test = "` + webTest + `"
}
`}
}

// newWeb makes the repository web (branch main, one commit) and returns
// its path.
func (e *e2e) newWeb() string {
	e.t.Helper()
	web := filepath.Join(e.dir, "web")
	e.git(e.dir, "init", "-q", "-b", "main", web)
	e.writeFile(filepath.Join(web, "README.md"), "# web\n")
	e.git(web, "add", "README.md")
	e.git(web, "commit", "-qm", "init")
	return web
}

// commitInWeb is a Bash turn that commits w.txt in the lot's worktree of
// web, beside its own.
var commitInWeb = fakeapi.Bash("cd ../a@web && echo w > w.txt && git add w.txt && git commit -q -m 'a: add w.txt (a)'")

// newAlsoBoth is the scenario of a lot whose implement session commits in
// its own worktree and in its neighbour web's (the gate of web wants
// w.txt), then a conform review; it returns it and web's path.
func newAlsoBoth(t *testing.T) (*e2e, string) {
	t.Helper()
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {commit("f.txt", "f"), commitInWeb, writeDone("added f.txt and w.txt")},
		"a-review0":    {review("conform")},
	}, alsoWave("test -f w.txt", ""))
	return e, e.newWeb()
}

// TestE2EAlsoBothRepos: a lot with a neighbour repository (also = [repo.web])
// whose session commits in both worktrees is integrated into both bases;
// the implement brief names the neighbour's worktree and its role, the
// review brief lists its commits, and COMMITS (end table, `cadence
// status`) and `cadence logs` count both repositories' commits.
func TestE2EAlsoBothRepos(t *testing.T) {
	t.Parallel()
	fakeapi.FindCLI(t)
	e, web := newAlsoBoth(t)
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`, `(?m)^a +done +0 +conform +2 `)

	a := e.lot(e.state(), "a")
	if a.Status != state.LotDone || a.Integrating != nil {
		t.Fatalf("lot a %s (%s), integrating %+v", a.Status, a.Cause, a.Integrating)
	}
	if got := e.git(e.repo, "show", "main:f.txt"); got != "f" {
		t.Errorf("app main:f.txt = %q", got)
	}
	if got := e.git(web, "show", "main:w.txt"); got != "w" {
		t.Errorf("web main:w.txt = %q", got)
	}
	// Both gates ran, each in its repository's worktree.
	var gates []string
	for _, s := range stepsOf(a, state.StepTest) {
		gates = append(gates, s.Repo+":"+string(s.Status))
	}
	if got := strings.Join(gates, " "); got != ":ok web:ok" {
		t.Errorf("test steps %q, want the own repo's then web's", got)
	}
	impl := stepsOf(a, state.StepImplement)[0]
	if len(impl.Commits) != 1 || len(impl.AlsoCommits["web"]) != 1 || !strings.Contains(impl.AlsoCommits["web"][0], "add w.txt") {
		t.Errorf("implement commits %q, neighbour commits %q", impl.Commits, impl.AlsoCommits)
	}

	webDir := a.Worktree + "@web"
	brief := promptText(t, e.turns("a-implement0")[0])
	for _, want := range []string{"Its own repository is app", "repository web: worktree " + webDir + ", started from main", "its test gate `test -f w.txt` runs there"} {
		if !strings.Contains(brief, want) {
			t.Errorf("the implement brief lacks %q:\n%s", want, brief)
		}
	}
	rev := promptText(t, e.turns("a-review0")[0])
	for _, want := range []string{"repository web: worktree " + webDir, "a: add w.txt (a)", "a: add f.txt (a)"} {
		if !strings.Contains(rev, want) {
			t.Errorf("the review brief lacks %q:\n%s", want, rev)
		}
	}
	logs := e.cadence("logs", e.wave, "a")
	logs.wantCode(t, 0)
	logs.wantOut(t, `web: [0-9a-f]+ a: add w\.txt \(a\)`, `test in repo web +ok`)
	status := e.cadence("status", e.wave)
	status.wantCode(t, 0)
	status.wantOut(t, `(?m)^a +done +integrate ok +2 `)
}

// TestE2EAlsoNeighbourGateRed: the neighbour's test gate runs in the
// neighbour's worktree: red there (the session committed w.txt, which
// web's gate refuses), the lot is handed back naming repo web, and
// neither base moves.
func TestE2EAlsoNeighbourGateRed(t *testing.T) {
	t.Parallel()
	fakeapi.FindCLI(t)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {commit("f.txt", "f"), commitInWeb, writeDone("added f.txt and w.txt")},
	}, alsoWave("test ! -f w.txt", "  fix_passes = 0"))
	web := e.newWeb()
	appBase, webBase := e.git(e.repo, "rev-parse", "main"), e.git(web, "rev-parse", "main")
	r := e.apply()
	r.wantCode(t, 1)
	r.wantOut(t, `a handed-back: test gate of repo web still red after 0 fix pass\(es\)`, `(?m)^a +handed-back +0 +2 `)

	a := e.lot(e.state(), "a")
	if a.Status != state.LotHandedBack || !strings.Contains(a.Cause, "repo web") {
		t.Fatalf("lot a %s (%s), want handed back naming repo web", a.Status, a.Cause)
	}
	if len(a.Findings) != 1 || !strings.Contains(a.Findings[0].Text, "neighbour repository web") {
		t.Errorf("findings %+v", a.Findings)
	}
	if got := e.git(e.repo, "rev-parse", "main"); got != appBase {
		t.Errorf("app's main moved to %s", got)
	}
	if got := e.git(web, "rev-parse", "main"); got != webBase {
		t.Errorf("web's main moved to %s", got)
	}
}

// TestE2EAlsoCrashBetweenAdvances: cadence killed (SIGKILL, the test-only
// failpoint) after app's base advanced and before web's leaves the
// integration's intent in the state; the next apply completes it (web's
// base advanced too), says so, and ends the lot done with exit 0.
func TestE2EAlsoCrashBetweenAdvances(t *testing.T) {
	t.Parallel()
	fakeapi.FindCLI(t)
	e, web := newAlsoBoth(t)
	appBase, webBase := e.git(e.repo, "rev-parse", "main"), e.git(web, "rev-parse", "main")

	env := e.env
	e.env = append(append([]string(nil), env...), "CADENCE_FAILPOINT=integrate-between-repos")
	p := e.start(e.applyArgs()...)
	<-p.done
	e.env = env
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("cadence was not killed by the failpoint (%v):\n%s", p.err, p.out.String())
	}
	t.Logf("first apply, killed:\n%s", indentLines(p.out.String()))
	a := e.lot(e.state(), "a")
	if a.Integrating == nil || len(a.Integrating.Repos) != 2 {
		t.Fatalf("no intent recorded: %+v", a.Integrating)
	}
	in := a.Integrating.Repos
	if in[0].Repo != "app" || in[0].Old != appBase || in[1].Repo != "web" || in[1].Old != webBase {
		t.Fatalf("intent %+v", in)
	}
	if got := e.git(e.repo, "rev-parse", "main"); got != in[0].New {
		t.Fatalf("app's main at %s, want advanced to %s", got, in[0].New)
	}
	if got := e.git(web, "rev-parse", "main"); got != webBase {
		t.Fatalf("web's main at %s, want not advanced yet (%s)", got, webBase)
	}

	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `completed the integration that cadence's stop cut short between repositories: repo app: main already at [0-9a-f]{12}; repo web: main advanced to [0-9a-f]{12}`,
		`Wave "w": 1 of 1 lots done`)
	a = e.lot(e.state(), "a")
	if a.Status != state.LotDone || a.Integrating != nil || a.IntegratedSHA != in[0].New {
		t.Fatalf("lot a %s (%s), integrating %+v, integrated %s", a.Status, a.Cause, a.Integrating, a.IntegratedSHA)
	}
	if got := e.git(e.repo, "rev-parse", "main"); got != in[0].New {
		t.Errorf("app's main at %s, want %s", got, in[0].New)
	}
	if got := e.git(web, "rev-parse", "main"); got != in[1].New {
		t.Errorf("web's main at %s, want %s", got, in[1].New)
	}
	if got := e.git(web, "show", "main:w.txt"); got != "w" {
		t.Errorf("web main:w.txt = %q", got)
	}
	if n := len(e.turns("a-implement0")) + len(e.turns("a-review0")); n == 0 {
		t.Error("no session ran")
	}
}
