package executor

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// Steering a live wave (docs/running.md, Steering a live wave): `cadence drop`, `cadence stop` and
// `cadence answer` leave requests in the wave's request channel
// (executor/control); the run takes those left pending when it starts,
// and a watcher hands each new one to the dispatcher, which alone changes
// the nodes. The dispatcher records a request's effect in the state before
// the watcher acknowledges it, so a request is never lost: one taken by no
// one is taken by the command itself (internal/cli) or by the next apply.
//
//   - drop: a queued lot never starts; a running lot ends its current step
//     (with Now, the step is stopped and recorded interrupted), then is
//     handed back, state.DroppedCause, its commits kept; a lot not running
//     in this run is handed back at once (DropAtRest). Its dependents are
//     blocked, as a handed-back lot's are: they run again if the lead later
//     runs the dropped lot again (-replace) and it is done.
//   - stop: no new lot or step starts; running steps end; each running lot
//     is then interrupted ("stopped by the lead") and the wave ends
//     interrupted, to resume. It lasts one run: a stop left pending from
//     before this apply took the wave lock (Options.Since) is cleared.
//   - answer: the answer is recorded and the lot waiting on it goes on in
//     this run (it is queued again, or added to the run when it was not
//     part of it and its dependencies are done).

// FailSteerTaken is a failpoint (Options.Failpoint), for tests only:
// cadence kills its own process right after reading a request from the
// channel, before recording it.
const FailSteerTaken = "steer-taken"

// StopCause is the cause recorded on lots `cadence stop` interrupted.
const StopCause = "stopped by the lead (cadence stop)"

// watchEvery is how often the watcher looks for new requests where the
// channel cannot be watched (control.Channel.Watch: no inotify, or its
// limits reached); with a watch, it looks only when the folder changed. A
// variable for tests.
var watchEvery = 100 * time.Millisecond

// steerMsg is a request handed to the dispatcher, with where its
// acknowledgement goes.
type steerMsg struct {
	req   control.Request
	reply chan control.Ack
}

// channel is the wave's request channel; ok is false for a run without a
// wave file (tests of Run).
func (r *runner) channel() (control.Channel, bool) {
	if r.o.Layout.File() == "" {
		return control.Channel{}, false
	}
	return control.Channel{Dir: r.o.Layout.Requests(), Keys: r.o.SteerKeys}, true
}

// takePending takes the requests the channel holds now, in the
// dispatcher's goroutine (before the loop starts).
func (r *runner) takePending(atStart bool) {
	ch, ok := r.channel()
	if !ok {
		return
	}
	ch.Tidy(24*time.Hour, r.now())
	for _, m := range r.pending(ch) {
		if !r.acknowledge(ch, m, r.handle(m, atStart)) {
			return
		}
	}
}

// pending reads the channel's requests; unreadable ones are dropped from
// it with a note, so that they never block it.
func (r *runner) pending(ch control.Channel) []control.Request {
	reqs, bad, err := ch.Pending()
	if err != nil {
		r.noteOnce(fmt.Sprintf("the request channel %s cannot be used: %v (drop, stop and a live answer do not reach this apply)", ch.Dir, err))
		return nil
	}
	for name, why := range bad {
		if err := ch.AckBad(name); err != nil && !r.badSeen[name] {
			why = fmt.Errorf("%v; it cannot be removed (%v): remove it", why, err)
		} else if r.badSeen[name] {
			continue
		}
		if r.badSeen == nil {
			r.badSeen = map[string]bool{}
		}
		r.badSeen[name] = true
		if errors.Is(why, control.ErrUnsigned) {
			// Written into the channel by a process outside the steering
			// commands (a step, when no sandbox kept it out): never acted on.
			r.emit(Event{Kind: EvOutput, Message: fmt.Sprintf("%v; removed from the channel (cadence stop, drop and answer sign theirs)", why)})
			continue
		}
		r.emit(Event{Kind: EvOutput, Message: fmt.Sprintf("request %s refused: %v", name, why)})
	}
	return reqs
}

