package executor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// What cadence does when a session ends on an API failure (agent.Outcome.API),
// after the agent CLI's own retries (the agent's max_retries):
//
//   - overloaded (529, 5xx) or a connection lost on the way: the step runs
//     again in a fresh session after a wait, APIRetries times at most, the
//     waits doubling from Options.APIBackoff (DefaultAPIBackoff) with up to
//     a quarter more at random, all within the step's timeout counted from
//     its first session. Each attempt is a step of its own in the state
//     (interrupted, its tokens counted) and each retry a line of the
//     journal. When the retries are spent, or the next wait would pass the
//     timeout, the lot is suspended and the wave suspends (suspended-api):
//     no new session starts, running ones go on; a plain apply resumes.
//   - unreachable, credentials refused, credit or billing: every session
//     would fail alike, so the wave stops at once: the lot is suspended,
//     running sessions are stopped (their lots interrupted), no new session
//     starts, the wave suspends (suspended-api) with one message that says
//     what to fix; a plain apply resumes.

// DefaultAPIBackoff is the first wait before a fresh session retries an
// overloaded step; each later wait doubles.
const DefaultAPIBackoff = 30 * time.Second

// APIRetries bounds the fresh sessions a step gets after an overloaded
// (or connection-lost) session.
const APIRetries = 3

// apiTries are the API retries of one step (all its sessions): how many
// were made and when its first session started.
type apiTries struct {
	n     int
	start time.Time
	// wait is the wait before the retry apiOutcome decided (0: none).
	wait time.Duration
}

// next is the wait before the step's next retry, or false when its retries
// are spent or the wait would end past the step's timeout (0: none) from
// its first session. base is the first wait (0: DefaultAPIBackoff).
func (t *apiTries) next(now time.Time, base, timeout time.Duration) (time.Duration, bool) {
	if t.n >= APIRetries {
		return 0, false
	}
	if base <= 0 {
		base = DefaultAPIBackoff
	}
	wait := base << t.n
	wait += time.Duration(rand.Int64N(int64(wait)/4 + 1)) // jitter: sessions of several lots do not retry at once
	if timeout > 0 && now.Add(wait).After(t.start.Add(timeout)) {
		return 0, false
	}
	t.n++
	return wait, true
}

// APIStopCause is the cause recorded on lots whose session cadence stopped
// because the wave stopped on an API failure (the failure itself is said
// once, on the lot that met it and in the run's end).
const APIStopCause = "stopped by cadence: the wave stopped on an API failure"

// APINone is agent.APINone, for the executor's own files.
const APINone = agent.APINone

// apiStop is the API failure that stopped the wave, set once.
type apiStop struct {
	mu    sync.Mutex
	msg   string
	class agent.APIFailure
	// sessions ends when the wave stops on an API failure: the running
	// sessions are stopped with it (runner.sessionCtx).
	sessions context.Context
	stop     context.CancelFunc
}

// apiAdvice says what the user does about an API failure of class c whose
// agent said cause, in one sentence without its ending: the caller adds
// how to resume.
func apiAdvice(c agent.APIFailure, cause string, retries int, took time.Duration) string {
	switch c {
	case agent.APIOverloaded:
		return fmt.Sprintf("The API stayed overloaded through %d retries over %s (%s): wait for it", retries, spec.FormatDuration(took.Round(time.Second)), cause)
	case agent.APINetwork:
		return fmt.Sprintf("The connection to the API kept failing through %d retries over %s (%s): check the network", retries, spec.FormatDuration(took.Round(time.Second)), cause)
	case agent.APIUnreachable:
		return fmt.Sprintf("The API cannot be reached (%s): check its address (ANTHROPIC_BASE_URL), the proxy and the network", cause)
	case agent.APIAuth:
		return fmt.Sprintf("The API refused the agent's credentials (%s): fix the API key or the agent's login", cause)
	case agent.APICredit:
		return fmt.Sprintf("The API refused the sessions for lack of credit (%s): add credit to the account (or fix its billing)", cause)
	}
	return cause
}

// stopOnAPI suspends the wave on an API failure of class c (its message
// msg, apiAdvice's): no new session starts; with stopSessions, the
// running ones are stopped too. The first failure's message is kept.
func (r *runner) stopOnAPI(c agent.APIFailure, msg string, stopSessions bool) {
	r.api.mu.Lock()
	first := r.api.msg == ""
	if first {
		r.api.msg, r.api.class = msg, c
	}
	r.api.mu.Unlock()
	r.budget.suspendAPI()
	if first {
		r.emit(Event{Kind: EvOutput, Message: msg + "; the wave stops"})
	}
	if stopSessions {
		r.api.stop()
	}
}

// apiStopped is the message of the API failure that stopped the wave, or "".
func (r *runner) apiStopped() string {
	r.api.mu.Lock()
	defer r.api.mu.Unlock()
	return r.api.msg
}

// sessionCtx is the context of a session of a lot whose context is ctx:
// it ends with ctx or when the wave stops on an API failure. Call the
// returned func when the session is over.
func (r *runner) sessionCtx(ctx context.Context) (context.Context, func()) {
	sctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(r.api.sessions, cancel)
	return sctx, func() { stop(); cancel() }
}

// apiOutcome is what a session that ended on an API failure does to its
// step (tries are the step's API retries so far, timeout its limit): a
// retry, its wait set in tries and noted in the journal (true); or the end
// of the lot's run, suspended, the wave stopped (apiAdvice).
func (lr *lotRun) apiOutcome(kind state.StepKind, out Outcome, tries *apiTries, timeout time.Duration) (state.Outcome, bool) {
	r := lr.r
	if out.API.Transient() && r.apiStopped() == "" {
		if wait, ok := tries.next(r.now(), r.o.APIBackoff, timeout); ok {
			what := "API overloaded"
			if out.API == agent.APINetwork {
				what = "API connection failed"
			}
			r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: fmt.Sprintf("%s (%s): retry %d/%d in a fresh session after %s",
				what, out.Cause, tries.n, APIRetries, spec.FormatDuration(wait))})
			tries.wait = wait
			return state.Outcome{}, true
		}
	}
	msg := apiAdvice(out.API, out.Cause, tries.n, r.now().Sub(tries.start))
	r.stopOnAPI(out.API, msg, out.API.StopsWave())
	return state.Outcome{Kind: state.OutcomeAPI, Detail: msg}, false
}

// waitRetry waits tries.wait before a step's retry (no session slot is
// held meanwhile). It reports false when the lead's stop or drop, or
// cadence's cancel, cut it short; a wave stopped on an API failure ends it
// early too (the retry then starts no session: the wave is suspended).
func (lr *lotRun) waitRetry(ctx context.Context, tries *apiTries) bool {
	t := time.NewTimer(tries.wait)
	defer t.Stop()
	tries.wait = 0
	select {
	case <-t.C:
	case <-lr.r.api.sessions.Done():
	case <-lr.waitCtx(ctx).Done():
		return false
	}
	return true
}
