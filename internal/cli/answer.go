package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/internal/state"
)

func runAnswer(e *env, args []string) ExitCode {
	fs := newFlags(e, "answer", "[FILE] LOT TEXT", "Record the lead's answer to the question a lot stopped on. A live apply of the wave takes\nit at once and the lot goes on in that run; else the next apply replays the step that asked,\nin a fresh session with the answer in its brief. FILE defaults to wave.hcl; a first argument\nthat ends in .hcl or .hcl.json, or is an existing file, is the wave file.")
	wait := fs.Duration("wait", time.Minute, "how long to wait for a live apply to take the answer")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if why := fromStep(e.getenv); why != "" {
		fmt.Fprintf(e.stderr, "cadence answer: refused: %s\n", why)
		return ExitApplyRefused
	}
	file, rest := waveFileFirst(pos)
	if len(rest) != 2 {
		fmt.Fprintln(e.stderr, `cadence answer: usage: cadence answer [FILE] LOT "text" (FILE: wave.hcl when not given)`)
		return ExitUsage
	}
	id, text := rest[0], rest[1]
	lay := e.layoutOf(file, "")
	path := lay.StateFile()
	if err := noWaveFile("answer", file, path); err != nil {
		fmt.Fprintf(e.stderr, "cadence answer: %v\n", err)
		return ExitError
	}
	d, err := steerClient(lay, "answer").Send(context.Background(), control.Request{Kind: control.KindAnswer, Lot: id, Text: text, PID: os.Getpid()}, *wait)
	switch {
	case err != nil:
		fmt.Fprintf(e.stderr, "cadence answer: %v\n", err)
		return ExitError
	case d.Lock == nil:
		// A live apply took it (or has not yet: queued).
		out := steerOutput{FormatVersion: outputFormatVersion, File: file, Live: d.Live, PID: d.Ack.PID, Queued: d.Queued, Results: d.Ack.Results, Note: d.Ack.Note}
		if d.Queued {
			out.Note = queuedNote(lay, *wait)
		}
		return steerReport(e, "answer", fs.json, out)
	}
	defer d.Lock.Release()
	if _, _, err := state.Read(path); errors.Is(err, state.ErrNotExist) {
		fmt.Fprintf(e.stderr, "cadence answer: %s has no state yet\n", file)
		return ExitError
	}
	store, err := state.OpenStore(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence answer: %v\n", err)
		return ExitError
	}
	defer store.Close()
	var problem, question string
	again := false
	store.View(func(st *state.State) {
		lot := st.Lots[id]
		switch {
		case lot == nil:
			// Never run, or no lot of the wave: nothing is recorded (no
			// phantom lot in the state).
			problem = fmt.Sprintf("lot %s has no question waiting for an answer (it has not run)", id)
		case lot.Pending() == nil && lot.Status == state.LotQuestion && len(lot.Questions) > 0 && lot.Questions[len(lot.Questions)-1].Answer == text:
			// The same answer again (a live apply recorded it and ended
			// before acknowledging it): it holds.
			again, question = true, lot.Questions[len(lot.Questions)-1].Text
		case lot.Pending() == nil:
			problem = fmt.Sprintf("lot %s has no question waiting for an answer (status %s)", id, lot.Status)
		}
	})
	if problem == "" && !again {
		err = store.UpdateLot(id, func(lot *state.Lot) {
			q := lot.Pending()
			q.Answer, question = text, q.Text
		})
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence answer: %v\n", err)
		return ExitError
	}
	if problem != "" {
		fmt.Fprintf(e.stderr, "cadence answer: %s\n", problem)
		return ExitError
	}
	if fs.json {
		return answerJSON(e, answerOutput{FormatVersion: outputFormatVersion, File: file, LotID: id, Question: question, Answer: text})
	}
	fmt.Fprintf(e.stdout, "Answered %s: %q\n  → %q\nThe next cadence apply %s replays the step that asked.\n", id, question, text, file)
	return ExitOK
}
