//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2EAPIFailures runs the API-failure scenarios end to end with the
// real CLI (see TestE2E): an overloaded API retried in fresh sessions, one
// that stays overloaded pausing the lot, a credit error stopping the wave
// once, and the exact count of a session that gave up on its report.
// CADENCE_API_BACKOFF keeps the waits between retries short.
func TestE2EAPIFailures(t *testing.T) {
	fakeapi.FindCLI(t)
	for _, sc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"overloaded-retried", e2eOverloadedRetried},
		{"overloaded-pauses", e2eOverloadedPauses},
		{"credit-stops-wave", e2eCreditStopsWave},
		{"schema-gave-up-counted", e2eSchemaGaveUpCounted},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t)
		})
	}
}

// shortBackoff is the first wait between cadence's retries of an
// overloaded session in these tests.
const shortBackoff = "CADENCE_API_BACKOFF=20ms"

// journal is the wave's journal.
func (e *e2e) journal() string {
	b, _ := os.ReadFile(filepath.Join(e.dir, ".cadence", "w", "journal.log"))
	return string(b)
}

// 529 for two sessions, then the API heals: the lot is done in the third
// session, each retry in the journal, every attempt's tokens counted.
func e2eOverloadedRetried(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0":   {commit("f.txt", "f").WithUsage(fakeapi.Usage{InputTokens: 1000, OutputTokens: 50}), fakeapi.Overloaded()},
		"a-implement0~2": {fakeapi.Overloaded()},
		"a-implement0~3": {commit("g.txt", "g").WithUsage(fakeapi.Usage{InputTokens: 2000, OutputTokens: 70}), writeDone("added g.txt")},
		"a-review0":      {review("conform")},
	}, waveOpts{})
	e.env = append(e.env, shortBackoff)
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	st := e.state()
	a := e.lot(st, "a")
	if a.Status != state.LotDone || steps(a) != "implement:interrupted implement:interrupted implement:ok test:ok review:ok integrate:ok" {
		t.Errorf("lot a %s: %s", a.Status, steps(a))
	}
	j := e.journal()
	if n := len(regexp.MustCompile(`API overloaded.*: retry [12]/3 in a fresh session`).FindAllString(j, -1)); n != 2 {
		t.Errorf("%d retries in the journal, want 2:\n%s", n, j)
	}
	// What the fake API sent: 1050 and 2070 in the commits, 120 in the
	// report and 120 in the review; the 529s sent none.
	if st.Consumed.Counted != 3360 || sumSteps(st) != 3360 {
		t.Errorf("counted %d (steps %d), want 3360", st.Consumed.Counted, sumSteps(st))
	}
}

// 529 forever: after its retries the lot pauses (suspended, not failed),
// the wave suspends (exit 3) saying so; once the API heals, a plain apply
// finishes it.
func e2eOverloadedPauses(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {fakeapi.Overloaded().Forever()},
		"a-review0":    {review("conform")},
	}, waveOpts{})
	e.env = append(e.env, shortBackoff)
	r := e.apply()
	r.wantCode(t, 3)
	r.wantOut(t, `\(suspended-api\)`, `The API stayed overloaded .*cadence apply `+regexp.QuoteMeta(e.wave))
	st := e.state()
	a := e.lot(st, "a")
	if st.Status != state.WaveSuspendedAPI || a.Status != state.LotSuspended || !strings.Contains(a.Cause, "529") {
		t.Fatalf("wave %s, lot a %s (%s): %s", st.Status, a.Status, steps(a), a.Cause)
	}
	if n := len(e.turns("a-implement0")); n != 4 {
		t.Errorf("%d implement sessions, want 4 (1 + 3 retries)", n)
	}

	e.srv.SetScript("a-implement0", implementScript())
	r = e.apply()
	r.wantCode(t, 0)
	if a := e.lot(e.state(), "a"); a.Status != state.LotDone {
		t.Errorf("after the API healed: lot a %s (%s)", a.Status, steps(a))
	}
}

