package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cadence-run/cadence/executor/slots"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/planner/render"
	"github.com/cadence-run/cadence/spec"
)

func runStatus(e *env, args []string) ExitCode {
	fs := newFlags(e, "status", "[FILE]", "Show the lot table from the wave's state file, then the live waves and the session\nslots of this machine. -all shows only the machine's live waves and slots, from any folder.\n-watch redraws it until no wave is live on this machine (Ctrl-C stops it too; exit 0).")
	all := fs.Bool("all", false, "the machine's live waves and slots only (no wave file needed)")
	watch := fs.Bool("watch", false, "redraw the status until no wave is live on this machine, then print it a last time (no terminal: a new block each time it changes)")
	interval := fs.Duration("interval", 2*time.Second, "with -watch: how often to look again")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	var file string
	if *all && len(pos) > 0 {
		fmt.Fprintf(e.stderr, "cadence status: -all takes no wave file; got %s\n", strings.Join(pos, " "))
		return ExitUsage
	}
	if !*all {
		var ok bool
		if file, ok = oneFile(e, "status", pos); !ok {
			return ExitUsage
		}
	}
	if *watch {
		switch {
		case fs.json:
			fmt.Fprintln(e.stderr, "cadence status: -watch draws for a person; with -json, run status -json again instead")
			return ExitUsage
		case *interval <= 0:
			fmt.Fprintln(e.stderr, "cadence status: -interval must be more than 0")
			return ExitUsage
		}
		return e.watchStatus(file, *all, *interval)
	}
	if err := e.showStatus(e.stdout, file, *all, fs.json); err != nil {
		fmt.Fprintf(e.stderr, "cadence status: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// errNoState is status's error for a wave file whose wave has no state
// file yet (no apply has run).
var errNoState = errors.New("has no state yet (no apply has run)")

// showStatus writes the status (the wave's state, unless all, then the
// machine's live waves and slots) on w, as JSON when asJSON. A wave file
// that is not there (when its state file is not either) is an error that
// starts "no wave file:"; a wave without a state file wraps errNoState.
func (e *env) showStatus(w io.Writer, file string, all, asJSON bool) error {
	lay := e.layoutOf(file, "")
	home := lay.Home()
	live, _ := slots.Live(lay.RegistryDir())
	held, _ := slots.Inspect(lay.SlotsDir())
	now := time.Now()
	holds, holdsErr := slots.Holds(lay.SlotsDir(), now)
	var st *state.State
	if !all {
		s, _, err := state.Read(lay.StateFile())
		switch {
		case errors.Is(err, state.ErrNotExist):
			if err := noWaveFile("status", file, lay.StateFile()); err != nil {
				return fmt.Errorf("%w; cadence status -all shows this machine's live waves from any folder", err)
			}
			return fmt.Errorf("%s %w: %s", file, errNoState, lay.StateFile())
		case err != nil:
			return err
		}
		st = s
	}
	if asJSON {
		out := map[string]any{"format_version": outputFormatVersion, "live_waves": nonNil(live), "slots": jsonSlots(held), "holds": jsonHolds(holds, now)}
		if holdsErr != nil {
			out["holds_error"] = holdsErr.Error()
		}
		if st != nil {
			out["state"] = st
			out["lock"] = lockHolder(lay.Lock())
			out["requests"] = waitingRequests(lay)
			out["pinned"] = jsonPinned(st)
			out["spend_by_vendor"] = jsonVendors(st.Lots)
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	if st != nil {
		h := lockHolder(lay.Lock())
		status := string(st.Status)
		if h == nil && st.Status == state.WaveRunning {
			// Recorded running, but no apply holds the wave: it was killed.
			status = "interrupted (the apply that ran it stopped; cadence apply " + file + " resumes)"
		}
		fmt.Fprintf(w, "Wave %q: %s (serial %d, updated %s)\n", st.Wave, status, st.Serial, st.Updated.Local().Format(time.DateTime))
		if h != nil {
			fmt.Fprintf(w, "Running now: pid %d since %s\n", h.PID, h.Since.Local().Format(time.TimeOnly))
		} else if st.Stopped != "" {
			fmt.Fprintf(w, "Stopped: %s (cadence apply %s resumes once there is room)\n", st.Stopped, file)
		}
		if h == nil && st.Incident != "" {
			fmt.Fprintf(w, "INCIDENT in the last apply: %s\nCheck what it names; then cadence apply %s goes on.\n", st.Incident, file)
		}
		for _, r := range waitingRequests(lay) {
			fmt.Fprintf(w, "Request waiting for an apply: %s (sent %s by pid %d; cadence apply takes it)\n", describeRequest(r), r.Sent.Local().Format(time.DateTime), r.PID)
		}
		if left := e.leftOf(file, st, h == nil); len(left) > 0 {
			fmt.Fprintf(w, "Left: %s\n", strings.Join(left, "; "))
		}
		for _, nd := range e.notOnBase(file, st) {
			fmt.Fprintf(w, "Not done: %s\n", nd)
		}
		if s := render.PinnedSummary(&planner.Pinned{Cadence: st.CadenceVersion, Agent: st.AgentVersion}); s != "" {
			fmt.Fprintf(w, "Tool: %s\n", s)
		}
		fmt.Fprintln(w)
		stateTable(w, st, h == nil)
		worktreeTable(w, st)
		if stateHasAgents(st) || st.Budget > 0 || st.BudgetMicros > 0 {
			fmt.Fprintln(w)
			budgetLine(w, st.Consumed, st.Budget, st.BudgetMicros)
			vendorLines(w, st.Lots)
		}
		if now := time.Now(); st.ResetAt != nil && st.ResetAt.After(now) {
			fmt.Fprintf(w, "Usage limit until %s.\n", render.ResetLabel(*st.ResetAt, now))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Live waves on this machine (%s):\n", home)
	if len(live) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, lw := range live {
		fmt.Fprintf(w, "  %s  pid %d  since %s  cap %d  %s\n", lw.Wave, lw.PID, lw.Started.Local().Format(time.TimeOnly), lw.MaxSessions, lw.File)
	}
	used := 0
	for _, s := range held {
		if s.Held {
			used++
		}
	}
	fmt.Fprintf(w, "Session slots in use: %d of %d\n", used, len(held))
	for _, s := range held {
		if s.Held && s.Holder != nil {
			fmt.Fprintf(w, "  slot-%d  %s/%s %s  pid %d  since %s\n", s.Index, s.Holder.Wave, s.Holder.Lot, s.Holder.Step, s.Holder.PID, s.Holder.Since.Local().Format(time.TimeOnly))
		}
	}
	holdsLines(w, holds, now)
	if holdsErr != nil {
		holdsUnreadable(w, lay.SlotsDir(), holdsErr)
	}
	return nil
}

// statusPinned is status -json's "pinned": the tool the wave's state
// records (state.State.CadenceVersion, AgentVersion: its first apply's,
// or the last apply -upgrade's), "" for a version not recorded.
type statusPinned struct {
	CadenceVersion string `json:"cadence_version"`
	AgentVersion   string `json:"agent_version"`
}

// jsonPinned is the pinned tool of st; nil when it records none (a state
// written before versions were recorded, or no apply yet).
func jsonPinned(st *state.State) *statusPinned {
	if st.CadenceVersion == "" && st.AgentVersion == "" {
		return nil
	}
	return &statusPinned{CadenceVersion: st.CadenceVersion, AgentVersion: st.AgentVersion}
}

func nonNil(w []slots.WaveEntry) []slots.WaveEntry {
	if w == nil {
		return []slots.WaveEntry{}
	}
	return w
}

// statusSlot is one session slot in status -json (slots.SlotInfo with
// snake_case keys).
type statusSlot struct {
	// Index is n of slot-n.
	Index int `json:"index"`
	// Held says a process holds the slot now; Holder is what it wrote
	// (null when free or unreadable).
	Held   bool          `json:"held"`
	Holder *slots.Holder `json:"holder"`
}

// jsonSlots are the slots of status -json ([] for none).
func jsonSlots(s []slots.SlotInfo) []statusSlot {
	out := make([]statusSlot, 0, len(s))
	for _, si := range s {
		out = append(out, statusSlot{Index: si.Index, Held: si.Held, Holder: si.Holder})
	}
	return out
}

// lockHolder returns who holds a lock file, or nil when it is free.
func lockHolder(path string) *flock.Holder {
	l, err := flock.TryAcquire(path, flock.Holder{PID: os.Getpid(), What: "status probe"})
	if err == nil {
		l.Release()
		return nil
	}
	var he *flock.HeldError
	if errors.As(err, &he) {
		return &he.Holder
	}
	return nil
}

// leftOf says what keeps the wave from being done (state.Left): the lots of
// the state by status (a lot recorded running when no apply runs counts as
// interrupted), plus the lots of the wave file the state has no record of
// (not run yet), when the wave file loads.
func (e *env) leftOf(file string, st *state.State, stopped bool) []string {
	count := map[state.LotStatus]int{}
	for _, l := range st.Lots {
		count[shownStatus(l, stopped)]++
	}
	if w, diags := e.loadWave(file, spec.Options{}); !diags.HasErrors() && w != nil && w.cfg != nil {
		for _, l := range w.cfg.Lots {
			if st.Lots[l.ID] == nil {
				count[state.LotQueued]++
			}
		}
	}
	return state.Left(count, 0)
}

// notOnBase says, for each lot st records done whose integrated commit is
// not on its repository's base (planner.NotOnBase), "<lot>: <reason>", by
// id; none when the wave file cannot be read.
func (e *env) notOnBase(file string, st *state.State) []string {
	w, diags := e.loadWave(file, spec.Options{})
	if diags.HasErrors() || w == nil || w.cfg == nil {
		return nil
	}
	m := e.machine(w.cfg.Wave.Name, file)
	var out []string
	for _, l := range w.cfg.Lots {
		sl := st.Lots[l.ID]
		if l.Repo == nil || sl == nil || sl.Status != state.LotDone || !state.Integrated(sl) {
			continue
		}
		if on, err := m.OnBase(l.Repo, sl.IntegratedSHA); err == nil && !on {
			out = append(out, l.ID+": "+planner.NotOnBase(l.Repo, sl.IntegratedSHA)+"; cadence apply -replace "+l.ID+" runs it again")
		}
	}
	return out
}

// shownStatus is a lot's status as status shows it: a lot recorded running
// when no apply runs (stopped) was interrupted.
func shownStatus(l *state.Lot, stopped bool) state.LotStatus {
	switch {
	case stopped && l.Dropped != "" && l.Status != state.LotDone:
		// Dropped while its step ran, and cadence stopped before handing
		// it back: the next apply does (state.Resume holds it).
		return state.LotHandedBack
	case stopped && l.Status == state.LotRunning:
		return state.LotInterrupted
	}
	return l.Status
}

// stateTable prints the lots of a state file, by id; stopped says no apply
// runs the wave now. The note names a lot's cause, question, blocker, and
// the backup refs of its earlier attempts.
func stateTable(w io.Writer, st *state.State, stopped bool) {
	ids := make([]string, 0, len(st.Lots))
	for id := range st.Lots {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	agents := stateHasAgents(st) // else no TOKENS column
	fmt.Fprintln(tw, tokensColumn(agents, "LOT\tSTATUS\tSTEP\tCOMMITS\tTOKENS\tNOTE"))
	for _, id := range ids {
		l := st.Lots[id]
		step, commits := "", 0
		if n := len(l.Steps); n > 0 {
			s := l.Steps[n-1]
			step = string(s.Kind) + " " + string(s.Status)
		}
		for _, s := range l.Steps {
			commits += s.CommitCount()
		}
		note := l.Cause
		if l.Status == state.LotBlocked {
			note = l.BlockedBy
		}
		if q := l.Pending(); q != nil {
			note = "asks: " + q.Text
		}
		switch {
		case stopped && l.Dropped != "" && l.Status != state.LotDone && l.Status != state.LotHandedBack:
			note = state.DroppedCause + " (" + l.Dropped + "); cadence stopped before handing it back"
		case stopped && l.Status == state.LotRunning:
			note = "cadence stopped while it ran; cadence apply resumes it"
		}
		note = firstLine(strings.TrimSpace(note))
		if n := len(l.Steps); n > 0 && l.Status == state.LotRunning && !stopped {
			if rn := remoteNote(l.Steps[n-1], time.Now()); rn != "" {
				note = strings.TrimPrefix(note+"; "+rn, "; ")
			}
		}
		if _, ux := verdicts(l); ux != "" {
			note = strings.TrimPrefix(note+"; review: "+verdictText(l), "; ")
		}
		if len(l.Backups) > 0 {
			if note != "" {
				note += "; "
			}
			note += "earlier attempts kept under " + strings.Join(l.Backups, ", ")
		}
		fmt.Fprintln(tw, tokensColumn(agents, fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%s", id, shownStatus(l, stopped), step, commits, spec.Tokens(l.Usage().Counted()), note)))
	}
	tw.Flush()
}

// worktreeTable lists the lots whose worktree (the one the state records)
// is there, with its path whole: what the lead cds into to see a lot's
// work. Nothing when no lot has one.
func worktreeTable(w io.Writer, st *state.State) {
	ids := make([]string, 0, len(st.Lots))
	for id, l := range st.Lots {
		if l.Worktree == "" {
			continue
		}
		if _, err := os.Stat(l.Worktree); err == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	sort.Strings(ids)
	fmt.Fprintln(w, "\nWorktrees:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, id := range ids {
		fmt.Fprintf(tw, "  %s\t%s\n", id, st.Lots[id].Worktree)
	}
	tw.Flush()
}

// remoteNote says where a running step runs when it runs on a remote
// worker (state.Step.Remote): the worker, its delivery after a lost one,
// how long since the lead last heard from it (its lease age as the lead
// sees it) and the tokens it reported so far; "" for a step of this
// machine or one that ended.
func remoteNote(s state.Step, now time.Time) string {
	r := s.Remote
	if r == nil || s.Ended != nil {
		return ""
	}
	note := "on worker " + r.Worker
	if r.Delivery > 1 {
		note += fmt.Sprintf(" (delivery %d)", r.Delivery)
	}
	note += ", heard " + now.Sub(r.Heard).Round(time.Second).String() + " ago"
	if r.Tokens > 0 {
		note += ", " + spec.Tokens(r.Tokens).String() + " tokens so far"
	}
	return note
}
