package render

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/planner"
)

// maxEnvGroups is how many groups of lots the Env line names.
const maxEnvGroups = 8

// toolchainSummary says per repository what its toolchain files resolved
// to: "node v22.22.3 from .nvmrc in api, web; node v20.1.0 from .nvmrc in
// legacy; cannot be resolved in docs (its lots are refused)"; "" when no
// repository has one (or offline). Why one cannot be resolved is in its
// lots' reasons and the warnings.
func toolchainSummary(p *planner.Plan) string {
	const unresolved = "cannot be resolved"
	var order []string
	repos := map[string][]string{}
	for _, r := range p.Repos {
		tc := r.Toolchain
		if r.ToolchainErr != "" {
			tc = unresolved
		}
		if tc == "" {
			continue
		}
		if repos[tc] == nil {
			order = append(order, tc)
		}
		repos[tc] = append(repos[tc], r.Name)
	}
	if i := slices.Index(order, unresolved); i >= 0 {
		order = append(slices.Delete(order, i, i+1), unresolved)
	}
	parts := make([]string, len(order))
	for i, tc := range order {
		parts[i] = tc + " in " + strings.Join(repos[tc], ", ")
		if tc == unresolved {
			parts[i] += " (their lots are refused)"
		}
	}
	return strings.Join(parts, "; ")
}

// envSummary says which pending lots get an environment of their own
// (env, path_prepend), grouped by what they get: "lots a, cmd: env A, B,
// PATH first bin, /opt/r". Names only: a value is never shown.
func envSummary(p *planner.Plan) string {
	var g lotGroups
	for _, lp := range p.Lots {
		if !lp.Action.Pending() || (len(lp.Env) == 0 && len(lp.PathPrepend) == 0) {
			continue
		}
		var what []string
		if len(lp.Env) > 0 {
			what = append(what, "env "+strings.Join(lp.Env, ", "))
		}
		if len(lp.PathPrepend) > 0 {
			dirs := make([]string, len(lp.PathPrepend))
			for i, d := range lp.PathPrepend {
				dirs[i] = dirLabel(p, d)
			}
			what = append(what, "PATH first "+strings.Join(dirs, ", "))
		}
		g.add(strings.Join(what, ", "), lp.ID)
	}
	return g.String()
}

// lotGroups are lots grouped by what a summary line says of them, in the
// order each group first appears (envSummary, setupSummary).
type lotGroups struct {
	order []string
	lots  map[string][]string
}

// add puts lot id in the group of key.
func (g *lotGroups) add(key, id string) {
	if g.lots == nil {
		g.lots = map[string][]string{}
	}
	if g.lots[key] == nil {
		g.order = append(g.order, key)
	}
	g.lots[key] = append(g.lots[key], id)
}

// String is the groups as "lots a, b: key; lot c: key2", at most
// maxEnvGroups of them and 5 lots a group named, "" for none.
func (g *lotGroups) String() string {
	var parts []string
	for i, key := range g.order {
		if i == maxEnvGroups {
			parts = append(parts, "and "+plural(len(g.order)-i, "more group", "more groups"))
			break
		}
		ids := g.lots[key]
		label := "lot "
		if len(ids) > 1 {
			label = "lots "
		}
		if len(ids) > 5 {
			ids = append(ids[:5:5], "and "+thousands(len(g.lots[key])-5)+" more")
		}
		parts = append(parts, label+strings.Join(ids, ", ")+": "+key)
	}
	return strings.Join(parts, "; ")
}

// dirLabel is a folder relative to the wave file's when it is inside it
// (as written in path_prepend), else as it is.
func dirLabel(p *planner.Plan, dir string) string {
	if rel := repoPath(p, dir); rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return filepath.ToSlash(dir)
}
