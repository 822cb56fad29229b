package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/internal/layout"
)

// The steering commands (drop, stop, answer) reach a live apply through
// control.Client, which says how (docs/running.md, Steering a live wave);
// this file holds their output.

// steerClient is the steering client of the wave of lay for the command
// what ("drop", "stop", "answer").
func steerClient(lay layout.Wave, what string) control.Client {
	return control.Client{Lock: lay.Lock(), Channel: control.Channel{Dir: lay.Requests()}, Key: lay.SteerKey(), What: what}
}

// keyList is key as a list: none when nil.
func keyList(key []byte) [][]byte {
	if key == nil {
		return nil
	}
	return [][]byte{key}
}

// printResults prints what became of each lot of a request: taken on
// standard output, refused on standard error (steerReport sets the exit
// code).
func printResults(e *env, verb string, rs []control.Result) {
	for _, r := range rs {
		if r.Taken {
			fmt.Fprintf(e.stdout, "%s %s: %s\n", verb, r.Lot, r.Reason)
			continue
		}
		fmt.Fprintf(e.stderr, "cadence %s: %s refused: %s\n", verb, r.Lot, r.Reason)
	}
}

// steerOutput is the -json of drop, stop and a live answer.
type steerOutput struct {
	FormatVersion int    `json:"format_version"`
	File          string `json:"file"`
	// Live says a running apply took the request (its pid); false: the
	// command recorded it in the state itself (no apply was live), or,
	// with Queued, nothing took it yet.
	Live    bool             `json:"live"`
	PID     int              `json:"pid,omitempty"`
	Queued  bool             `json:"queued"`
	Results []control.Result `json:"results"`
	Note    string           `json:"note,omitempty"`
}

// queuedNote is what a command says when the live apply did not take its
// request in time.
func queuedNote(lay layout.Wave, wait time.Duration) string {
	return fmt.Sprintf("the running apply has not taken the request within %s (it is planning or waiting for confirmation?): it stays in %s, and the apply takes it when it runs lots (signed with its key: an apply after it that ended refuses it, send it again then)", wait, lay.Requests())
}

// waitingRequests are the requests of the wave's channel no apply took yet
// (none when it cannot be read).
func waitingRequests(lay layout.Wave) []control.Request {
	reqs, _, _ := control.Channel{Dir: lay.Requests()}.Pending()
	if reqs == nil {
		reqs = []control.Request{}
	}
	return reqs
}

// describeRequest is a request as the command that sent it reads.
func describeRequest(r control.Request) string {
	switch r.Kind {
	case control.KindDrop:
		s := "drop " + strings.Join(r.Lots, " ")
		if r.Now {
			s = "drop -now " + strings.Join(r.Lots, " ")
		}
		return s
	case control.KindAnswer:
		return fmt.Sprintf("answer %s %q", r.Lot, r.Text)
	}
	return string(r.Kind)
}
