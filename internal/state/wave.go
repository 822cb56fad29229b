package state

import "strconv"

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

// WaveEnd is the wave's status at the end of a run (DESIGN.md §6, the exit
// codes of §2 follow it): interrupted when cadence was stopped; suspended
// when the budget or a usage limit suspended it; done only when every lot of
// the wave file is done; partial when every selected lot is done but
// -target left others unselected; otherwise needs-lead (lots handed back,
// failed, waiting for an answer, blocked, or interrupted by something
// outside them that the lead has to see to).
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

// Left counts what keeps a wave from being done, in words for the end line
// and `cadence status`: each entry is "<n> <what>" (for example "2 need the
// lead", "1 waits for an answer"), in a fixed order; nil when nothing is
// left.
func Left(lots map[LotStatus]int, outside int) []string {
	var out []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			out = append(out, "1 "+one)
		case n > 1:
			out = append(out, strconv.Itoa(n)+" "+many)
		}
	}
	add(lots[LotHandedBack]+lots[LotFailed], "needs the lead", "need the lead")
	add(lots[LotQuestion], "waits for an answer", "wait for an answer")
	add(lots[LotBlocked], "is blocked", "are blocked")
	add(lots[LotInterrupted], "was interrupted", "were interrupted")
	add(lots[LotSuspended], "is suspended", "are suspended")
	add(lots[LotQueued]+lots[LotRunning], "has not run", "have not run")
	add(outside, "not selected by -target", "not selected by -target")
	return out
}
