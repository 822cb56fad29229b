package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// progress shows a run as it goes: one line per transition (and a journal
// file with the same lines); on a terminal, a live block of the running
// steps under them; with -json, one JSON event per line instead.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	json    bool
	live    bool
	journal *os.File
	// journalPath is opened at the first line to write (so a run refused
	// on its way in leaves no file).
	journalPath string
	running     map[string]*liveStep
	counts      map[string]int
	// started are the lots running now: a lot that ends without having
	// started (blocked, dropped while queued) is not taken off "running".
	started map[string]bool
	tokens  int64
	total   int // lots this run may work on
	budget  int64
	drawn   int // lines of the live block on screen
	ticker  *time.Ticker
	done    chan struct{}
}

type liveStep struct {
	lot, step, model string
	pass             int
	since            time.Time
	usage            state.Usage
}

// liveOn says whether a live block may be drawn on w: w is a terminal
// that can move the cursor (TERM is not "dumb"). Colour is another matter
// (colorOn): NO_COLOR and -no-color leave the live block on; without a
// terminal (a pipe, a file, CI) or with TERM=dumb there is none, and
// apply prints one line per transition.
func (e *env) liveOn(w io.Writer) bool {
	return e.getenv("TERM") != "dumb" && e.terminal(w)
}

func newProgress(e *env, asJSON bool, journalPath string) *progress {
	p := &progress{w: e.stdout, json: asJSON, running: map[string]*liveStep{}, counts: map[string]int{}, started: map[string]bool{}, done: make(chan struct{}), journalPath: journalPath}
	p.live = !asJSON && e.liveOn(e.stdout)
	if p.live {
		// The goroutine keeps its own ticker: stopLive sets p.ticker to
		// nil, maybe before the goroutine first looks at it.
		ticker := time.NewTicker(time.Second)
		p.ticker = ticker
		go func() {
			for {
				select {
				case <-ticker.C:
					p.mu.Lock()
					p.redraw()
					p.mu.Unlock()
				case <-p.done:
					return
				}
			}
		}()
	}
	return p
}

// event takes an executor event (called from many goroutines).
func (p *progress) event(ev executor.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		b, _ := json.Marshal(ev)
		fmt.Fprintln(p.w, string(b))
	}
	key := ev.Lot
	switch ev.Kind {
	case executor.EvStepStart:
		p.running[key] = &liveStep{lot: ev.Lot, step: string(ev.Step), model: ev.Model, pass: ev.Pass, since: ev.Time}
	case executor.EvProgress:
		if s := p.running[key]; s != nil {
			s.usage = ev.Usage
		}
		return
	case executor.EvStepEnd:
		delete(p.running, key)
		p.tokens += ev.Usage.Counted()
	case executor.EvLotStart:
		p.counts["running"]++
		p.started[ev.Lot] = true
	case executor.EvLotEnd:
		if p.started[ev.Lot] {
			p.counts["running"]--
			delete(p.started, ev.Lot)
		}
		p.counts[ev.Status]++
	}
	line := formatEvent(ev)
	if line == "" {
		return
	}
	if p.journal == nil && p.journalPath != "" {
		if err := os.MkdirAll(filepath.Dir(p.journalPath), 0o700); err == nil {
			p.journal, _ = os.OpenFile(p.journalPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		}
		p.journalPath = ""
	}
	if p.journal != nil {
		fmt.Fprintln(p.journal, ev.Time.Format(time.RFC3339)+" "+line)
	}
	if p.json {
		return
	}
	p.clear()
	fmt.Fprintln(p.w, ev.Time.Format("15:04:05")+" "+line)
	p.redraw()
}

// note prints a line of cadence's own.
func (p *progress) note(msg string) {
	p.event(executor.Event{Time: time.Now(), Kind: executor.EvOutput, Message: msg})
}

// formatEvent is the one-line form of an event ("" for none).
func formatEvent(ev executor.Event) string {
	step := string(ev.Step)
	if ev.Pass > 0 {
		step += fmt.Sprintf(" (pass %d)", ev.Pass)
	}
	switch ev.Kind {
	case executor.EvWave:
		return "wave " + ev.Status
	case executor.EvLotStart:
		return ev.Lot + " started"
	case executor.EvStepStart:
		if ev.Model != "" {
			return fmt.Sprintf("%s %s (%s) started", ev.Lot, step, ev.Model)
		}
		return fmt.Sprintf("%s %s started", ev.Lot, step)
	case executor.EvStepEnd:
		s := fmt.Sprintf("%s %s %s", ev.Lot, step, ev.Status)
		if n := ev.Usage.Counted(); n > 0 {
			s += fmt.Sprintf(", %s tokens", spec.Tokens(n))
		}
		if ev.Message != "" {
			s += ": " + visibleControls(ev.Message, false)
		}
		return s
	case executor.EvLotEnd:
		if ev.Message != "" {
			return fmt.Sprintf("%s %s: %s", ev.Lot, ev.Status, firstLine(ev.Message))
		}
		return ev.Lot + " " + ev.Status
	case executor.EvOutput:
		if ev.Lot == "" {
			return visibleControls(ev.Message, true)
		}
		return fmt.Sprintf("%s %s output:\n%s", ev.Lot, ev.Step, indent(ev.Message, "    | "))
	}
	return ""
}

// firstLine is the first line of user text s (a cause, a message), with
// " …" when more lines follow, its control characters made visible.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return visibleControls(s[:i], false) + " …"
	}
	return visibleControls(s, false)
}

// indent puts prefix before each line of user text s (a step's output),
// its control characters but tabs made visible.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + visibleControls(lines[i], true)
	}
	return strings.Join(lines, "\n")
}

// clear erases the live block (terminal only).
func (p *progress) clear() {
	if p.live && p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA\x1b[J", p.drawn)
		p.drawn = 0
	}
}

// redraw draws the live block: one line per running step, and a footer.
func (p *progress) redraw() {
	if !p.live {
		return
	}
	p.clear()
	keys := make([]string, 0, len(p.running))
	for k := range p.running {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	now := time.Now()
	for _, k := range keys {
		s := p.running[k]
		model, tokens := "", "" // a command step has neither
		if s.model != "" {
			model, tokens = " ("+s.model+")", "  "+spec.Tokens(s.usage.Counted()).String()+" tokens"
		}
		fmt.Fprintf(p.w, "  ▸ %-16s %s%s  %s%s\n", s.lot, s.step, model, spec.FormatDuration(now.Sub(s.since)), tokens)
	}
	ended := 0
	for k, n := range p.counts {
		if k != "running" {
			ended += n
		}
	}
	tokens := "" // none spent and no budget: no token count
	if p.tokens > 0 || p.budget > 0 {
		tokens = " · " + spec.Tokens(p.tokens).String() + " tokens"
	}
	if p.budget > 0 {
		tokens += " of " + spec.Tokens(p.budget).String()
	}
	fmt.Fprintf(p.w, "  %d done · %d running · %d queued · %d failed or handed back%s\n",
		p.counts["done"], p.counts["running"], max(0, p.total-ended-p.counts["running"]),
		p.counts["failed"]+p.counts["handed-back"], tokens)
	p.drawn = len(keys) + 1
}

// stopLive erases the live block and stops redrawing.
func (p *progress) stopLive() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ticker != nil {
		p.ticker.Stop()
		close(p.done)
		p.ticker = nil
	}
	p.clear()
	p.live = false
}

func (p *progress) close() {
	p.stopLive()
	if p.journal != nil {
		p.journal.Close()
	}
}
