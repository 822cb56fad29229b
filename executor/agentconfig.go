package executor

import (
	"context"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
)

// ConfigChecker is an Agent that can tell which files of a repository the
// agent CLIs load as their configuration and can run as commands
// (agent.Router does, with every adapter that is an agent.Configured).
// cadence's sessions never load them; the lead's own use of the CLI does,
// once a lot's change of one reaches the base: such a lot is named in its
// review brief (briefs.Data.AgentConfig), on the lot (state.Lot.AgentConfig
// and a warning) and at the end of the run.
type ConfigChecker interface {
	// ConfigFiles returns those of paths (relative to a repository's
	// root, slash-separated) that some agent CLI loads as configuration.
	ConfigFiles(paths []string) []string
}

// agentConfig returns the files the lot's commits so far add or change
// that an agent CLI loads as configuration, sorted: in the lot's own
// repository from the commit the lot started from (BaseSHA), as the path;
// in a neighbour's from its start (lr.bases), as "<repo>: <path>". It
// returns nil when the Agent cannot tell (no ConfigChecker); a repository
// git cannot diff is left out.
func (lr *lotRun) agentConfig(ctx context.Context) []string {
	cc, ok := lr.r.o.Agent.(ConfigChecker)
	if !ok || lr.n.lot.Repo == nil {
		return nil
	}
	var base string
	lr.r.o.Store.View(func(st *state.State) { base = st.Lots[lr.id].BaseSHA })
	from := map[string]string{lr.n.lot.Repo.Name: base}
	for _, rp := range lr.n.lot.Also {
		from[rp.Name] = lr.bases[rp]
	}
	looked := lr.look(ctx, step.LookRequest{From: from, Changed: true}, false)
	var out []string
	for _, rp := range lr.n.lot.Repos() {
		prefix := rp.Name + ": "
		if rp == lr.n.lot.Repo {
			prefix = ""
		}
		l := looked[rp.Name]
		if from[rp.Name] == "" || l.Err != "" {
			continue
		}
		for _, p := range cc.ConfigFiles(l.Changed) {
			out = append(out, prefix+p)
		}
	}
	slices.Sort(out)
	return out
}

// flagAgentConfig records the lot's agentConfig on the lot (replacing what
// an earlier step found: a later commit may undo a change) and warns of
// each file no earlier warning named.
func (lr *lotRun) flagAgentConfig(ctx context.Context) error {
	files := lr.agentConfig(ctx)
	return lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		if files == nil && l.AgentConfig == nil {
			return
		}
		var fresh []string
		for _, f := range files {
			if !slices.Contains(l.AgentConfig, f) {
				fresh = append(fresh, f)
			}
		}
		l.AgentConfig = files
		if len(fresh) > 0 {
			l.Warnings = append(l.Warnings, agentConfigWarning+strings.Join(fresh, ", "))
		}
	})
}

// agentConfigWarning begins the lot's warning that names the agent CLI's
// configuration files its commits add or change.
const agentConfigWarning = "the lot's commits change what the agent CLI loads as configuration (cadence's sessions do not load it; your own use of the CLI in the repository would): "
