package cli

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
)

//go:embed starter.hcl
var starterWave []byte

func runInit(e *env, args []string) ExitCode {
	fs := newFlags(e, "init", "[FILE]", "Write a commented starter wave file (default wave.hcl). An existing file is\nnever overwritten. The .gitignore beside it gets the lines that keep what cadence\nwrites there (state, journal, lock, .cadence/) out of git.")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	file, ok := oneFile(e, "init", pos)
	if !ok {
		return ExitUsage
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if os.IsExist(err) {
		fmt.Fprintf(e.stderr, "cadence init: %s already exists; left unchanged\n", file)
		return ExitError
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence init: %v\n", err)
		return ExitError
	}
	if _, err := f.Write(starterWave); err != nil {
		f.Close()
		fmt.Fprintf(e.stderr, "cadence init: %v\n", err)
		return ExitError
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(e.stderr, "cadence init: %v\n", err)
		return ExitError
	}
	gi, n, err := ignoreBeside(filepath.Dir(file))
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence init: %v\n", err)
		return ExitError
	}
	if fs.json {
		abs, _ := filepath.Abs(file)
		out := initOutput{FormatVersion: outputFormatVersion, Path: file, AbsPath: abs}
		if n > 0 {
			out.GitIgnore, out.GitIgnoreLines = gi, n
		}
		if err := writeJSON(e.stdout, out); err != nil {
			fmt.Fprintf(e.stderr, "cadence init: %v\n", err)
			return ExitError
		}
		return ExitOK
	}
	fmt.Fprintf(e.stdout, "Wrote %s. Edit the repo path and the lots, then: cadence plan %s\n", file, file)
	if n > 0 {
		fmt.Fprintf(e.stdout, "Added %d lines to %s: the state, its journal, lock and request folder, and .cadence/ stay out of git.\n", n, gi)
	}
	return ExitOK
}

// initOutput is cadence init -json: the wave file written, as given and
// absolute. (An existing file is an error: nothing is written, stdout is
// empty.)
type initOutput struct {
	FormatVersion int    `json:"format_version"`
	Path          string `json:"path"`
	AbsPath       string `json:"abs_path"`
	// GitIgnore is the .gitignore that got GitIgnoreLines lines (absent
	// when it had them all).
	GitIgnore      string `json:"gitignore,omitempty"`
	GitIgnoreLines int    `json:"gitignore_lines,omitempty"`
}