// ackRequest writes an acknowledgement (control.Channel.Ack); a seam for
// tests that make the write fail.
var ackRequest = control.Channel.Ack

// acknowledge writes the acknowledgement of req (its effect is recorded)
// and reports whether it could. One that cannot be written is a machine
// error (a full disk, machinestop.go): the wave stops, and the request,
// still in the channel, is the next apply's to take again (every effect is
// idempotent); it is never written again by this run.
func (r *runner) acknowledge(ch control.Channel, req control.Request, a control.Ack) bool {
	a.PID, a.Taken = os.Getpid(), r.now().UTC()
	if err := ackRequest(ch, req, a); err != nil {
		r.machineStop("request channel: " + writeFailure(err, ch.Dir))
		return false
	}
	return true
}

// noteOnce emits msg once per run.
func (r *runner) noteOnce(msg string) {
	r.steerNoted.Do(func() { r.emit(Event{Kind: EvOutput, Message: msg}) })
}

// watchRequests hands each new request to the dispatcher until done is
// closed, and acknowledges it once the dispatcher recorded it. It looks at
// the channel when its watch says the folder changed (no timer runs while
// nothing arrives), and every watchEvery when it cannot watch it.
func (r *runner) watchRequests(done <-chan struct{}) {
	ch, ok := r.channel()
	if !ok {
		return
	}
	var changed <-chan struct{}
	var tick <-chan time.Time
	if w, err := ch.Watch(); err == nil {
		defer w.Close()
		changed = w.C
	} else {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		tick = t.C
	}
	// A request sent between takePending and the watch's start is taken
	// at once.
	for first := true; ; first = false {
		if !first {
			select {
			case <-done:
				return
			case _, open := <-changed:
				if !open {
					// The watch broke: poll from now on.
					changed = nil
					t := time.NewTicker(watchEvery)
					defer t.Stop()
					tick = t.C
				}
			case <-tick:
			}
		}
		for _, req := range r.pending(ch) {
			m := steerMsg{req: req, reply: make(chan control.Ack, 1)}
			select {
			case r.requests <- m:
			case <-done:
				return // the run ends: the request stays for whoever comes next
			}
			if !r.acknowledge(ch, req, <-m.reply) {
				return // the wave stops (machinestop.go)
			}
		}
	}
}

// handle does what a request asks and says what became of it; it runs in
// the dispatcher's goroutine.
func (r *runner) handle(req control.Request, atStart bool) control.Ack {
	r.failpoint(FailSteerTaken)
	switch req.Kind {
	case control.KindStop:
		if atStart && !r.o.Since.IsZero() && req.Sent.Before(r.o.Since) {
			return control.Ack{Note: "cleared: it was left from an earlier apply, and a stop lasts one run"}
		}
		running := r.stop()
		r.emit(Event{Kind: EvOutput, Message: "the lead stops the wave (cadence stop): no new step or lot starts"})
		return control.Ack{Note: fmt.Sprintf("the apply stops: no new step or lot starts; %d running lot(s) end their current step, then the wave ends interrupted (cadence apply resumes it)", running)}
	case control.KindDrop:
		var a control.Ack
		for _, id := range req.Lots {
			a.Results = append(a.Results, r.drop(id, req.Now))
		}
		return a
	case control.KindAnswer:
		return control.Ack{Results: []control.Result{r.answer(req.Lot, req.Text)}}
	}
	return control.Ack{Note: "unknown request " + string(req.Kind)}
}

// stop records the lead's stop and wakes the lots waiting for a session;
// it returns how many lots are running.
func (r *runner) stop() int {
	r.stopMu.Lock()
	if r.stopCause == "" {
		r.stopCause = StopCause
	}
	r.stopMu.Unlock()
	running := 0
	for _, n := range r.nodes {
		if n.started && !n.finished {
			running++
			n.steer.mu.Lock()
			if n.steer.wake != nil {
				n.steer.wake()
			}
			n.steer.mu.Unlock()
		}
	}
	return running
}

