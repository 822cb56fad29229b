package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/cadence-run/cadence/gitint"
)

// witnessMain runs cadence as the witness client (the hidden subcommand
// gitint.WitnessCommand, which the guard's lead-side hook runs): args is
// the witness's socket, the report comes on stdin. It always exits 0, so
// that the lead's git never fails because of it; a refused report is said
// on stderr.
func witnessMain(args []string, stdin io.Reader, stderr io.Writer) ExitCode {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "cadence: "+gitint.WitnessCommand+": want the socket (it is cadence's own)")
		return ExitOK
	}
	answer, err := gitint.ReportToWitness(args[0], stdin)
	if err == nil && answer == "refused" {
		fmt.Fprintln(stderr, "cadence: this git runs below cadence (a step of the wave): its ref updates are not the lead's, and the wave's witness refused them")
	}
	return ExitOK
}

// witnessClient is the cadence binary (os.Executable), the witness client
// the guards' lead-side hooks run (gitint.Git.WitnessClient). Under
// testscript that is the test binary's copy named after the command,
// which dispatches on its name. "" when the binary cannot be found: the
// hooks then report nothing.
func witnessClient() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// guardGit is git for what installs or repairs the guards of a wave's
// repositories (apply, clean): starting from environ, its hooks naming
// the witness client.
func guardGit(environ []string) gitint.Git {
	return gitint.Git{Environ: environ, WitnessClient: witnessClient()}
}
