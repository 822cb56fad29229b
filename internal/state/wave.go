package state

import (
	"strconv"
	"strings"
)

// RunEnd is what the end of a run knows about its wave, for WaveEnd.
type RunEnd struct {
	// Interrupted: cadence was stopped (signal, stop request, incident).
	Interrupted bool
	// Suspended is the suspended status the budget or a usage limit gave
	// the wave ("" when none).
	Suspended WaveStatus
	// Lots counts the run's lots (the plan's, selected by -target) by
	// status at the end.
	Lots map[LotStatus]int
	// Total is the number of the plan's lots; Outside the lots of the wave
	// file that -target left unselected.
	Total, Outside int
}

// WaveEnd is the wave's status at the end of a run (docs/running.md; the
// exit codes of docs/commands.md follow it): interrupted when cadence was
// stopped; suspended when the budget or a usage limit suspended it; done
// only when every lot of the wave file is done; partial when every
// selected lot is done but -target left others unselected; otherwise
// needs-lead (lots handed back, failed, waiting for an answer, blocked, or
// interrupted by something outside them that the lead has to see to).
func WaveEnd(e RunEnd) WaveStatus {
	switch {
	case e.Interrupted:
		return WaveInterrupted
	case e.Suspended != "":
		return e.Suspended
	case e.Lots[LotDone] == e.Total && e.Outside > 0:
		return WavePartial
	case e.Lots[LotDone] == e.Total:
		return WaveDone
	}
	return WaveNeedsLead
}

// Left says what keeps a wave from being done, in words for the end line
// and `cadence status`, in a fixed order: the lots that need the lead (with
// their kinds: handed back, failed, waiting for an answer, blocked), then
// those interrupted, suspended, running, not run yet, and the lots -target left
// unselected; for example ["3 need the lead (1 failed, 2 blocked)", "18 not
// selected by -target"]. Nil when nothing is left.
func Left(lots map[LotStatus]int, outside int) []string {
	var out, lead []string
	add := func(to *[]string, n int, what string) {
		if n > 0 {
			*to = append(*to, strconv.Itoa(n)+" "+what)
		}
	}
	add(&lead, lots[LotHandedBack], "handed back")
	add(&lead, lots[LotFailed], "failed")
	add(&lead, lots[LotQuestion], "waiting for an answer")
	add(&lead, lots[LotBlocked], "blocked")
	if n := lots[LotHandedBack] + lots[LotFailed] + lots[LotQuestion] + lots[LotBlocked]; n > 0 {
		add(&out, n, "need the lead ("+strings.Join(lead, ", ")+")")
	}
	add(&out, lots[LotInterrupted], "interrupted")
	add(&out, lots[LotSuspended], "suspended")
	add(&out, lots[LotRunning], "running")
	add(&out, lots[LotQueued], "not run yet")
	add(&out, outside, "not selected by -target")
	return out
}