// stopping says why the lead stopped the wave ("" when not).
func (r *runner) stopping() string {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	return r.stopCause
}

// answer records the lead's answer to the question lot id waits on, and
// has the lot go on in this run when it can.
func (r *runner) answer(id, text string) control.Result {
	res := control.Result{Lot: id}
	if r.o.Config.Lot(id) == nil {
		res.Reason = "no lot " + id + " in the wave file"
		return res
	}
	var problem string
	again := false
	r.o.Store.View(func(st *state.State) {
		l := st.Lots[id]
		switch {
		case l == nil:
			problem = "it has not run: no question waits for an answer"
		case l.Status == state.LotQuestion && l.Pending() == nil && len(l.Questions) > 0 && l.Questions[len(l.Questions)-1].Answer == text:
			// Taken again (its apply died before acknowledging it): the
			// answer is recorded; the lot goes on.
			again = true
		case l.Status != state.LotQuestion || l.Pending() == nil:
			problem = fmt.Sprintf("it has no question waiting for an answer (status %s)", l.Status)
		}
	})
	if problem != "" {
		res.Reason = problem
		return res
	}
	if !again {
		if err := r.o.Store.UpdateLot(id, func(l *state.Lot) { l.Pending().Answer = text }); err != nil {
			res.Reason = "cannot record it: " + err.Error()
			return res
		}
	}
	res.Taken = true
	switch why := r.goOn(id); why {
	case "":
		res.Reason = "it goes on in this run"
	default:
		res.Reason = "recorded; " + why + ": the next cadence apply replays the step that asked"
	}
	r.emit(Event{Kind: EvOutput, Lot: id, Message: "answered by the lead: " + res.Reason})
	return res
}

// goOn queues the answered lot id again in this run, and says why it
// cannot when it cannot.
func (r *runner) goOn(id string) string {
	if r.stopping() != "" {
		return "the wave is stopping"
	}
	n := r.byID[id]
	switch {
	case n != nil && n.started && !n.finished:
		return "" // its end is on its way to the dispatcher: settle queues it again
	case n != nil && n.finished:
		r.requeue(n)
		return ""
	case n != nil:
		return "" // queued already (taken when the run starts)
	}
	var lp *planner.LotPlan
	for i := range r.o.Plan.Lots {
		if r.o.Plan.Lots[i].ID == id {
			lp = &r.o.Plan.Lots[i]
		}
	}
	if lp == nil {
		return "this run's -target did not select it"
	}
	lot := r.o.Config.Lot(id)
	var notDone string
	r.o.Store.View(func(st *state.State) {
		for _, d := range lot.DependsOn {
			if l := st.Lots[d.ID]; l == nil || l.Status != state.LotDone {
				notDone = d.ID
			}
		}
	})
	if notDone != "" {
		return "its dependency " + notDone + " is not done"
	}
	n = &node{lot: lot, plan: lp}
	for _, m := range r.dependentsOf(id) {
		if !m.started && m.blockedBy == "" {
			n.dependents = append(n.dependents, m) // m.waiting counted it already
		}
	}
	r.nodes = append(r.nodes, n)
	r.byID[id] = n
	r.ready.push(n)
	return ""
}

// requeue puts a lot that ended in this run on a question back in the
// ready set: its answer came.
func (r *runner) requeue(n *node) {
	n.started, n.finished = false, false
	r.ready.push(n)
}

// answered reports whether lot id ended on a question that has its answer
// now (given while the lot was ending).
func (r *runner) answered(id string) bool {
	ok := false
	r.o.Store.View(func(st *state.State) {
		l := st.Lots[id]
		ok = l != nil && l.Status == state.LotQuestion && l.Pending() == nil
	})
	return ok
}
