package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// docSection is the text of the document file (a path from the clone's
// root, docs/commands.md) from the line starting with start to the next
// line starting with "## " or "### " (the end of the file when none).
func docSection(t *testing.T, file, start string) string {
	t.Helper()
	s := readDoc(t, file)
	i := strings.Index(s, "\n"+start)
	if strings.HasPrefix(s, start) {
		i = -1 // the document's first line
	} else if i < 0 {
		t.Fatalf("%s has no %q", file, start)
	}
	s = s[i+1:]
	if j := regexp.MustCompile(`\n##+ `).FindStringIndex(s[len(start):]); j != nil {
		s = s[:len(start)+j[0]]
	}
	return s
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	flagName = regexp.MustCompile(`(?:^|[\s\[(,])(-[a-z][a-z-]*)`)
)

// spanFlags are the flags a table row names as its own: in a code span that
// starts with a flag (`-json`, `-format markdown`) or with prefix (the
// row's own command, `cadence hold LABEL [-ttl 2h]`); a span naming another
// command (`apply -replace LOT`) does not count.
func spanFlags(row, prefix string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(row, -1) {
		span := m[1]
		if !strings.HasPrefix(span, "-") && (prefix == "" || !strings.HasPrefix(span, prefix)) {
			continue
		}
		for _, f := range flagName.FindAllStringSubmatch(span, -1) {
			if !slices.Contains(out, f[1]) {
				out = append(out, f[1])
			}
		}
	}
	return out
}

// runCadence runs the cadence under test with args; it returns the
// standard output and error together, and the exit code.
func runCadence(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "cadence", args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "CADENCE_HOME="+filepath.Join(cmd.Dir, "cadence-home"),
		"CADENCE_CLAUDE_BIN=cadence-no-such-agent", "NO_COLOR=1", noRaceExitSleep)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("cadence %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), code
}

// listsFlag reports whether a command's -h output lists the flag f.
func listsFlag(help, f string) bool {
	return regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f) + `\b`).MatchString(help)
}

// notTaken are flags a Commands row names as ones its command does not
// take: the command's -h must not list them.
var notTaken = map[string][]string{
	"graph": {"-offline"}, // "no cap, budget or `-offline` flag (always offline)"
}

// TestReadmeCommandTable checks the Commands table (docs/commands.md, the
// section before Exit codes) against the
// CLI: cadence help lists exactly the table's commands, each command's -h
// exits 0 and lists every flag its row names (a flag the row says it does
// not take is not listed).
func TestReadmeCommandTable(t *testing.T) {
	sec := docSection(t, "docs/commands.md", "# Commands\n")
	row := regexp.MustCompile("(?m)^\\| `cadence ([a-z]+)[^`]*` \\|.*$")
	rows := row.FindAllStringSubmatch(sec, -1)
	if len(rows) < 15 {
		t.Fatalf("found %d rows in the Commands table of docs/commands.md", len(rows))
	}
	help, code := runCadence(t, "help")
	if code != 0 {
		t.Fatalf("cadence help exited %d:\n%s", code, help)
	}
	var names []string
	for _, r := range rows {
		name := r[1]
		names = append(names, name)
		if !regexp.MustCompile(`(?m)^  ` + name + `\s`).MatchString(help) {
			t.Errorf("cadence help does not list %s", name)
		}
		out, code := runCadence(t, name, "-h")
		if code != 0 {
			t.Errorf("cadence %s -h exited %d:\n%s", name, code, out)
			continue
		}
		for _, f := range spanFlags(r[0], "cadence "+name) {
			if f == "-h" || slices.Contains(notTaken[name], f) {
				continue
			}
			if !listsFlag(out, f) {
				t.Errorf("docs/commands.md: the row of %s names %s; cadence %s -h does not list it", name, f, name)
			}
		}
		for _, f := range notTaken[name] {
			if listsFlag(out, f) {
				t.Errorf("docs/commands.md: the row of %s says it takes no %s; cadence %s -h lists it", name, f, name)
			}
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^Commands:\n((?:  .*\n)+)`).FindStringSubmatch(help)[1:] {
		for _, l := range strings.Split(strings.TrimRight(m, "\n"), "\n") {
			if name := strings.Fields(l)[0]; !slices.Contains(names, name) {
				t.Errorf("cadence help lists %s; the Commands table of docs/commands.md has no row of it", name)
			}
		}
	}
}

// TestReadmePlanApplyFlags checks the table of the flags of plan
// and apply: a flag marked (`plan` only) is listed by plan -h and not by
// apply -h, one marked (`apply` only) the other way round, any other by
// both.
func TestReadmePlanApplyFlags(t *testing.T) {
	s := readDoc(t, "docs/commands.md")
	i := strings.Index(s, "Flags of `plan` and `apply`")
	if i < 0 {
		t.Fatal("docs/commands.md has no table of the flags of plan and apply")
	}
	j := strings.Index(s[i:], "\n| flag | meaning |")
	if j < 0 {
		t.Fatal("the flags of plan and apply: no table")
	}
	table := s[i+j+1:]
	if k := strings.Index(table, "\n\n"); k >= 0 {
		table = table[:k]
	}
	plan, code := runCadence(t, "plan", "-h")
	if code != 0 {
		t.Fatalf("cadence plan -h exited %d", code)
	}
	apply, code := runCadence(t, "apply", "-h")
	if code != 0 {
		t.Fatalf("cadence apply -h exited %d", code)
	}
	n := 0
	for _, l := range strings.Split(table, "\n")[2:] {
		cells := strings.SplitN(l, " | ", 2)
		if len(cells) < 2 {
			t.Fatalf("unreadable row %q", l)
		}
		inPlan, inApply := !strings.Contains(cells[1], "(`apply` only)"), !strings.Contains(cells[1], "(`plan` only)")
		for _, f := range spanFlags(cells[0], "") {
			n++
			if got := listsFlag(plan, f); got != inPlan {
				t.Errorf("docs/commands.md: %s for plan: %v; cadence plan -h lists it: %v", f, inPlan, got)
			}
			if got := listsFlag(apply, f); got != inApply {
				t.Errorf("docs/commands.md: %s for apply: %v; cadence apply -h lists it: %v", f, inApply, got)
			}
		}
	}
	if n < 15 {
		t.Fatalf("found %d flags in the table", n)
	}
}
