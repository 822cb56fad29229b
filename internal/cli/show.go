package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/planner/render"
)

// runShow prints a saved plan (plan -out) as plan printed it: text (the
// same renderer), -json (the plan's JSON form, schemas/plan.schema.json)
// or -format markdown. It renders the plan the file holds (its JSON form,
// where sensitive values are already (sensitive)); it plans nothing again.
// When an input of the plan has changed since (the wave file, a file it
// reads, a var file, env()), a note on the standard error says that apply
// would refuse it. With no argument it is a usage error: the state of a
// wave is cadence status.
func runShow(e *env, args []string) ExitCode {
	fs := newFlags(e, "show", "PLANFILE", "Print a saved plan (written by plan -out) as plan printed it: text, -json, or\n-format markdown. Plans nothing again; says on the standard error when the plan is stale.\nThe state of a wave is cadence status.")
	format := fs.String("format", "text", "output format: text, json or markdown")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "cadence show: usage: cadence show [-json | -format markdown] PLANFILE (a plan saved by cadence plan -out; the state of a wave is cadence status)")
		return ExitUsage
	}
	if fs.json {
		*format = "json"
	}
	rend := e.planRenderers()[*format]
	if rend == nil || *format == "dot" || *format == "mermaid" {
		fmt.Fprintf(e.stderr, "cadence show: unknown -format %q (text, json or markdown)\n", *format)
		return ExitUsage
	}
	file := pos[0]
	s, err := planner.ReadSaved(file)
	switch {
	case errors.Is(err, planner.ErrNotSaved):
		fmt.Fprintf(e.stderr, "cadence show: %v: cadence plan -out PLANFILE writes one (the plan of a wave file is cadence plan %s)\n", err, file)
		return ExitError
	case err != nil:
		fmt.Fprintf(e.stderr, "cadence show: %v\n", err)
		return ExitError
	case len(s.Plan) == 0:
		fmt.Fprintf(e.stderr, "cadence show: %s was saved by a cadence that did not keep the plan in it: plan again with -out\n", file)
		return ExitError
	}
	p, err := render.ParseJSON(s.Plan)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence show: %s: %v\n", file, err)
		return ExitError
	}
	if err := rend(e.stdout, p); err != nil {
		fmt.Fprintf(e.stderr, "cadence show: %v\n", err)
		return ExitError
	}
	if why := s.Stale(diskInputs(s, nil)); len(why) > 0 {
		fmt.Fprintf(e.stderr, "cadence show: note: the saved plan is stale (%s): cadence apply %s would refuse it; plan again.\n", strings.Join(why, "; "), file)
	}
	return ExitOK
}
