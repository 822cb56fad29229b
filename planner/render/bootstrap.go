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
	var g lotGroups
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
		g.add(strings.Join(what, ", "), lp.ID)
	}
	return g.String()
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
