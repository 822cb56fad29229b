package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/internal/proc"
)

// TestSupervisorBeside: cadence-supervisor beside the cadence binary is
// the steps' supervisor when it is an executable file; otherwise the
// cadence binary itself is.
func TestSupervisorBeside(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "cadence")
	own := proc.Supervisor{Exe: exe, Argv0: "cad"}
	if got := supervisorFor(exe, "cad"); *got != own {
		t.Errorf("none beside: %+v", *got)
	}
	small := filepath.Join(dir, supervisorProgram)
	if err := os.WriteFile(small, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := supervisorFor(exe, "cad"); *got != own {
		t.Errorf("a file that is not executable beside: %+v", *got)
	}
	if err := os.Chmod(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := supervisorFor(exe, "cad"); *got != (proc.Supervisor{Exe: small, Argv0: supervisorProgram}) {
		t.Errorf("cadence-supervisor beside: %+v", *got)
	}
	if err := os.Remove(small); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := supervisorFor(exe, "cad"); *got != own {
		t.Errorf("a folder beside: %+v", *got)
	}
}
