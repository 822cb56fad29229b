package guard

import (
	"fmt"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// The lead's moves (docs/integration.md, Guards): the guard's lead-side hook reports
// every update of a guarded ref made outside the wave (the lead's commit,
// merge, pull or reset in their checkout; a step's is refused) to the
// guard's witness, in this process, which believes only a reporter that
// does not run below cadence (gitint.OutsideMoves). After a step, a
// guarded ref that moved and whose whole move the witness recorded is the
// lead's: kept, never an incident; the journal says so once per value, and
// lots integrate onto it (their rebase takes the base as it is). A move
// the witness did not record in full (a step that ran git without hooks,
// wrote a ref file, or wrote anything on disk to pose as the lead) is put
// back, as far as the lead's last recorded value, and is an incident: the
// value it found stays under a rescue ref, so a lead whose tool runs no
// git hooks loses nothing. A report the witness refused (a step's process
// posing as the lead) is an incident too, of the first step checked in
// that repository after it (gitint.Refusals).

// leadSplit takes out of moves (a step's foreign moves in repo rp, Old the
// value expected) those the lead made in full, per outside (the witness's
// records since the step began): they are returned as kept. A move the
// lead made only in part is put back to the lead's last value instead of
// Old. Call it with the repository's ledger lock held (rl.mu).
func leadSplit(moves []gitint.RefMove, outside []gitint.OutsideMove) (foreign, kept []gitint.RefMove) {
	for _, m := range moves {
		switch v := gitint.LeadValue(m, outside); v {
		case m.New:
			kept = append(kept, m)
		default:
			m.Old = v
			foreign = append(foreign, m)
		}
	}
	return foreign, kept
}

// leadNotes are the journal lines for the lead's moves kept, each said
// once per wave and value (rl.told). Call it with rl.mu held.
func (rl *repoLedger) leadNotes(rp *spec.Repo, kept []gitint.RefMove) []string {
	var notes []string
	for _, m := range kept {
		key := m.Ref + " " + m.New
		if rl.told[key] {
			continue
		}
		if rl.told == nil {
			rl.told = map[string]bool{}
		}
		rl.told[key] = true
		notes = append(notes, fmt.Sprintf("in repo %s, %s outside the wave (the lead?): kept; lots rebase onto it", rp.Name, m))
	}
	return notes
}

// stepStart is when a step's guard read the refs, for the witness's
// records (whole seconds, the bound kept loose: a report received in the
// second the step began counts).
func stepStart() time.Time { return time.Now().Truncate(time.Second) }
