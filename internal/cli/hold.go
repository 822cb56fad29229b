package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cadence-run/cadence/executor/slots"
)

// defaultHoldTTL is how long a hold lasts when -ttl is not given.
const defaultHoldTTL = 2 * time.Hour

func runHold(e *env, args []string) ExitCode {
	fs := newFlags(e, "hold", "LABEL", "Reserve one session slot of this machine for a session cadence does not run (yours, in\nClaude Code by hand): every wave on the machine runs one session fewer at a time while the\nhold lives. Holding LABEL again renews it (a new expiry). An expired hold takes no slot but\nstays listed in cadence status for 24 h. cadence release LABEL frees it.")
	ttl := fs.Duration("ttl", defaultHoldTTL, "how long the hold lasts (from now; a renewal counts from now too)")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if why := fromStep(e.getenv); why != "" {
		fmt.Fprintf(e.stderr, "cadence hold: refused: %s\n", why)
		return ExitApplyRefused
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "cadence hold: usage: cadence hold LABEL [-ttl 2h]")
		return ExitUsage
	}
	if *ttl <= 0 {
		fmt.Fprintln(e.stderr, "cadence hold: -ttl must be more than 0")
		return ExitUsage
	}
	if err := slots.ValidLabel(pos[0]); err != nil {
		fmt.Fprintf(e.stderr, "cadence hold: %v\n", err)
		return ExitUsage
	}
	dir := e.layoutOf("", "").SlotsDir()
	now := time.Now()
	h, renewed, err := slots.TakeHold(dir, pos[0], *ttl, now)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence hold: %v\n", err)
		return ExitError
	}
	live, _ := slots.LiveHolds(dir, now)
	if fs.json {
		_ = writeJSON(e.stdout, map[string]any{"format_version": outputFormatVersion, "hold": statusHoldOf(h, now), "renewed": renewed, "live_holds": live})
		return ExitOK
	}
	verb := "taken"
	if renewed {
		verb = "renewed"
	}
	fmt.Fprintf(e.stdout, "Hold %q %s until %s (%s). %s on this machine: each wave runs that many sessions fewer at a time.\n",
		h.Label, verb, h.Expires.Local().Format(time.DateTime), ttl, holdsCount(live))
	return ExitOK
}

func runRelease(e *env, args []string) ExitCode {
	fs := newFlags(e, "release", "LABEL", "Free the session slot the hold LABEL reserves (cadence hold), live or expired.")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if why := fromStep(e.getenv); why != "" {
		fmt.Fprintf(e.stderr, "cadence release: refused: %s\n", why)
		return ExitApplyRefused
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "cadence release: usage: cadence release LABEL")
		return ExitUsage
	}
	dir := e.layoutOf("", "").SlotsDir()
	now := time.Now()
	err := slots.ReleaseHold(dir, pos[0], now)
	if errors.Is(err, slots.ErrNoHold) {
		fmt.Fprintf(e.stderr, "cadence release: no hold %q on this machine (cadence status -all lists the holds)\n", pos[0])
		return ExitError
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence release: %v\n", err)
		return ExitError
	}
	live, _ := slots.LiveHolds(dir, now)
	if fs.json {
		_ = writeJSON(e.stdout, map[string]any{"format_version": outputFormatVersion, "released": pos[0], "live_holds": live})
		return ExitOK
	}
	fmt.Fprintf(e.stdout, "Hold %q released; %s left on this machine.\n", pos[0], holdsCount(live))
	return ExitOK
}

// statusHold is one hold in status -json and hold -json.
type statusHold struct {
	// Label names the hold; Since is when it was first taken, Expires
	// when it stops taking a slot.
	Label   string    `json:"label"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	// Expired says it takes no slot any more (listed for 24 h after).
	Expired bool `json:"expired"`
}

func statusHoldOf(h slots.Hold, now time.Time) statusHold {
	return statusHold{Label: h.Label, Since: h.Since, Expires: h.Expires, Expired: h.Expired(now)}
}

// jsonHolds are the holds of status -json ([] for none).
func jsonHolds(hs []slots.Hold, now time.Time) []statusHold {
	out := make([]statusHold, 0, len(hs))
	for _, h := range hs {
		out = append(out, statusHoldOf(h, now))
	}
	return out
}

// holdsLines prints the holds of status: one line each, the expired ones
// flagged with what to do.
func holdsLines(w io.Writer, hs []slots.Hold, now time.Time) {
	if len(hs) == 0 {
		return
	}
	fmt.Fprintf(w, "Holds (cadence hold; each takes a session slot from every wave while live):\n")
	width := 0
	for _, h := range hs {
		width = max(width, len(shownLabel(h.Label)))
	}
	for _, h := range hs {
		label := shownLabel(h.Label)
		note := "live"
		if h.Expired(now) {
			note = "EXPIRED (takes no slot; cadence hold " + label + " renews it, cadence release " + label + " drops it)"
		}
		fmt.Fprintf(w, "  %-*s  since %s  expires %s  %s\n", width, label, h.Since.Local().Format(time.DateTime), h.Expires.Local().Format(time.DateTime), note)
	}
}

// shownLabel is a hold's label as status prints it: quoted (escapes
// visible) when it is not one cadence hold takes, so a hand-written
// holds file cannot draw on the terminal or fake a line.
func shownLabel(l string) string {
	if slots.ValidLabel(l) == nil {
		return l
	}
	return strconv.Quote(l)
}

// holdsUnreadable is status's line for a holds file it cannot read.
func holdsUnreadable(w io.Writer, dir string, err error) {
	fmt.Fprintf(w, "Holds: the holds file cannot be read (%v): no hold counts against the caps while it is so; remove %s to clear every hold\n", err, filepath.Join(dir, "holds.json"))
}

// holdsCount is "1 live hold", "2 live holds".
func holdsCount(n int) string {
	if n == 1 {
		return "1 live hold"
	}
	return fmt.Sprintf("%d live holds", n)
}
