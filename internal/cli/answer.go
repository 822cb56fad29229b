package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/state"
)

func runAnswer(e *env, args []string) int {
	fs := newFlags(e, "answer", "[FILE] LOT TEXT", "Record the lead's answer to the question a lot stopped on. The next apply replays the\nstep that asked, in a fresh session with the answer in its brief. FILE defaults to wave.hcl;\na first argument that ends in .hcl or .hcl.json, or is an existing file, is the wave file.")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
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
	l, err := flock.TryAcquire(lay.Lock(), flock.Holder{PID: os.Getpid(), What: "cadence answer", Since: time.Now()})
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence answer: the wave is running (%v): answer when it stops\n", err)
		return ExitError
	}
	defer l.Release()
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
	err = store.UpdateLot(id, func(lot *state.Lot) {
		q := lot.Pending()
		if q == nil {
			problem = fmt.Sprintf("lot %s has no question waiting for an answer (status %s)", id, lot.Status)
			return
		}
		q.Answer, question = text, q.Text
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence answer: %v\n", err)
		return ExitError
	}
	if problem != "" {
		fmt.Fprintf(e.stderr, "cadence answer: %s\n", problem)
		return ExitError
	}
	if fs.json {
		return answerJSON(e, answerOutput{File: file, LotID: id, Question: question, Answer: text})
	}
	fmt.Fprintf(e.stdout, "Answered %s: %q\n  → %q\nThe next cadence apply %s replays the step that asked.\n", id, question, text, file)
	return ExitOK
}
