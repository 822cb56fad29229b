package planner

import (
	"github.com/cadence-run/cadence/internal/proc"
)

// LimitsMachine is a Machine that can tell how step limits are enforced
// on it (proc.Enforced): an online plan asks it for the limits its
// pending lots set.
type LimitsMachine interface {
	Machine
	// Limits says how each limit l sets is enforced here.
	Limits(l proc.Limits) []proc.Enforcement
}

// limitsSet is a proc.Limits that sets every limit one of the plan's
// pending lots sets (their values do not matter to how it is enforced).
func (p *Plan) limitsSet() proc.Limits {
	var u proc.Limits
	for _, lp := range p.Lots {
		if !lp.Action.Pending() {
			continue
		}
		l := lp.Limits
		u.Memory = max(u.Memory, l.Memory)
		u.Processes = max(u.Processes, l.Processes)
		u.OpenFiles = max(u.OpenFiles, l.OpenFiles)
		u.FileSize = max(u.FileSize, l.FileSize)
		u.CPUTime = max(u.CPUTime, l.CPUTime)
	}
	return u
}
