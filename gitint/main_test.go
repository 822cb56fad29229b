package gitint

import (
	"fmt"
	"os"
	"testing"
)

// TestMain makes the test binary the witness client of the guards it
// installs.
func TestMain(m *testing.M) {
	// The test binary is the witness client of the guards it installs,
	// as the cadence binary is cadence's.
	if len(os.Args) == 3 && os.Args[1] == WitnessCommand {
		answer, err := ReportToWitness(os.Args[2], os.Stdin)
		fmt.Println(answer)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(0)
	}
	if exe, err := os.Executable(); err == nil {
		testWitnessClient = exe
	}
	// The tests run git as the lead: the guard's owner is no process
	// (pid 0), so the test binary's children are not a wave's steps.
	guardOwner = func() int { return 0 }
	os.Exit(m.Run())
}

// tgit is git starting from the test process's environment as it is now
// (after the test's t.Setenv), as internal/cli makes it for cadence.
func tgit() Git { return Git{Environ: os.Environ(), WitnessClient: testWitnessClient} }

// testWitnessClient is the test binary, the witness client of the guards
// the tests install (TestMain).
var testWitnessClient string

// trepos is Repos over tgit.
func trepos() *Repos {
	g := NewRepos(os.Environ())
	g.Git = tgit()
	return g
}
