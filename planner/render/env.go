package render

import (
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/planner"
)

// maxEnvGroups is how many groups of lots the Env line names.
const maxEnvGroups = 8

// toolchainSummary says per repository what its toolchain file resolved
// to: "node v22.22.3 from .nvmrc in api, web; node v20.1.0 from .nvmrc in
// legacy"; "" when no repository has one (or offline).
func toolchainSummary(p *planner.Plan) string {
	var order []string
	repos := map[string][]string{}
	for _, r := range p.Repos {
		if r.Toolchain == "" {
			continue
		}
		if repos[r.Toolchain] == nil {
			order = append(order, r.Toolchain)
		}
		repos[r.Toolchain] = append(repos[r.Toolchain], r.Name)
	}
	parts := make([]string, len(order))
	for i, tc := range order {
		parts[i] = tc + " in " + strings.Join(repos[tc], ", ")
	}
	return strings.Join(parts, "; ")
}

// envSummary says which pending lots get an environment of their own
// (env, path_prepend), grouped by what they get: "lots a, cmd: env A, B,
// PATH first bin, /opt/r". Names only: a value is never shown.
func envSummary(p *planner.Plan) string {
	var order []string
	lots := map[string][]string{}
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
		key := strings.Join(what, ", ")
		if lots[key] == nil {
			order = append(order, key)
		}
		lots[key] = append(lots[key], lp.ID)
	}
	var parts []string
	for i, key := range order {
		if i == maxEnvGroups {
			parts = append(parts, "and "+plural(len(order)-i, "more group", "more groups"))
			break
		}
		ids := lots[key]
		label := "lot "
		if len(ids) > 1 {
			label = "lots "
		}
		if len(ids) > 5 {
			ids = append(ids[:5:5], "and "+thousands(len(lots[key])-5)+" more")
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
