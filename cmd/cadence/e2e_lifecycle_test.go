//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent/claude"
	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// (a) implement commits and reports, the review is conform, the lot is
// integrated into main, and every token is counted in the state file.
func e2eConform(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {
			commit("f.txt", "f").WithUsage(fakeapi.Usage{InputTokens: 1000, OutputTokens: 100, CacheCreationInputTokens: 50, CacheReadInputTokens: 7}),
			writeDone("added f.txt").WithUsage(fakeapi.Usage{InputTokens: 1200, OutputTokens: 30}),
		},
		"a-review0": {review("conform").WithUsage(fakeapi.Usage{InputTokens: 900, OutputTokens: 40})},
	}, waveOpts{})
	base := e.git(e.repo, "rev-parse", "main")
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `a implement \(sonnet\) started`, `a review \(opus\) started`, `Wave "w": 1 of 1 lots done`)

	if got := e.git(e.repo, "log", "--format=%s", base+"..main"); got != "a: add f.txt (a)" {
		t.Errorf("main gained %q, want the lot's commit", got)
	}
	if got := e.git(e.repo, "show", "main:f.txt"); got != "f" {
		t.Errorf("f.txt on main: %q", got)
	}
	st := e.state()
	a := e.lot(st, "a")
	if a.Status != state.LotDone || a.IntegratedSHA == "" || a.IntegratedSHA != e.git(e.repo, "rev-parse", "main") {
		t.Errorf("lot a: status %s, integrated %q; steps %s", a.Status, a.IntegratedSHA, steps(a))
	}
	if st.Status != state.WaveDone {
		t.Errorf("wave status %s", st.Status)
	}
	impl, rev := stepsOf(a, state.StepImplement), stepsOf(a, state.StepReview)
	if len(impl) != 1 || len(rev) != 1 {
		t.Fatalf("steps %s", steps(a))
	}
	if len(impl[0].Commits) != 1 || !strings.Contains(impl[0].Commits[0], "a: add f.txt (a)") {
		t.Errorf("implement commits %q", impl[0].Commits)
	}
	if rev[0].Conform == nil || !*rev[0].Conform {
		t.Errorf("review conform %v", rev[0].Conform)
	}
	// The scripted usage: implement 1000+50+100 and 1200+30, review 900+40.
	if got, want := impl[0].Usage, (state.Usage{Input: 2200, CacheWrite: 50, CacheRead: 7, Output: 130}); got != want {
		t.Errorf("implement usage %+v, want %+v", got, want)
	}
	if got, want := rev[0].Usage, (state.Usage{Input: 900, Output: 40}); got != want {
		t.Errorf("review usage %+v, want %+v", got, want)
	}
	var sum int64
	for _, s := range a.Steps {
		sum += s.Usage.Counted()
	}
	if sum == 0 || st.Consumed.Counted != sum || sum != 2200+50+130+900+40 {
		t.Errorf("consumed.counted %d, steps sum to %d", st.Consumed.Counted, sum)
	}
	if st.Consumed.CacheRead != 7 || st.Consumed.CostMicros <= 0 {
		t.Errorf("consumed %+v", st.Consumed)
	}
	// The sessions were fresh ones: each step its own session id.
	if impl[0].SessionID == "" || impl[0].SessionID == rev[0].SessionID {
		t.Errorf("session ids %q and %q", impl[0].SessionID, rev[0].SessionID)
	}
	for _, q := range e.turns("a-implement0") {
		if q.SessionID != impl[0].SessionID {
			t.Errorf("an implement request of session %q", q.SessionID)
		}
	}
}

