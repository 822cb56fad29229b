package planner

import (
	"fmt"

	"github.com/cadence-run/cadence/internal/state"
)

// pinned compares the tool the wave was started with (the state's
// cadence_version and agent_version, recorded by its first apply) with
// the tool planning it now (Options.CadenceVersion, the agent CLI's
// version the Machine found), docs/running.md "The same tool for a whole
// wave": a wave that runs for hours
// must not change behaviour halfway because cadence was upgraded.
//
// Another cadence is a refusing warning (WarnCadenceChanged) unless
// Options.Upgrade (apply -upgrade, which records the new versions); another
// agent CLI version is a warning only (WarnAgentChanged). Nothing is said
// of a wave with nothing pending (done, or only lots that need the lead),
// of a state without recorded versions (its next apply records them), or
// when the version of now is unknown ("": an offline plan, a caller that
// does not say). Versions are compared as whole strings: a build from a
// checkout is its revision and dirty flag, so two builds are the same
// cadence only when both match (the CLI adds a dirty build's binary
// digest: two dirty builds of one revision may differ in their code).
func (b *builder) pinned() {
	t := b.plan.Totals
	if t.PendingAgent+t.PendingCommand == 0 {
		return
	}
	st := b.st
	if st.CadenceVersion != "" || st.AgentVersion != "" {
		b.plan.Pinned = &Pinned{Cadence: st.CadenceVersion, Agent: st.AgentVersion}
	}
	if was, now := st.CadenceVersion, state.ClipVersion(b.opts.CadenceVersion); was != "" && now != "" && was != now {
		w := Warning{Kind: WarnCadenceChanged, Subject: "cadence",
			Message: fmt.Sprintf("the wave was started with cadence %s; this is cadence %s", was, now)}
		if b.opts.Upgrade {
			w.Message += ": -upgrade records this version and goes on"
		} else {
			w.Refuses = true
			w.Message += ": apply refuses to go on with another cadence unless -upgrade is given (it records this version), or run the wave to its end with the cadence that started it"
		}
		b.warn(w)
	}
	if was, now := st.AgentVersion, state.ClipVersion(b.plan.Agent.Version); was != "" && now != "" && was != now {
		msg := fmt.Sprintf("the wave was started with agent CLI %s; this is %s: sessions from now on run the new one", was, now)
		if b.opts.Upgrade {
			msg += " (-upgrade records it)"
		}
		b.warn(Warning{Kind: WarnAgentChanged, Subject: "agent", Message: msg})
	}
}
