package gitint

import (
	"os"
	"testing"
)

// TestMain gives git the test process's environment, as internal/cli does
// for cadence.
func TestMain(m *testing.M) {
	SetEnviron(os.Environ)
	// The tests run git as the lead: the guard's owner is no process
	// (pid 0), so the test binary's children are not a wave's steps.
	guardOwner = func() int { return 0 }
	os.Exit(m.Run())
}
