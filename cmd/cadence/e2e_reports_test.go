//go:build unix

package main

// End-to-end tests of the trust cadence puts in sessions: read-only reviews
// (executor/agent/claude/readonly.go) and reports checked against git and
// themselves (executor/reports.go).

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
)

// appWorktree is the path of lot's worktree in repo app, where cadence makes it.
func (e *e2e) appWorktree(lot string) string {
	e.t.Helper()
	home := ""
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "CADENCE_HOME="); ok {
			home = v
		}
	}
	return layout.New(e.wave, "w", home).Worktree("app", e.repo, lot)
}

// hasWarning reports whether one of the lot's warnings contains part.
func hasWarning(l *state.Lot, part string) bool {
	return slices.ContainsFunc(l.Warnings, func(w string) bool { return strings.Contains(w, part) })
}

// TestE2EReviewCannotWrite: a review that tries Edit, Write and a commit
// is refused by the CLI each time (the tool_result texts below are the
// real CLI's); the refusals are recorded as warnings and in the step; the
// tree is unchanged, so the verdict counts and the lot is integrated.
// With the sandbox, a shell redirection into the tree fails too; without
// it, the after-check is the backstop for what Bash can still write (not
// tried here: apply_agent and the lifecycle tests cover it).
func TestE2EReviewCannotWrite(t *testing.T) {
	t.Parallel()
	for _, sandbox := range []bool{true, false} {
		name := "sandbox"
		if !sandbox {
			name = "no-sandbox"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := waveOpts{}
			if sandbox {
				needSandbox(t)
			} else {
				opts.Agent = "sandbox = false"
			}
			e := newE2E(t, map[string]fakeapi.Script{"a-implement0": implementScript()}, opts)
			wt := func(f string) string { return filepath.Join(e.appWorktree("a"), f) }
			script := fakeapi.Script{
				fakeapi.ToolUse("Edit", map[string]any{"file_path": wt("f.txt"), "old_string": "f", "new_string": "g"}),
				fakeapi.Write(wt("g.txt"), "g\n"),
				fakeapi.Bash("git commit --allow-empty -qm 'a: review commit (a)'"),
			}
			want := []string{
				"<tool_use_error>Error: No such tool available: Edit.",
				"<tool_use_error>Error: No such tool available: Write.",
				"Permission to use Bash with command git commit --allow-empty -qm 'a: review commit (a)' has been denied.",
			}
			if sandbox {
				script = append(script, fakeapi.Bash("echo x >> f.txt"))
				want = append(want, "f.txt: Read-only file system")
			}
			e.srv.SetScript("a-review0", append(script, review("conform")))
			r := e.apply()
			r.wantCode(t, 0)
			r.wantOut(t, `review tried Edit \(`+wt("f.txt")+`\): denied`, `Wave "w": 1 of 1 lots done`)
			reqs := e.turns("a-review0")
			if len(reqs) != len(want)+1 {
				t.Fatalf("%d review requests, want %d", len(reqs), len(want)+1)
			}
			for i, w := range want {
				tr := reqs[i+1].ToolResults()
				res := tr[len(tr)-1]
				if !res.IsError || !strings.Contains(res.Text, w) {
					t.Errorf("call %d: want an error with %q, got %v %q", i+1, w, res.IsError, res.Text)
				}
			}
			if tools := reqs[0].ToolNames(); slices.Contains(tools, "Edit") || slices.Contains(tools, "Write") || !slices.Contains(tools, "Bash") {
				t.Errorf("tools offered to the review: %q", tools)
			}
			a := e.lot(e.state(), "a")
			if a.Status != state.LotDone {
				t.Fatalf("lot a %s (%s), steps %s", a.Status, a.Cause, steps(a))
			}
			rev := stepsOf(a, state.StepReview)
			wantDenied := []string{"Edit (" + wt("f.txt") + ")", "Write (" + wt("g.txt") + ")", "Bash (git commit --allow-empty -qm 'a: review commit (a)')"}
			if sandbox {
				// A write the sandbox refused is recorded as well.
				wantDenied = append(wantDenied, "Bash (echo x >> f.txt) by the sandbox")
			}
			if len(rev) != 1 || rev[0].Conform == nil || !*rev[0].Conform || !slices.Equal(rev[0].Denied, wantDenied) {
				t.Errorf("review steps %+v, want one conform with denied %q", rev, wantDenied)
			}
			for _, d := range wantDenied {
				if !hasWarning(a, "review tried "+d+": denied") {
					t.Errorf("no warning for %s: %q", d, a.Warnings)
				}
			}
			if got := e.git(e.repo, "show", "main:f.txt"); got != "f" {
				t.Errorf("main:f.txt = %q", got)
			}
			if got := e.git(e.repo, "log", "--format=%s", "main"); strings.Contains(got, "review commit") {
				t.Errorf("the review's commit is on main:\n%s", got)
			}
		})
	}
}

