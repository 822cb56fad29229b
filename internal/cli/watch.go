package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/signal"
	"time"

	"github.com/cadence-run/cadence/executor/slots"
)

// watchStatus is status -watch: it looks at
// the status every interval and shows it again when it changed, until no
// wave is live on this machine (none in the registry of live waves and,
// for a wave file, no apply holding its lock: one that is still planning),
// then shows it a last time and returns 0. On a terminal that can move the
// cursor (e.liveOn) it redraws the screen; otherwise it prints a new block,
// under a "== status at HH:MM:SS ==" line, each time the status changed.
// A stop signal (stopSignals) ends the watch with 0: stopping a watch is its normal
// end, not a failure. A wave without a state file yet is shown as such
// while its apply plans; any other error of status ends the watch with 1.
func (e *env) watchStatus(file string, all bool, interval time.Duration) ExitCode {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	lay := e.layoutOf(file, "")
	screen := e.liveOn(e.stdout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last := ""
	for {
		// Whether a wave is live is read before the status, so that the
		// block printed as the last one was read after everything ended
		// (read after, an apply ending in between would leave its
		// "Running now" in the last block).
		live, _ := slots.Live(lay.RegistryDir())
		planning := !all && lockHolder(lay.Lock()) != nil
		ended := len(live) == 0 && !planning
		var buf bytes.Buffer
		err := e.showStatus(&buf, file, all, false)
		switch {
		case errors.Is(err, errNoState) && !ended:
			buf.Reset()
			fmt.Fprintf(&buf, "%v\n", err)
		case err != nil:
			fmt.Fprintf(e.stderr, "cadence status: %v\n", err)
			return ExitError
		}
		if !ended {
			// A wave that ended while the status was read: look again at
			// once, so that the last block is drawn as the last one.
			if again, _ := slots.Live(lay.RegistryDir()); len(again) == 0 && (all || lockHolder(lay.Lock()) == nil) {
				continue
			}
		}
		if block := buf.String(); block != last {
			last = block
			e.drawWatch(screen, block, ended, interval)
		}
		if ended {
			return ExitOK
		}
		select {
		case <-ctx.Done():
			if screen {
				fmt.Fprintln(e.stdout)
			}
			return ExitOK
		case <-tick.C:
		}
	}
}

// drawWatch shows one status block: on a screen, the screen cleared and a
// header saying how to stop (none on the last block); else the block
// under a timestamp line, after the earlier ones.
func (e *env) drawWatch(screen bool, block string, last bool, interval time.Duration) {
	now := time.Now().Format(time.TimeOnly)
	if !screen {
		fmt.Fprintf(e.stdout, "== status at %s ==\n%s", now, block)
		if !last {
			fmt.Fprintln(e.stdout)
		}
		return
	}
	fmt.Fprint(e.stdout, "\x1b[H\x1b[2J")
	if last {
		fmt.Fprintf(e.stdout, "Status at %s: no wave is live on this machine.\n\n%s", now, block)
		return
	}
	fmt.Fprintf(e.stdout, "Status at %s, looked at again every %s until no wave is live (Ctrl-C stops).\n\n%s", now, interval, block)
}
