package planner

import (
	"fmt"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// Pushes says how a push from a repository's lots to a remote is stopped
// (docs/integration.md, Guards): every lot gets push guards (hooks, push-blocking config),
// which a determined process can get round; an agent session in its agent
// CLI's OS sandbox cannot; and the remotes are compared before and after,
// so what gets through is found and stops the wave.
type Pushes string

const (
	// PushesPrevented: every pending lot that works in the repository (as
	// its own repo or in also) is an agent lot whose agent has its sandbox
	// on and usable on this machine, and does not run with permission_mode
	// = "bypassPermissions" (the CLI's file tools run in its own process,
	// outside the sandbox: under bypass no rule confines them to the
	// worktrees).
	PushesPrevented Pushes = "prevented"
	// PushesDetected: a pending lot that works in the repository runs
	// outside a sandbox (a command lot, or an agent lot whose agent has
	// sandbox = false, bypassPermissions, or whose sandbox is missing
	// here): a push that gets
	// past the guards is found afterwards and stops the wave.
	PushesDetected Pushes = "detected"
	// PushesUnknown is an offline plan's answer where the machine decides:
	// every pending lot in the repository is an agent lot with its sandbox
	// on, and whether the sandbox works here was not checked. (What is
	// known without the machine, a command lot or sandbox = false, is
	// PushesDetected offline too.)
	PushesUnknown Pushes = "unknown"
	// PushesNone: no pending lot works in the repository.
	PushesNone Pushes = ""
)

// The status counts the lots, not the test gate: a repository's test gate
// runs outside the sandbox (like a command) yet does not make it
// "detected", and a command lot without a repo counts for no repository.

// pushes sets each repository's Pushes and PushesReason from the pending
// lots and, when the Machine was asked, the facts of their agents (facts
// nil: offline); and warns once per agent whose sandbox is off or missing.
func (b *builder) pushes(facts map[*spec.Agent]AgentFacts) {
	type cause struct {
		commands []string // pending command lots in the repo
		agents   []*spec.Agent
		unknown  bool // an agent lot whose sandbox was not checked
	}
	causes := map[*spec.Repo]*cause{}
	agentLots := map[*spec.Agent][]string{}
	var agentOrder []*spec.Agent
	sandboxOff := func(a *spec.Agent) string {
		if a.NoSandbox {
			return "sandbox = false"
		}
		if f, ok := facts[a]; ok && f.SandboxMissing != "" {
			return "sandbox missing: " + f.SandboxMissing
		}
		return a.SandboxBypass()
	}
	for _, l := range b.selected {
		if !b.actions[l].Action.Pending() {
			continue
		}
		var offAgents []*spec.Agent // the lot's agents whose sandbox is off
		if l.Kind == spec.AgentLot {
			for _, a := range LotAgents(l) {
				if sandboxOff(a) == "" {
					continue
				}
				offAgents = append(offAgents, a)
				if agentLots[a] == nil {
					agentOrder = append(agentOrder, a)
				}
				agentLots[a] = append(agentLots[a], l.ID)
			}
		}
		for _, r := range l.Repos() {
			c := causes[r]
			if c == nil {
				c = &cause{}
				causes[r] = c
			}
			switch {
			case l.Kind == spec.CommandLot:
				c.commands = append(c.commands, l.ID)
			case len(offAgents) > 0:
				for _, a := range offAgents {
					if !containsAgent(c.agents, a) {
						c.agents = append(c.agents, a)
					}
				}
			case facts == nil:
				c.unknown = true
			}
		}
	}
	for i := range b.plan.Repos {
		rp := &b.plan.Repos[i]
		c := causes[b.cfg.Repo(rp.Name)]
		if c == nil {
			continue
		}
		var why []string
		if len(c.commands) > 0 {
			why = append(why, map[bool]string{true: "command lot ", false: "command lots "}[len(c.commands) == 1]+shortList(c.commands, 3))
		}
		for _, a := range c.agents {
			why = append(why, "agent "+a.Name+": "+sandboxOff(a))
		}
		switch {
		case len(why) > 0:
			rp.Pushes, rp.PushesReason = PushesDetected, strings.Join(why, "; ")
		case c.unknown:
			rp.Pushes, rp.PushesReason = PushesUnknown, "offline: the sandbox was not checked"
		default:
			rp.Pushes = PushesPrevented
		}
	}
	for _, a := range agentOrder {
		lots := agentLots[a]
		var what string
		switch {
		case a.NoSandbox:
			what = fmt.Sprintf("agent %s has sandbox = false", a.Name)
		case facts[a].SandboxMissing == "":
			what = fmt.Sprintf("agent %s has %s", a.Name, a.SandboxBypass())
		default:
			what = fmt.Sprintf("agent %s cannot use its sandbox here (%s)", a.Name, facts[a].SandboxMissing)
		}
		b.warn(Warning{Kind: WarnNoSandbox, Subject: a.Name, LotIDs: lots, Message: fmt.Sprintf(
			"%s: a push from its sessions (%s %s) is only detected after the session, not prevented", what,
			map[bool]string{true: "lot", false: "lots"}[len(lots) == 1], shortList(lots, 5))})
	}
}

func containsAgent(as []*spec.Agent, a *spec.Agent) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}
