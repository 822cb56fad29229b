package cli

import (
	"fmt"

	"github.com/cadence-run/cadence/internal/diskspace"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// The free-space preflight (docs/running.md, "Free-space
// preflight"): plan and apply measure
// the file systems of the wave's folder, CADENCE_HOME and the worktrees
// folder; below CADENCE_WARN_FREE (diskspace.DefaultWarn) they warn, below
// CADENCE_MIN_FREE (diskspace.DefaultFloor) they refuse. "0" turns a
// threshold off. An apply checks the floor again before each lot starts
// (executor.Options.MinFree).

// freeThresholds are the warning threshold and the floor, in bytes.
func (e *env) freeThresholds() (warn, floor uint64, err error) {
	read := func(name string, def uint64) (uint64, error) {
		v := e.getenv(name)
		if v == "" {
			return def, nil
		}
		b, err := spec.ParseBytes(v)
		if err != nil {
			return 0, fmt.Errorf("%s: %v", name, err)
		}
		return uint64(b), nil
	}
	if warn, err = read("CADENCE_WARN_FREE", diskspace.DefaultWarn); err != nil {
		return 0, 0, err
	}
	floor, err = read("CADENCE_MIN_FREE", diskspace.DefaultFloor)
	return warn, floor, err
}

// freePlaces are the folders a wave's apply writes in.
func (e *env) freePlaces(w *wave) []diskspace.Place {
	lay := e.layoutOf(w.file, w.cfg.Wave.Name).WithWorktrees(w.cfg.Wave.Worktrees)
	return []diskspace.Place{
		{Name: "the wave's folder", Path: w.cfg.Dir},
		{Name: "CADENCE_HOME", Path: lay.Home()},
		{Name: "the worktrees folder", Path: lay.WorktreesDir()},
	}
}

// freeSpaceDiags is the preflight's verdict as diagnostics: a warning per
// file system below the warning threshold, an error per one below the
// floor.
func (e *env) freeSpaceDiags(w *wave) hcl.Diagnostics {
	warn, floor, err := e.freeThresholds()
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid free-space threshold", Detail: err.Error() + "."}}
	}
	warns, refused := diskspace.Check(e.freePlaces(w), warn, floor)
	var diags hcl.Diagnostics
	for _, l := range refused {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Too little free space",
			Detail: fmt.Sprintf("Only %s: below the floor of %s (CADENCE_MIN_FREE). Free some space, or lower CADENCE_MIN_FREE (\"0\" turns the check off).", l, diskspace.Bytes(floor))})
	}
	for _, l := range warns {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Low free space",
			Detail: fmt.Sprintf("Only %s: below %s (CADENCE_WARN_FREE). Steps' logs, worktrees and the state need room; an apply stops starting lots below %s (CADENCE_MIN_FREE).", l, diskspace.Bytes(warn), diskspace.Bytes(floor))})
	}
	return diags
}
