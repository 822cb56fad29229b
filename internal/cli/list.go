package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// statusNotStarted is list's status of a lot the state file has no record
// of (or of every lot when there is no state file yet).
const statusNotStarted = "pending"

// listedLot is one lot of cadence list -json.
type listedLot struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Kind is "agent" or "command".
	Kind string `json:"kind"`
	// Status is the lot's status in the state file (state.LotStatus; a lot
	// recorded running while no apply runs is "interrupted"), or "pending"
	// when the state has no record of it.
	Status    string   `json:"status"`
	DependsOn []string `json:"depends_on"`
}

// listOutput is cadence list -json.
type listOutput struct {
	FormatVersion int         `json:"format_version"`
	Wave          string      `json:"wave"`
	File          string      `json:"file"`
	StateFile     string      `json:"state_file,omitempty"`
	Lots          []listedLot `json:"lots"`
}

func runList(e *env, args []string) ExitCode {
	fs := newFlags(e, "list", "[FILE]", "List the wave's lots in file order: id, title (the id when the lot sets none), kind,\nstatus from the state file (pending when the lot has not started) and dependencies.")
	var vars, varFiles listFlag
	fs.varFlags(&vars, &varFiles)
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	file, ok := oneFile(e, "list", pos)
	if !ok {
		return ExitUsage
	}
	w, diags := e.loadWave(file, spec.Options{Vars: vars, VarFiles: varFiles})
	if !diags.HasErrors() {
		if err := w.readState(); err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unreadable state file", Detail: err.Error()})
		}
	}
	if diags.HasErrors() {
		e.writeDiags(e.stderr, diags, w.loader.Files, false)
		return ExitError
	}
	out := listOutput{FormatVersion: outputFormatVersion, Wave: w.cfg.Wave.Name, File: file, Lots: []listedLot{}}
	stopped := true
	if w.state != nil {
		lay := e.layoutOf(file, "")
		out.StateFile = lay.StateFile()
		stopped = lockHolder(lay.Lock()) == nil
	}
	for _, l := range w.cfg.Lots {
		ll := listedLot{ID: l.ID, Title: l.Sensitive.Show("title", l.Title), Kind: l.Kind.String(), Status: statusNotStarted, DependsOn: []string{}}
		if ll.Title == "" {
			ll.Title = l.ID
		}
		if w.state != nil {
			if sl := w.state.Lots[l.ID]; sl != nil {
				ll.Status = string(shownStatus(sl, stopped))
			}
		}
		for _, d := range l.DependsOn {
			ll.DependsOn = append(ll.DependsOn, d.ID)
		}
		out.Lots = append(out.Lots, ll)
	}
	if fs.json {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return ExitOK
	}
	fmt.Fprintf(e.stdout, "Wave %q (%s): %d lots\n\n", out.Wave, file, len(out.Lots))
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LOT\tTITLE\tKIND\tSTATUS\tNEEDS")
	for _, l := range out.Lots {
		needs := strings.Join(l.DependsOn, ", ")
		if needs == "" {
			needs = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.ID, clipTitle(l.Title), l.Kind, l.Status, needs)
	}
	tw.Flush()
	return ExitOK
}

// clipTitle is a title on one line, at most 60 characters, its control
// characters made visible (visibleControls).
func clipTitle(s string) string {
	s = visibleControls(strings.Join(strings.Fields(s), " "), false)
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}