// (b) The review is not conform (a major finding); fix pass 1 commits, with
// the finding in its brief; review 1 is conform; the lot is done.
func e2eFixPass(t *testing.T) {
	const text = "f.txt lacks the greeting the brief asks for"
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-review0":    {review("not conform: f.txt is incomplete", finding("major", "f.txt", 1, text))},
		"a-fix1":       {commit("g.txt", "hello"), writeDone("added the greeting")},
		"a-review1":    {review("conform")},
	}, waveOpts{})
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `a review ok`, `a fix \(pass 1\) \(sonnet\) started`, `a review \(pass 1\) \(opus\) started`, `a +done +1 +conform +2 `)

	a := e.lot(e.state(), "a")
	if got, want := steps(a), "implement:ok test:ok review:ok fix1:ok test1:ok review1:ok integrate:ok"; a.Status != state.LotDone || got != want {
		t.Errorf("lot a %s, steps %q, want done with %q", a.Status, got, want)
	}
	if rev := stepsOf(a, state.StepReview); len(rev) == 2 && (rev[0].Conform == nil || *rev[0].Conform || rev[1].Conform == nil || !*rev[1].Conform) {
		t.Errorf("review verdicts %v, %v; want not conform, then conform", rev[0].Conform, rev[1].Conform)
	}
	fix := e.turns("a-fix1")
	if len(fix) == 0 {
		t.Fatal("no fix session")
	}
	if !fix[0].Contains("[major] f.txt:1: "+text) || !fix[0].Contains("fix pass 1") {
		t.Errorf("the fix brief lacks the finding %q", text)
	}
	// The fix is a fresh session, neither the implement's nor the review's.
	for _, m := range []string{"a-implement0", "a-review0"} {
		if q := e.turns(m); len(q) > 0 && q[0].SessionID == fix[0].SessionID {
			t.Errorf("the fix ran in the session of %s", m)
		}
	}
	if got := e.git(e.repo, "log", "--format=%s", "main"); got != "a: add g.txt (a)\na: add f.txt (a)\ninit" {
		t.Errorf("main: %q", got)
	}
}

// (c) Every review finds a blocking issue: after fix_passes = 2 the lot is
// handed back (exit 1) with the findings in the state and in the output.
func e2eFixPassesExhausted(t *testing.T) {
	blocking := func(n int) fakeapi.Script {
		return fakeapi.Script{review("not conform", finding("blocking", "f.txt", 3, fmt.Sprintf("f.txt is still wrong (review %d)", n)))}
	}
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-review0":    blocking(0),
		"a-fix1":       {commit("g1.txt", "1"), writeDone("fix 1")},
		"a-review1":    blocking(1),
		"a-fix2":       {commit("g2.txt", "2"), writeDone("fix 2")},
		"a-review2":    blocking(2),
		"a-fix3":       {commit("g3.txt", "3"), writeDone("fix 3")},
	}, waveOpts{Lot: "  fix_passes = 2"})
	base := e.git(e.repo, "rev-parse", "main")
	r := e.apply()
	r.wantCode(t, 1)
	r.wantOut(t, `a handed-back: review not conform after 2 fix pass\(es\): blocking: f\.txt is still wrong \(review 2\)`,
		`\[blocking\] f\.txt:3 f\.txt is still wrong \(review 2\)`,
		`its work is on branch cadence/w/a`, `a +handed-back +2 +not conform +3 `)

	a := e.lot(e.state(), "a")
	if got, want := steps(a), "implement:ok test:ok review:ok fix1:ok test1:ok review1:ok fix2:ok test2:ok review2:ok"; a.Status != state.LotHandedBack || got != want {
		t.Errorf("lot a %s, steps %q, want handed-back with %q", a.Status, got, want)
	}
	if len(a.Findings) != 1 || a.Findings[0].Severity != "blocking" || a.Findings[0].File != "f.txt" || a.Findings[0].Line != 3 || a.Findings[0].Text != "f.txt is still wrong (review 2)" {
		t.Errorf("findings %+v", a.Findings)
	}
	if n := len(e.turns("a-fix3")); n != 0 {
		t.Errorf("a third fix pass ran (%d requests)", n)
	}
	if got := e.git(e.repo, "rev-parse", "main"); got != base {
		t.Error("main moved for a lot handed back")
	}
	if got := e.git(e.repo, "rev-list", "--count", base+"..cadence/w/a"); got != "3" {
		t.Errorf("the branch has %s commits, want 3", got)
	}
}

