package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

func runDrop(e *env, args []string) ExitCode {
	fs := newFlags(e, "drop", "[FILE] LOT...", "Hand lots back as dropped by the lead, with their commits kept; their dependents are blocked.\nOn a live apply (from another terminal): a queued lot never starts, a running lot ends its\ncurrent step first (-now: the step is stopped and recorded interrupted). With no apply live,\nthe state records it at once and the next apply does not run the lots. A done lot, one\nalready handed back or failed, and one being integrated are refused. FILE defaults to wave.hcl.")
	now := fs.Bool("now", false, "stop a running lot's step at once instead of letting it end")
	wait := fs.Duration("wait", time.Minute, "how long to wait for the live apply to take the request")
	var vars, varFiles listFlag
	fs.varFlags(&vars, &varFiles)
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if why := fromStep(e.getenv); why != "" {
		fmt.Fprintf(e.stderr, "cadence drop: refused: %s\n", why)
		return ExitApplyRefused
	}
	file, ids := waveFileFirst(pos)
	if len(ids) == 0 {
		fmt.Fprintln(e.stderr, "cadence drop: usage: cadence drop [FILE] LOT... (FILE: wave.hcl when not given)")
		return ExitUsage
	}
	lay := e.layoutOf(file, "")
	if err := noWaveFile("drop", file, lay.StateFile()); err != nil {
		fmt.Fprintf(e.stderr, "cadence drop: %v\n", err)
		return ExitError
	}
	d, err := steerClient(lay, "drop").Send(context.Background(), control.Request{Kind: control.KindDrop, Lots: ids, Now: *now, PID: os.Getpid()}, *wait)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence drop: %v\n", err)
		return ExitError
	}
	out := steerOutput{FormatVersion: outputFormatVersion, File: file, Live: d.Live, PID: d.Ack.PID, Queued: d.Queued, Results: d.Ack.Results, Note: d.Ack.Note}
	switch {
	case d.Queued:
		out.Note = queuedNote(lay, *wait)
	case d.Lock != nil:
		defer d.Lock.Release()
		w, diags := e.loadWave(file, spec.Options{Vars: vars, VarFiles: varFiles})
		if diags.HasErrors() {
			e.writeDiags(e.stderr, diags, w.loader.Files, fs.json)
			return ExitError
		}
		res := dropAtRest(w.cfg, file, lay.StateFile(), ids)
		out.Results, out.PID = res, os.Getpid()
		out.Note = "no apply is live: recorded in the state; the next apply does not run the dropped lots"
		if d.Ended {
			out.Note = "the running apply ended before taking the request: this command recorded it in the state; the next apply does not run the dropped lots"
		}
	}
	return steerReport(e, "drop", fs.json, out)
}

// steerReport prints a steering command's outcome and returns its exit
// code: 0 when every lot's request was taken (or, for stop, the stop),
// 1 otherwise, and 1 when the request is still queued.
func steerReport(e *env, verb string, asJSON bool, out steerOutput) ExitCode {
	code := ExitOK
	for _, r := range out.Results {
		if !r.Taken {
			code = ExitError
		}
	}
	if out.Queued {
		code = ExitError
	}
	if out.Results == nil {
		out.Results = []control.Result{}
	}
	if asJSON {
		if err := writeJSON(e.stdout, out); err != nil {
			fmt.Fprintf(e.stderr, "cadence %s: %v\n", verb, err)
			return ExitError
		}
		return code
	}
	if out.Live {
		fmt.Fprintf(e.stdout, "The running apply (pid %d) took the request.\n", out.PID)
	}
	printResults(e, verb, out.Results)
	if out.Note != "" {
		w := e.stdout
		if out.Queued {
			w = e.stderr
		}
		fmt.Fprintln(w, out.Note)
	}
	return code
}

// dropAtRest drops the lots ids of the wave file, no apply being live
// (the caller holds the wave lock): each id must be a lot of the wave
// file; each is handed back unless state.Droppable refuses.
func dropAtRest(cfg *spec.Config, file, statePath string, ids []string) []control.Result {
	store, err := state.OpenStore(statePath)
	if err != nil {
		return []control.Result{{Lot: ids[0], Reason: err.Error()}}
	}
	defer store.Close()
	// A wave never applied gets its name in the new state (status shows it).
	var named bool
	store.View(func(st *state.State) { named = st.Wave != "" })
	if !named {
		if err := store.UpdateWave(func(st *state.State) { st.Wave = cfg.Wave.Name }); err != nil {
			return []control.Result{{Lot: ids[0], Reason: err.Error()}}
		}
	}
	var rs []control.Result
	for _, id := range ids {
		if cfg.Lot(id) == nil {
			rs = append(rs, control.Result{Lot: id, Reason: "no lot " + id + " in " + file})
			continue
		}
		rs = append(rs, executor.DropAtRest(store, id, time.Now()))
	}
	return rs
}

func runStop(e *env, args []string) ExitCode {
	fs := newFlags(e, "stop", "[FILE]", "Stop a live apply after its current steps: no new step or lot starts, running steps end,\nthen the wave ends interrupted (exit 1) and the next apply resumes it. A stop lasts one run;\ndropped lots stay dropped. Without a live apply there is nothing to stop (exit 1).")
	wait := fs.Duration("wait", time.Minute, "how long to wait for the live apply to take the request")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if why := fromStep(e.getenv); why != "" {
		fmt.Fprintf(e.stderr, "cadence stop: refused: %s\n", why)
		return ExitApplyRefused
	}
	file, rest := waveFileFirst(pos)
	if len(rest) > 0 {
		fmt.Fprintln(e.stderr, "cadence stop: usage: cadence stop [FILE] (FILE: wave.hcl when not given)")
		return ExitUsage
	}
	lay := e.layoutOf(file, "")
	if err := noWaveFile("stop", file, lay.StateFile()); err != nil {
		fmt.Fprintf(e.stderr, "cadence stop: %v\n", err)
		return ExitError
	}
	d, err := steerClient(lay, "stop").Send(context.Background(), control.Request{Kind: control.KindStop, PID: os.Getpid()}, *wait)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence stop: %v\n", err)
		return ExitError
	}
	out := steerOutput{FormatVersion: outputFormatVersion, File: file, Live: d.Live, PID: d.Ack.PID, Queued: d.Queued, Note: d.Ack.Note}
	switch {
	case d.Queued:
		out.Note = queuedNote(lay, *wait)
	case d.Lock != nil:
		d.Lock.Release()
		out.Note = "no apply of " + file + " is running: nothing to stop"
		fmt.Fprintf(e.stderr, "cadence stop: %s\n", out.Note)
		return ExitError
	}
	return steerReport(e, "stop", fs.json, out)
}
