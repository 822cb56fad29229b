package gitint

import (
	"os"
	"testing"
)

// TestMain gives git the test process's environment, as internal/cli does
// for cadence.
func TestMain(m *testing.M) {
	SetEnviron(os.Environ)
	os.Exit(m.Run())
}