// (d) implement asks a question: the lot stops (exit 1) with the command
// that answers it; after `cadence answer`, apply replays the implement step
// in a fresh session with the answer in its brief, and the lot is done.
func e2eQuestion(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {fakeapi.StructuredOutput(map[string]any{"status": "blocked", "summary": "need a decision", "questions": []string{"Which store?"}})},
		// The second session of the same brief (see splitSessions).
		"a-implement0~2": implementScript(),
		"a-review0":      {review("conform")},
	}, waveOpts{})
	r := e.apply()
	r.wantCode(t, 1)
	r.wantOut(t, `a question: Which store\?`, `a asks: Which store\?`, `cadence answer \S*wave\.hcl a "…"`)
	a := e.lot(e.state(), "a")
	if a.Status != state.LotQuestion || len(a.Questions) != 1 || a.Questions[0].Text != "Which store?" || a.Questions[0].Answer != "" {
		t.Fatalf("lot a %s, questions %+v", a.Status, a.Questions)
	}

	ans := e.cadence("answer", e.wave, "a", "Use Redis")
	ans.wantCode(t, 0)
	ans.wantOut(t, `Answered a: "Which store\?"`)
	if q := e.lot(e.state(), "a").Questions; len(q) != 1 || q[0].Answer != "Use Redis" {
		t.Errorf("questions after the answer: %+v", q)
	}

	r = e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	a = e.lot(e.state(), "a")
	impl := stepsOf(a, state.StepImplement)
	if a.Status != state.LotDone || len(impl) != 2 || impl[0].SessionID == impl[1].SessionID {
		t.Fatalf("lot a %s, steps %s", a.Status, steps(a))
	}
	first, second := e.turns("a-implement0"), e.turns("a-implement0~2")
	if len(first) != 1 || len(second) == 0 {
		t.Fatalf("%d requests of the first implement session, %d of the second", len(first), len(second))
	}
	if first[0].Contains("Use Redis") {
		t.Error("the first brief already had the answer")
	}
	if !second[0].Contains("Use Redis") || !second[0].Contains("Which store?") || second[0].SessionID != impl[1].SessionID {
		t.Errorf("the replayed implement (session %s, recorded %s) lacks the question and answer", second[0].SessionID, impl[1].SessionID)
	}
}

// (f) implement commits but never calls StructuredOutput, not even when
// the CLI insists: cadence's one formatting retry resumes the same session
// asking for the report, gets it, and the lot goes on to done.
func e2eFormatRetry(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {
			commit("f.txt", "f"),
			fakeapi.Text("I added f.txt."),
			fakeapi.Text("Everything is committed."), // the answer to the CLI's enforce request
			writeDone("added f.txt"),                 // the answer to cadence's formatting retry
		},
		"a-review0": {review("conform")},
	}, waveOpts{})
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `a implement ok`, `Wave "w": 1 of 1 lots done`)

	a := e.lot(e.state(), "a")
	impl := stepsOf(a, state.StepImplement)
	if a.Status != state.LotDone || len(impl) != 1 {
		t.Fatalf("lot a %s, steps %s", a.Status, steps(a))
	}
	reqs := e.turns("a-implement0")
	if len(reqs) != 4 {
		t.Fatalf("%d implement requests, want 4 (bash, text, enforce, resumed)", len(reqs))
	}
	for i, q := range reqs {
		if q.SessionID != impl[0].SessionID {
			t.Errorf("request %d in session %q, want the step's %q", i, q.SessionID, impl[0].SessionID)
		}
	}
	if !reqs[2].Contains("[structured-output-enforce]") {
		t.Error("the third request is not the CLI's enforce request")
	}
	if !reqs[3].Contains(claude.FormatRetryPrompt) || !reqs[3].Contains("I added f.txt.") {
		t.Error("the fourth request is not a resume (with the history) asking for the report")
	}
	// The tokens of both invocations are counted: 4 turns of 100 in + 20 out.
	if got := impl[0].Usage.Counted(); got != 4*120 {
		t.Errorf("implement counted %d tokens, want %d", got, 4*120)
	}
	if len(impl[0].Commits) != 1 {
		t.Errorf("implement commits %q", impl[0].Commits)
	}
}
