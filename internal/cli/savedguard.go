package cli

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// planOptions are the apply flags that change what is planned: Terraform
// refuses them with a saved plan too, since the plan was the review. -var
// and -var-file may be given again, and must then match the saved ones.
var planOptions = []string{"target", "replace", "budget", "budget-usd", "max-sessions", "jobs", "offline"}

// refuseSavedOptions refuses apply PLANFILE when a flag that changes the
// plan was given (exit 2), or when the plan was saved with -offline (it
// skipped the machine checks and recorded no base commits, so nothing says
// the bases are where they were). It returns -1 to go on.
func refuseSavedOptions(e *env, fs *flag.FlagSet, s *planner.SavedPlan) int {
	var given []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(planOptions, f.Name) {
			given = append(given, "-"+f.Name)
		}
	})
	if len(given) > 0 {
		fmt.Fprintf(e.stderr, "cadence apply: %s cannot be given with a saved plan, which runs exactly as it was planned: run cadence plan -out again with them\n", strings.Join(given, ", "))
		return exitRefused
	}
	if s.Offline {
		fmt.Fprintf(e.stderr, "cadence apply: the plan was saved with -offline: it skipped the machine checks and recorded no base commits, so it cannot be applied; run cadence plan -out without -offline\n")
		return exitRefused
	}
	return -1
}

// isWaveFileName reports whether name is named as a wave file is: *.hcl,
// or *.json (HCL's JSON syntax, spec.IsJSON).
func isWaveFileName(name string) bool {
	return strings.HasSuffix(name, ".hcl") || spec.IsJSON(name)
}

// refuseOverwrite refuses plan -out PATH when a file is at path that is
// not a saved plan: the wave file, a var file, a file() input or anything
// else a mistyped -out would destroy. A missing file or an older saved
// plan is fine.
func refuseOverwrite(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("-out %s: it is not a regular file", path)
	}
	if _, err := planner.ReadSaved(path); err != nil {
		return fmt.Errorf("-out %s would overwrite a file that is not a saved plan (%v); name a new file", path, err)
	}
	return nil
}
