package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
)

// outputFormatVersion is the format_version of every -json document
// but the plan's, the graph's and the diagnostics' (planner.FormatVersion):
// list, logs, answer, drop, stop, clean, fmt, init, hold, release, status
// and version (schemas/*.schema.json). It changes when a key is removed or
// changes meaning; a new key does not change it.
const outputFormatVersion = 1

// logsOutput is cadence logs -json: the lot's record in the state file
// (its journal: steps, questions, findings, warnings, backup refs; the
// shape of a lot in schemas/state.schema.json) and the files of its steps.
type logsOutput struct {
	FormatVersion int    `json:"format_version"`
	Wave          string `json:"wave"`
	StateFile     string `json:"state_file"`
	LotID         string `json:"lot_id"`
	// Lot is the lot as the state file records it.
	Lot *state.Lot `json:"lot"`
	// Worktrees are the lot's worktrees that are there (its own and its
	// neighbour worktrees), whole paths.
	Worktrees []string `json:"worktrees"`
	// StepFiles are the log and report files of each step, by step index
	// (the index in lot.steps).
	StepFiles []stepFiles `json:"step_files"`
	// Replaced are the folders of earlier runs set aside by -replace.
	Replaced []string `json:"replaced"`
}

// stepFiles are the files of one step.
type stepFiles struct {
	Step  int      `json:"step"`
	Files []string `json:"files"`
}

// stepOutput is cadence logs -step N -json: the step's files whole.
type stepOutput struct {
	FormatVersion int        `json:"format_version"`
	Wave          string     `json:"wave"`
	LotID         string     `json:"lot_id"`
	Step          int        `json:"step"`
	Files         []fileText `json:"files"`
}

// fileText is one file and its content (a report is JSON text in a string).
type fileText struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// writeJSON writes v as indented JSON (one document) on w.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// logsJSON prints logs -json of lot id of st (lay is the wave's layout).
func logsJSON(e *env, lay layout.Wave, st *state.State, id string) ExitCode {
	l := st.Lots[id]
	out := logsOutput{FormatVersion: outputFormatVersion, Wave: st.Wave, StateFile: lay.StateFile(), LotID: id, Lot: l,
		Worktrees: []string{}, StepFiles: []stepFiles{}, Replaced: []string{}}
	if l.Worktree != "" {
		if _, err := os.Stat(l.Worktree); err == nil {
			out.Worktrees = append(out.Worktrees, l.Worktree)
		}
		also, _ := filepath.Glob(layout.AlsoWorktree(l.Worktree, "*"))
		out.Worktrees = append(out.Worktrees, also...)
	}
	for i := range l.Steps {
		files, _ := filepath.Glob(lay.StepGlob(id, i))
		if files == nil {
			files = []string{}
		}
		out.StepFiles = append(out.StepFiles, stepFiles{Step: i, Files: files})
	}
	if earlier, _ := filepath.Glob(lay.ReplacedGlob(id)); earlier != nil {
		out.Replaced = earlier
	}
	if err := writeJSON(e.stdout, out); err != nil {
		fmt.Fprintf(e.stderr, "cadence logs: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// stepJSON prints logs -step N -json: the files (matches) of step n whole.
func stepJSON(e *env, wave, id string, n int, matches []string) ExitCode {
	out := stepOutput{FormatVersion: outputFormatVersion, Wave: wave, LotID: id, Step: n, Files: []fileText{}}
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			fmt.Fprintf(e.stderr, "cadence logs: %v\n", err)
			return ExitError
		}
		out.Files = append(out.Files, fileText{Path: m, Content: string(b)})
	}
	if err := writeJSON(e.stdout, out); err != nil {
		fmt.Fprintf(e.stderr, "cadence logs: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// answerOutput is cadence answer -json: the answer recorded.
type answerOutput struct {
	FormatVersion int    `json:"format_version"`
	File          string `json:"file"`
	LotID         string `json:"lot_id"`
	Question      string `json:"question"`
	Answer        string `json:"answer"`
}

// answerJSON prints answer -json.
func answerJSON(e *env, out answerOutput) ExitCode {
	if err := writeJSON(e.stdout, out); err != nil {
		fmt.Fprintf(e.stderr, "cadence answer: %v\n", err)
		return ExitError
	}
	return ExitOK
}
