package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The flag table of docs/commands.md names every exit code of plan
// -detailed-exitcode: nothing to do, work pending, lots that need the lead.
func TestReadmeDetailedExitcode(t *testing.T) {
	b, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `-detailed-exitcode` |") {
			row = line
		}
	}
	if row == "" {
		t.Fatal("docs/commands.md has no flag table row for -detailed-exitcode")
	}
	for _, code := range []ExitCode{ExitOK, ExitPending, ExitNeedsLead} {
		if !strings.Contains(row, fmt.Sprintf("%d when", code)) {
			t.Errorf("the -detailed-exitcode row of docs/commands.md does not say when it exits %d:\n%s", code, row)
		}
	}
}
