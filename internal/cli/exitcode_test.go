package cli

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exitCodeDoc returns the user documentation that holds the exit-code
// tables: docs/commands.md, or README.md where there is no docs folder.
func exitCodeDoc(t *testing.T) (string, []string) {
	t.Helper()
	for _, path := range []string{"../../docs/commands.md", "../../README.md"} {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), "| `apply` exits |") {
			return path, strings.Split(string(b), "\n")
		}
	}
	t.Fatal("neither docs/commands.md nor README.md has apply's exit-code table")
	return "", nil
}

// tableAfter returns the rows of the Markdown table whose header line
// starts with header, the header row included.
func tableAfter(lines []string, header string) []string {
	for i, l := range lines {
		if !strings.HasPrefix(l, header) {
			continue
		}
		var rows []string
		for _, r := range lines[i:] {
			if !strings.HasPrefix(r, "|") {
				break
			}
			rows = append(rows, r)
		}
		return rows
	}
	return nil
}

func cells(row string) []string {
	f := strings.Split(strings.Trim(row, "|"), "|")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

// TestDocsExitCodes: the documentation's exit-code tables list exactly
// the codes of the ExitCode table: apply's table one row per apply code,
// the other commands' table one column per code every command shares.
func TestDocsExitCodes(t *testing.T) {
	path, lines := exitCodeDoc(t)

	rows := tableAfter(lines, "| `apply` exits |")
	var got []ExitCode
	for _, r := range rows[min(2, len(rows)):] { // after the header and the rule
		n, err := strconv.Atoi(cells(r)[0])
		if err != nil {
			t.Errorf("%s: apply's exit-code row %q does not start with a code", path, r)
			continue
		}
		got = append(got, ExitCode(n))
	}
	want := []ExitCode{ExitOK, ExitApplyNeedsLead, ExitApplyRefused, ExitApplySuspended, ExitApplyInterrupted}
	if !slices.Equal(got, want) {
		t.Errorf("%s: apply's exit-code table lists %v, the code %v", path, got, want)
	}

	rows = tableAfter(lines, "| command | 0 |")
	if len(rows) == 0 {
		t.Fatalf("%s has no command exit-code table", path)
	}
	got = nil
	for _, c := range cells(rows[0])[1:] {
		n, err := strconv.Atoi(c)
		if err != nil {
			t.Fatalf("%s: the command exit-code table's header cell %q is no code", path, c)
		}
		got = append(got, ExitCode(n))
	}
	if want := []ExitCode{ExitOK, ExitError, ExitUsage}; !slices.Equal(got, want) {
		t.Errorf("%s: the command exit-code table's columns are %v, the code's %v", path, got, want)
	}
}

// TestUsageExitCodes: cadence's usage text names every exit code.
func TestUsageExitCodes(t *testing.T) {
	var b strings.Builder
	usage(&b)
	text := b.String()
	_, tail, ok := strings.Cut(text, "Exit codes:")
	if !ok {
		t.Fatalf("the usage text has no exit codes:\n%s", text)
	}
	for _, c := range []ExitCode{ExitOK, ExitError, ExitUsage, ExitPending, ExitNeedsLead, ExitApplyNeedsLead, ExitApplyRefused, ExitApplySuspended, ExitApplyInterrupted} {
		if !strings.Contains(tail, strconv.Itoa(int(c))+" ") {
			t.Errorf("the usage text's exit codes do not name %d:\n%s", c, tail)
		}
	}
}
