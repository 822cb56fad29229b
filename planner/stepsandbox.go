package planner

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// StepSandboxMachine is a Machine that also knows whether cadence's step
// sandbox (bubblewrap, executor/step/box) runs here: command lots, test
// gates and worktree setups run in it wherever it does.
type StepSandboxMachine interface {
	Machine
	// StepSandboxMissing says why the step sandbox cannot run on this
	// machine ("not Linux", "bubblewrap (bwrap) not found on PATH", …);
	// "" when it can.
	StepSandboxMissing() string
}

// hasCommandSteps says l runs command steps: a run, a test gate of one
// of its repositories, or a worktree setup.
func hasCommandSteps(l *spec.Lot) bool {
	if l.Kind == spec.CommandLot || l.Bootstrap.Setup != "" {
		return true
	}
	for _, r := range l.Repos() {
		if r.Test != "" || (r != l.Repo && r.Bootstrap.Setup != "") {
			return true
		}
	}
	return false
}

// stepSandbox warns, as it warns of an agent without its sandbox, of the
// pending lots whose command steps run outside the step sandbox: once per
// lot or repository whose sandbox = false turns it off, and once for all
// the others when the machine (m, nil offline) cannot run it, for which
// the guards' detection is then all there is (docs/integration.md,
// Guards). Where the sandbox runs, the folders a lot's sandbox_writable
// adds to its box are shown too, once per list, with its lots.
func (b *builder) stepSandbox(m Machine) {
	missing := ""
	if sm, ok := m.(StepSandboxMachine); ok {
		missing = sm.StepSandboxMissing()
	}
	off, writable := map[string][]string{}, map[string][]string{}
	var order, unboxed, wOrder []string
	for _, l := range b.selected {
		if !b.actions[l].Action.Pending() || !hasCommandSteps(l) {
			continue
		}
		why := l.StepSandboxOff()
		if why == "" {
			if missing != "" {
				unboxed = append(unboxed, l.ID)
			} else if w := b.shownPaths(l.StepWritable()); w != "" {
				if writable[w] == nil {
					wOrder = append(wOrder, w)
				}
				writable[w] = append(writable[w], l.ID)
			}
			continue
		}
		if off[why] == nil {
			order = append(order, why)
		}
		off[why] = append(off[why], l.ID)
	}
	for _, why := range order {
		lots := off[why]
		b.warn(Warning{Kind: WarnStepNoSandbox, LotIDs: lots, Message: fmt.Sprintf(
			"%s: the command steps of %s %s (run, test gates, setups) run outside the step sandbox; what they do to your checkouts, other repositories and the wave's files is only detected after each step, not prevented",
			why, map[bool]string{true: "lot", false: "lots"}[len(lots) == 1], shortList(lots, 5))})
	}
	for _, w := range wOrder {
		lots := writable[w]
		b.warn(Warning{Kind: WarnStepSandboxWritable, LotIDs: lots, Message: fmt.Sprintf(
			"the command steps of %s %s (run, test gates, setups) may also write %s in the step sandbox (sandbox_writable): what they leave there is neither prevented nor checked",
			map[bool]string{true: "lot", false: "lots"}[len(lots) == 1], shortList(lots, 5), w)})
	}
	if len(unboxed) > 0 {
		b.warn(Warning{Kind: WarnStepNoSandbox, LotIDs: unboxed, Message: fmt.Sprintf(
			"the step sandbox cannot run here (%s): the command steps of %s %s (run, test gates, setups) run unsandboxed, and the guards' detection after each step is all there is",
			missing, map[bool]string{true: "lot", false: "lots"}[len(unboxed) == 1], shortList(unboxed, 5))})
	}
}

// shownPaths are the folders ps as the plan shows them, joined by ", ":
// relative to the wave file's folder when inside it ("./" for itself),
// else absolute.
func (b *builder) shownPaths(ps []string) string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if rel, err := filepath.Rel(b.cfg.Dir, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			p = "./" + filepath.ToSlash(rel)
			if rel == "." {
				p = "./"
			}
		}
		out = append(out, p)
	}
	return strings.Join(out, ", ")
}
