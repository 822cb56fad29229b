package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxGitPerLot is the ceiling of git processes per command lot that
// commits once : the lot's own
// `git add` and `git commit` and all of cadence's git calls for it
// (worktree, guards, integration). bench/gitfloor.py measures the same
// with 20 lots; bench/README.md has the table. It includes the checkout
// guard's two `git status` of the lead's checkout around each step that
// runs outside a sandbox (docs/integration.md, "Your checkout").
const maxGitPerLot = 14

// TestGitProcessesPerLot counts, with a `git` first on PATH that logs its
// arguments and execs the real git, the git processes of a wave of one
// command lot and of a wave of four (parallel = 4, so that lots finish
// while the base moves and are rebased): what each lot beyond the first
// adds may not pass maxGitPerLot. The wave's own calls (preflight, the
// guard, the remotes at its start) are counted once, in both. A count, not
// a time: it does not depend on the machine's load.
func TestGitProcessesPerLot(t *testing.T) {
	t.Parallel()
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	one, _ := countGit(t, realGit, 1)
	four, by := countGit(t, realGit, 4)
	if perLot := float64(four-one) / 3; four-one > 3*maxGitPerLot {
		t.Errorf("each command lot beyond the first adds %.2f git processes, more than %d (a wave of 1 lot: %d; of 4: %d); the wave of 4 by subcommand:\n%s",
			perLot, maxGitPerLot, one, four, by)
	} else {
		t.Logf("git processes: a wave of 1 lot %d, of 4 lots %d: %.2f per lot beyond the first", one, four, perLot)
	}
}

// countGit applies a wave of n command lots in a fresh repository with the
// counting git first on PATH, checks that every lot landed on main, and
// returns the count of git processes and a table of them by subcommand.
func countGit(t *testing.T, realGit string, n int) (int, string) {
	t.Helper()
	dir := t.TempDir()
	repo := filepath.Join(dir, "app")
	ident := []string{"GIT_AUTHOR_NAME=cadence test", "GIT_AUTHOR_EMAIL=test@cadence.invalid",
		"GIT_COMMITTER_NAME=cadence test", "GIT_COMMITTER_EMAIL=test@cadence.invalid"}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(realGit, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append(ident, "HOME="+home)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitRun(dir, "init", "-q", "-b", "main", repo)
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(repo, "add", "README.md")
	gitRun(repo, "commit", "-qm", "init")
	var wave strings.Builder
	wave.WriteString("wave \"w\" {}\n\nrepo \"app\" {\n  path     = \"app\"\n  base     = \"main\"\n  parallel = 4\n}\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&wave, "\nlot \"l%d\" {\n  repo = repo.app\n  run  = \"echo %d > f%d; git add f%d; git commit -qm l%d\"\n}\n", i, i, i, i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "wave.hcl"), []byte(wave.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "git.log")
	// The line is written at once: concurrent gits do not interleave.
	script := "#!/bin/sh\nus=$(printf '\\037'); line=\nfor a in \"$@\"; do line=\"$line$a$us\"; done\n" +
		"printf '%s\\n' \"$line\" >> " + shQuote(logPath) + "\nexec " + shQuote(realGit) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("cadence", "apply", "-auto-approve", "-no-color", "-jobs", "4", "wave.hcl")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(ident,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home, "CADENCE_HOME="+filepath.Join(dir, "cadence-home"),
		"CADENCE_CLAUDE_BIN=cadence-no-such-agent", "NO_COLOR=1", noRaceExitSleep)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("apply of %d lots: %v\n%s", n, err, out)
	}
	if got := gitRun(repo, "rev-list", "--count", "main"); got != fmt.Sprint(n+1) {
		t.Fatalf("apply of %d lots: main has %s commits, want %d", n, got, n+1)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	total := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		total++
		by[gitSubcommand(strings.Split(strings.TrimSuffix(line, "\x1f"), "\x1f"))]++
	}
	var rows []string
	for k, v := range by {
		rows = append(rows, fmt.Sprintf("%5d  %s", v, k))
	}
	sort.Strings(rows)
	return total, strings.Join(rows, "\n")
}

// gitSubcommand names a git call by its subcommand and first argument,
// after the -c and -C options.
func gitSubcommand(args []string) string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if args[i] == "-c" || args[i] == "-C" {
			i++
		}
		i++
	}
	if i >= len(args) {
		return "?"
	}
	if i+1 < len(args) {
		return args[i] + " " + args[i+1]
	}
	return args[i]
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
