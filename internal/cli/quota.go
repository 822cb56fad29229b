package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/planner/render"
	"github.com/cadence-run/cadence/spec"
)

// quotaGate decides what apply does before the reset time of the usage
// limit that suspended the last run (the state's reset_at, in the plan):
//
//   - none recorded, its time passed, -ignore-quota, or no agent session to
//     run: nothing; it returns nil, goOn;
//   - on_quota = "wait": the run waits for it before any session (Ctrl-C
//     ends the wait); it returns the time, goOn;
//   - on_quota = "suspend": apply stops at once, before any session, saying
//     when to come back; it returns exit 3 (ExitApplySuspended).
//
// now is the clock.
func (e *env) quotaGate(w *wave, p *planner.Plan, ignore bool, now time.Time, out io.Writer) (*time.Time, ExitCode) {
	if p.ResetAt == nil || !p.ResetAt.After(now) || ignore || p.Totals.PendingAgent == 0 {
		return nil, goOn
	}
	if p.OnQuota == spec.OnQuotaWait {
		fmt.Fprintf(out, "\nThe agent's usage limit lasts until %s: sessions wait for it (on_quota = \"wait\"; Ctrl-C stops).\n", render.ResetLabel(*p.ResetAt, now))
		return p.ResetAt, goOn
	}
	fmt.Fprintf(out, "\nThe agent's usage limit lasts until %s: no session starts before. Apply again after %s (cadence apply %s), or add -ignore-quota to try now.\n",
		render.ResetLabel(*p.ResetAt, now), p.ResetAt.Local().Format(time.RFC1123), w.file)
	return nil, ExitApplySuspended
}