// TestE2EImplementWithoutCommit: an implement session that ends "done"
// without a commit, on a lot with no earlier work, hands the lot back; no
// review runs and nothing is integrated.
func TestE2EImplementWithoutCommit(t *testing.T) {
	t.Parallel()
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {fakeapi.Bash("ls"), writeDone("added f.txt")},
		"a-review0":    {review("conform")},
	}, waveOpts{})
	r := e.apply()
	r.wantCode(t, 1)
	r.wantOut(t, `implement without commit`)
	a := e.lot(e.state(), "a")
	if a.Status != state.LotHandedBack || !strings.HasPrefix(a.Cause, "implement without commit: ") || !strings.Contains(a.Cause, "added f.txt") {
		t.Errorf("lot a %s (%s), want handed back: implement without commit", a.Status, a.Cause)
	}
	if got := steps(a); got != "implement:ok" {
		t.Errorf("steps %s, want implement:ok", got)
	}
	if n := len(e.turns("a-review0")); n != 0 {
		t.Errorf("%d review requests", n)
	}
}

// TestE2ENotAQuestion: a report whose questions are ["N/A", "none."] asks
// nothing: the lot is not stopped on a question, it goes on to its review
// and is integrated, with a warning per dropped entry.
func TestE2ENotAQuestion(t *testing.T) {
	t.Parallel()
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {commit("f.txt", "f"), fakeapi.StructuredOutput(map[string]any{
			"status": "done", "summary": "added f.txt", "questions": []string{"N/A", "none."}})},
		"a-review0": {review("conform")},
	}, waveOpts{})
	r := e.apply()
	r.wantCode(t, 0)
	a := e.lot(e.state(), "a")
	if a.Status != state.LotDone || len(a.Questions) != 0 {
		t.Fatalf("lot a %s (%s), questions %+v, steps %s", a.Status, a.Cause, a.Questions, steps(a))
	}
	for _, q := range []string{`"N/A"`, `"none."`} {
		if !hasWarning(a, "the implement report listed "+q+" as a question: dropped") {
			t.Errorf("no warning for %s: %q", q, a.Warnings)
		}
	}
}

// TestE2EReportNotFinished: a report whose own status says the work did
// not finish hands the lot back with that status and its summary, even
// with a commit; no review runs.
func TestE2EReportNotFinished(t *testing.T) {
	t.Parallel()
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {commit("f.txt", "f"), fakeapi.StructuredOutput(map[string]any{
			"status": "blocked", "summary": "f.txt needs a value nobody gave"})},
		"a-review0": {review("conform")},
	}, waveOpts{})
	r := e.apply()
	r.wantCode(t, 1)
	a := e.lot(e.state(), "a")
	if want := `implement reported "blocked": f.txt needs a value nobody gave`; a.Status != state.LotHandedBack || a.Cause != want {
		t.Errorf("lot a %s (%s), want handed back: %s", a.Status, a.Cause, want)
	}
	if n := len(e.turns("a-review0")); n != 0 {
		t.Errorf("%d review requests", n)
	}
}
