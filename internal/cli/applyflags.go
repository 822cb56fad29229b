package cli

import (
	"fmt"
	"strings"
)

// planOnlyFlags are plan's flags that apply does not take, with what to
// do instead. apply does not register them (its -h does not list them);
// given to apply they are a usage error (exit 2) with this hint rather
// than the flag package's bare "flag provided but not defined".
var planOnlyFlags = map[string]string{
	"offline":           "-offline is for plan only: apply needs the repositories and the agent",
	"out":               "-out is a flag of plan: save the plan with cadence plan -out PLANFILE, then run it with cadence apply PLANFILE",
	"format":            "-format is a flag of plan: apply prints text, or events with -json",
	"detailed-exitcode": "-detailed-exitcode is a flag of plan: apply's exit code already says how the wave ended",
}

// refusePlanOnly reports the first plan-only flag among apply's args
// (before a "--"; the value of a flag that takes one is skipped) and
// returns ExitUsage, or goOn when there is none. isBool tells whether a flag
// apply knows takes no value.
func refusePlanOnly(e *env, args []string, isBool func(name string) (known, boolean bool)) ExitCode {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if hint, ok := planOnlyFlags[name]; ok {
			fmt.Fprintf(e.stderr, "cadence apply: %s\n", hint)
			return ExitUsage
		}
		if known, boolean := isBool(name); known && !boolean && !hasValue {
			i++ // the flag's value, which may start with "-"
		}
	}
	return goOn
}

// isBool tells whether the set has a flag called name and whether it takes
// no value (a boolean flag).
func (fs *flagSet) isBool(name string) (known, boolean bool) {
	fl := fs.Lookup(name)
	if fl == nil {
		return false, false
	}
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return true, ok && b.IsBoolFlag()
}