// A credit balance too low, with three lots (two at once): the wave stops
// once, the lot running beside is interrupted, the third never starts, no
// lot fails, one message says what to do; a plain apply after the credit
// is topped up finishes all three.
func e2eCreditStopsWave(t *testing.T) {
	credit := fakeapi.HTTPError(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {credit.Forever()},
		"b-implement0": {fakeapi.Hang()},
		"c-implement0": {credit.Forever()},
	}, waveOpts{More: `
repo "web" {
  path = "web"
  test = "true"
}

lot "b" {
  repo  = repo.web
  title = "Add b"
  brief = "Add b.txt."
}

lot "c" {
  repo  = repo.app
  title = "Add c"
  brief = "Add c.txt."
}
`})
	// b runs in a repository of its own, beside a; c waits for a's place.
	web := filepath.Join(e.dir, "web")
	e.git(e.dir, "init", "-q", "-b", "main", web)
	e.writeFile(filepath.Join(web, "README.md"), "# web\n")
	e.git(web, "add", "README.md")
	e.git(web, "commit", "-qm", "init")
	e.env = append(e.env, shortBackoff)
	r := e.apply()
	r.wantCode(t, 3)
	r.wantOut(t, `\(suspended-api\)`)
	r.wantOut(t, `The API refused the sessions for lack of credit \(API error 400: Credit balance is too low\): add credit to the account \(or fix its billing\), then cadence apply `+regexp.QuoteMeta(e.wave)+` resumes every lot\.`)
	// Said for lot a and the wave (in the journal and at the end) only,
	// not lot after lot.
	for _, l := range strings.Split(r.out, "\n") {
		if strings.Contains(l, "Credit balance") && !regexp.MustCompile(`^(\d\d:\d\d:\d\d )?(a |The API refused)`).MatchString(l) {
			t.Errorf("the credit error said elsewhere: %s", l)
		}
	}
	st := e.state()
	if st.Status != state.WaveSuspendedAPI {
		t.Errorf("wave %s", st.Status)
	}
	for _, id := range []string{"a", "b", "c"} {
		if l := st.Lots[id]; l != nil && (l.Status == state.LotFailed || l.Status == state.LotDone) {
			t.Errorf("lot %s %s (%s): %s", id, l.Status, steps(l), l.Cause)
		}
	}
	if n := len(e.turns("c-implement0")); n != 0 {
		t.Errorf("lot c sent %d requests after the wave stopped", n)
	}
	if n := len(e.turns("a-implement0")); n != 1 {
		t.Errorf("lot a sent %d requests, want 1 (no retry)", n)
	}

	for _, id := range []string{"a", "b", "c"} {
		e.srv.SetScript(id+"-implement0", fakeapi.Script{commit(id+".txt", id), writeDone("added " + id + ".txt")})
		e.srv.SetScript(id+"-review0", fakeapi.Script{review("conform")})
	}
	r = e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 3 of 3 lots done`)
}

// A session that gives up on its report after five answers off the schema
// (the CLI's error_max_structured_output_retries): its step counts every
// turn the API sent, though the CLI's own usage leaves out the last. The
// last turn's input is exact; its output is what the CLI's stream said of
// it before the CLI gave up: on a loaded machine the CLI 2.1.328 may end
// before it relays that turn's final count (measured: 13 of its 20 output
// tokens, in 2 runs of 12), so the output is between the four whole turns
// plus one token and all five.
func e2eSchemaGaveUpCounted(t *testing.T) {
	bad := fakeapi.StructuredOutput(map[string]any{"summary": "no status"}).WithUsage(fakeapi.Usage{InputTokens: 100, OutputTokens: 20})
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {bad, bad, bad, bad, bad},
	}, waveOpts{})
	r := e.apply()
	r.wantCode(t, 1)
	st := e.state()
	a := e.lot(st, "a")
	if n := len(e.turns("a-implement0")); n != 5 {
		t.Fatalf("%d requests, want 5", n)
	}
	impl := stepsOf(a, state.StepImplement)
	if len(impl) != 1 {
		t.Fatalf("implement steps %+v", impl)
	}
	u := impl[0].Usage
	if u.Input != 500 || u.Output <= 80 || u.Output > 100 || u.CacheWrite != 0 || st.Consumed.Counted != u.Counted() {
		t.Errorf("implement usage %+v, wave counted %d; want 500 in and 81 to 100 out (the last turn counted)", u, st.Consumed.Counted)
	}
}

// typeIn runs a command line as the user types it, in a shell in the
// wave's folder (so that what the shell expands, such as "$0", is).
func (e *e2e) typeIn(line string) run {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Env = e.dir, e.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r := run{out: string(out), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("sh -c %q: %v", line, err)
	}
	e.t.Logf("%s: exit %d in %v\n%s", line, r.code, r.took.Round(time.Millisecond), indentLines(r.out))
	return r
}
