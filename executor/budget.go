package executor

import (
	"context"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/state"
)

// The wave's two ceilings (Result.Ceiling).
const (
	// CeilingTokens is the wave's budget in counted tokens (budget, apply -budget).
	CeilingTokens = "tokens"
	// CeilingUSD is its dollar ceiling (budget_usd, apply -budget-usd).
	CeilingUSD = "usd"
)

// budget tracks the wave's spending against its ceilings, and whether new
// sessions may start.
type budget struct {
	mu                 sync.Mutex
	limit, limitMicros int64
	spent, spentMicros int64
	cacheRead          int64
	suspend            state.WaveStatus
	ceiling            string // the ceiling reached: CeilingTokens or CeilingUSD
	resetAt            *time.Time
	paused             time.Time // on_quota = "wait": no session before
}

// add counts a session's usage and reports whether a ceiling is now reached.
func (b *budget) add(u state.Usage, micros int64) (counted, cost, cacheRead int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent += u.Counted()
	b.spentMicros += micros
	b.cacheRead += u.CacheRead
	b.checkLocked()
	return b.spent, b.spentMicros, b.cacheRead
}

// check suspends the wave when a ceiling is already reached (a run that
// starts with its budget spent suspends, it is not interrupted).
func (b *budget) check() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.checkLocked()
}

func (b *budget) checkLocked() {
	c := b.reachedLocked()
	if c != "" && b.suspend == "" {
		b.suspend, b.ceiling = state.WaveSuspendedBudget, c
	}
}

// reachedLocked names the ceiling reached, or "".
func (b *budget) reachedLocked() string {
	switch {
	case b.limitMicros > 0 && b.spentMicros >= b.limitMicros:
		return CeilingUSD
	case b.limit > 0 && b.spent >= b.limit:
		return CeilingTokens
	}
	return ""
}

// exhausted reports whether no new session may start for lack of budget.
func (b *budget) exhausted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reachedLocked() != ""
}

// why says why no session may start: which ceiling is reached, or the
// usage limit; "" when nothing stops them.
func (b *budget) why() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch c := b.reachedLocked(); {
	case c == CeilingUSD:
		return "the wave's dollar budget (budget_usd) is spent"
	case c == CeilingTokens:
		return "the wave's budget is spent"
	case b.suspend == state.WaveSuspendedQuota:
		return "the agent hit a usage limit"
	case b.suspend == state.WaveSuspendedAPI:
		return "the wave stopped on an API failure"
	}
	return ""
}

// reached names the ceiling that suspended the wave, or "".
func (b *budget) reached() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ceiling
}

// DefaultQuotaWait is how long on_quota = "wait" pauses when the limit's
// message gives no reset time.
const DefaultQuotaWait = 5 * time.Minute

// pauseUntil makes new sessions wait until reset (or DefaultQuotaWait from
// now when it is unknown).
func (b *budget) pauseUntil(reset *time.Time, now time.Time) {
	until := now.Add(DefaultQuotaWait)
	if reset != nil {
		until = *reset
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if until.After(b.paused) {
		b.paused = until
	}
}

// waitQuota blocks while new sessions are paused for a usage limit; note is
// told the time once per wait.
func (b *budget) waitQuota(ctx context.Context, note func(time.Time)) error {
	b.mu.Lock()
	until := b.paused
	b.mu.Unlock()
	d := time.Until(until)
	if d <= 0 {
		return nil
	}
	note(until)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// quota suspends the wave for a usage limit.
func (b *budget) quota(reset *time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.suspend, b.resetAt = state.WaveSuspendedQuota, reset
}

// suspendAPI suspends the wave for an API failure (apifail.go), unless
// it is suspended already.
func (b *budget) suspendAPI() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.suspend == "" {
		b.suspend = state.WaveSuspendedAPI
	}
}

func (b *budget) stopped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.suspend != ""
}

func (b *budget) suspendStatus() state.WaveStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.suspend
}
