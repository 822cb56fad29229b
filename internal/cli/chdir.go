package cli

import (
	"fmt"
	"io"
	"os"
)

// changeDir applies the global -chdir=DIR (Terraform's -chdir): the
// process switches to DIR before the command runs, so every relative path
// the command is given or derives (the wave file, -var-file, -out,
// PLANFILE, the state file) is relative to DIR. An empty dir changes
// nothing. It returns goOn to go on, or ExitUsage when DIR is not a folder
// that can be entered (said on w).
func changeDir(w io.Writer, dir string) ExitCode {
	if dir == "" {
		return goOn
	}
	if err := os.Chdir(dir); err != nil {
		fmt.Fprintf(w, "cadence: -chdir=%s: %v\n", dir, unwrapPath(err))
		return ExitUsage
	}
	return goOn
}

// unwrapPath drops the *os.PathError's operation and path, which the
// message names already.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
