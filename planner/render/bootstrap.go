package render

import (
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// setupSummary says which pending lots' worktrees get something before
// their first step, grouped by what they get: "lots a, b: submodules,
// copy .env, config/local.yml, setup \"npm ci\"" ("submodules off" when
// set off). A sensitive setup is (sensitive).
func setupSummary(p *planner.Plan) string {
	var order []string
	lots := map[string][]string{}
	for _, lp := range p.Lots {
		if !lp.Action.Pending() || len(lp.Bootstrap) == 0 {
			continue
		}
		var what []string
		for i, b := range lp.Bootstrap {
			var got []string
			switch b.Submodules {
			case "on":
				got = append(got, "submodules")
			case "off":
				got = append(got, "submodules off")
			}
			if len(b.Copy) > 0 {
				got = append(got, "copy "+strings.Join(b.Copy, ", "))
			}
			if b.Setup != "" {
				got = append(got, "setup "+quoteSetup(b.Setup))
			}
			if i > 0 || b.Repo != lp.Repo {
				got[0] = "in " + b.Repo + " " + got[0]
			}
			what = append(what, got...)
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

// quoteSetup quotes a setup command's first line for the summary;
// (sensitive) stays as it is.
func quoteSetup(cmd string) string {
	if cmd == spec.Redacted {
		return cmd
	}
	if i := strings.IndexByte(cmd, '\n'); i >= 0 {
		cmd = cmd[:i] + " …"
	}
	return strconv.Quote(cmd)
}
