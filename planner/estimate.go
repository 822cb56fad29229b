package planner

import (
	"container/heap"
	"sort"
	"strings"
	"time"

	"github.com/cadence-run/cadence/spec"
)

// simLot is a pending lot in the schedule simulation.
type simLot struct {
	lot      *spec.Lot
	prio     time.Duration // remaining critical path
	waiting  int           // pending dependencies not yet finished
	finishAt time.Duration
}

// readyQueue orders ready lots: longest remaining path first, then file order.
type readyQueue []*simLot

func (q readyQueue) Len() int { return len(q) }
func (q readyQueue) Less(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio > q[j].prio
	}
	return q[i].lot.Index < q[j].lot.Index
}
func (q readyQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)   { *q = append(*q, x.(*simLot)) }
func (q *readyQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// runningQueue orders running lots by finish time.
type runningQueue []*simLot

func (q runningQueue) Len() int { return len(q) }
func (q runningQueue) Less(i, j int) bool {
	if q[i].finishAt != q[j].finishAt {
		return q[i].finishAt < q[j].finishAt
	}
	return q[i].lot.Index < q[j].lot.Index
}
func (q runningQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *runningQueue) Push(x any)   { *q = append(*q, x.(*simLot)) }
func (q *runningQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// simulate estimates how long the pending lots take with the scheduler's
// rules: a lot starts when its pending dependencies finished, agent lots take
// one of sessions slots and command lots one of jobs, a repo runs at most
// parallel lots, and among ready lots the longest remaining path goes first.
// Ready lots are queued per class (kind and repos), so each start decision
// looks at one head per class: O(n log n · classes).
func simulate(pending []*simLot, sessions, jobs int) time.Duration {
	if len(pending) == 0 {
		return 0
	}
	byLot := make(map[*spec.Lot]*simLot, len(pending))
	for _, s := range pending {
		byLot[s.lot] = s
	}
	dependents := make(map[*spec.Lot][]*simLot, len(pending))
	for _, s := range pending {
		for _, d := range s.lot.DependsOn {
			if byLot[d] != nil {
				s.waiting++
				dependents[d] = append(dependents[d], s)
			}
		}
	}
	classes := map[string]*readyQueue{}
	var classKeys []string
	classOf := func(l *spec.Lot) string {
		names := []string{l.Kind.String()}
		for _, r := range l.Repos() {
			names = append(names, r.Name)
		}
		return strings.Join(names, "\x00")
	}
	push := func(s *simLot) {
		k := classOf(s.lot)
		q := classes[k]
		if q == nil {
			q = &readyQueue{}
			classes[k] = q
			classKeys = append(classKeys, k)
			sort.Strings(classKeys)
		}
		heap.Push(q, s)
	}
	for _, s := range pending {
		if s.waiting == 0 {
			push(s)
		}
	}
	repoBusy := map[*spec.Repo]int{}
	agentBusy, cmdBusy := 0, 0
	fits := func(l *spec.Lot) bool {
		if l.Kind == spec.AgentLot && agentBusy >= sessions || l.Kind == spec.CommandLot && cmdBusy >= jobs {
			return false
		}
		for _, r := range l.Repos() {
			if repoBusy[r] >= r.Parallel {
				return false
			}
		}
		return true
	}
	take := func(l *spec.Lot, n int) {
		if l.Kind == spec.AgentLot {
			agentBusy += n
		} else {
			cmdBusy += n
		}
		for _, r := range l.Repos() {
			repoBusy[r] += n
		}
	}
	running := &runningQueue{}
	var now time.Duration
	for {
		for {
			var best *readyQueue
			for _, k := range classKeys {
				q := classes[k]
				if q.Len() == 0 || !fits((*q)[0].lot) {
					continue
				}
				if best == nil || (*q)[0].prio > (*best)[0].prio ||
					((*q)[0].prio == (*best)[0].prio && (*q)[0].lot.Index < (*best)[0].lot.Index) {
					best = q
				}
			}
			if best == nil {
				break
			}
			s := heap.Pop(best).(*simLot)
			take(s.lot, 1)
			s.finishAt = now + s.lot.Estimate
			heap.Push(running, s)
		}
		if running.Len() == 0 {
			return now
		}
		s := heap.Pop(running).(*simLot)
		now = s.finishAt
		take(s.lot, -1)
		for _, d := range dependents[s.lot] {
			if d.waiting--; d.waiting == 0 {
				push(d)
			}
		}
	}
}
