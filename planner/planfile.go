package planner

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"
)

// SavedPlanKind marks a saved plan file.
const SavedPlanKind = "cadence-plan"

// SavedPlan is what plan -out writes and apply PLANFILE reads: the inputs of
// the plan and the digests that must still hold when it is applied.
type SavedPlan struct {
	FormatVersion int    `json:"format_version"`
	Kind          string `json:"kind"`
	// WaveFile is the wave file's absolute path.
	WaveFile string `json:"wave_file"`
	// WaveDigest and StateDigest identify the bytes planned from ("" for no
	// state file yet).
	WaveDigest  string `json:"wave_digest"`
	StateDigest string `json:"state_digest"`
	// BaseSHAs are the base commits of the repositories, by repo name.
	BaseSHAs map[string]string `json:"base_shas"`
	// Vars, VarFiles, Targets, Replace, Budget, BudgetUSD (micro-dollars),
	// MaxSessions and Jobs are the plan's options, so that apply plans the
	// same way.
	Vars        []string  `json:"vars,omitempty"`
	VarFiles    []string  `json:"var_files,omitempty"`
	Targets     []string  `json:"targets,omitempty"`
	Replace     []string  `json:"replace,omitempty"`
	Budget      int64     `json:"budget,omitempty"`
	BudgetUSD   int64     `json:"budget_usd_micros,omitempty"`
	MaxSessions int       `json:"max_sessions,omitempty"`
	Jobs        int       `json:"jobs,omitempty"`
	Offline     bool      `json:"offline,omitempty"`
	Created     time.Time `json:"created"`
	// Summary is the plan's one-line summary, for people reading the file.
	Summary string `json:"summary"`
}

// Stale compares a saved plan with the current digests and base commits and
// returns what changed (empty when the plan still holds).
func (s *SavedPlan) Stale(waveDigest, stateDigest string, baseSHAs map[string]string) []string {
	var why []string
	if s.WaveDigest != waveDigest {
		why = append(why, fmt.Sprintf("the wave file %s changed", s.WaveFile))
	}
	if s.StateDigest != stateDigest {
		why = append(why, "the state file changed (another apply ran)")
	}
	names := make([]string, 0, len(s.BaseSHAs))
	for n := range s.BaseSHAs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if now := baseSHAs[n]; now != s.BaseSHAs[n] {
			why = append(why, fmt.Sprintf("repo %s: base moved from %.12s to %.12s", n, s.BaseSHAs[n], now))
		}
	}
	return why
}

// WriteSaved writes a saved plan file.
func WriteSaved(path string, s *SavedPlan) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadSaved reads a saved plan file, refusing files that are not one.
func ReadSaved(path string) (*SavedPlan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s SavedPlan
	if err := json.Unmarshal(b, &s); err != nil || s.Kind != SavedPlanKind {
		return nil, fmt.Errorf("%s is not a saved cadence plan", path)
	}
	if s.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%s is a saved plan of format %d; this cadence reads %d", path, s.FormatVersion, FormatVersion)
	}
	return &s, nil
}
