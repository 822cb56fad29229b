package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readmeBlock is a ```sh block of README.md or of a document under docs/:
// its commands (a line each, continuation lines joined), the line of each,
// and what the <!-- readme-test: ... --> comment just before it says.
type readmeBlock struct {
	file     string // README.md, docs/commands.md, ...
	line     int    // of the opening fence
	cmds     []string
	lines    []int
	skip     bool
	exit     int    // the exit code every command must have
	stderrRe string // a pattern every command's stderr must match ("" : none)
}

// readmeDirective is the comment before a block: "skip ...", or
// `exit N` optionally followed by `stderr "TEXT"` (a regular expression).
var readmeDirective = regexp.MustCompile(`^<!-- readme-test: (skip|exit (\d+)(?: stderr "([^"]*)")?)\b.*-->$`)

// readmeBlocks reads the ```sh blocks of the Markdown text md, the file
// file (its path from the clone's root).
func readmeBlocks(t *testing.T, file, md string) []readmeBlock {
	t.Helper()
	var blocks []readmeBlock
	lines := strings.Split(md, "\n")
	directive := ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "<!-- readme-test:") {
			directive = l
			continue
		}
		if l != "```sh" {
			if l != "" {
				directive = "" // a comment applies to the block right after it
			}
			continue
		}
		b := readmeBlock{file: file, line: i + 1}
		if directive != "" {
			m := readmeDirective.FindStringSubmatch(directive)
			if m == nil {
				t.Fatalf("%s:%d: unreadable %q", file, i, directive)
			}
			b.skip = m[1] == "skip"
			if m[2] != "" {
				b.exit, _ = strconv.Atoi(m[2])
			}
			b.stderrRe = m[3]
		}
		directive = ""
		cmd, start := "", 0
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			c := strings.TrimSpace(lines[i])
			if cmd == "" && (c == "" || strings.HasPrefix(c, "#")) {
				continue
			}
			if cmd == "" {
				start = i + 1
			}
			if s, ok := strings.CutSuffix(c, `\`); ok {
				cmd += s + " "
				continue
			}
			b.cmds, b.lines = append(b.cmds, cmd+c), append(b.lines, start)
			cmd = ""
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// docFiles are the documents whose ```sh blocks TestReadmeCommands runs,
// paths from the clone's root, in the order it runs them: README.md (the
// try-it comes first: the other documents' commands work on its result),
// then docs/*.md in file name order.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	files := []string{"README.md"}
	for _, d := range docs { // Glob sorts
		files = append(files, filepath.ToSlash(filepath.Join("docs", filepath.Base(d))))
	}
	return files
}

// readDoc reads a document by its path from the clone's root.
func readDoc(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeCommands runs the commands of the ```sh blocks of the README
// and of docs/*.md (docFiles), in order, in a folder that holds a copy of
// the examples (as a clone's root does), with the cadence under test as
// `cadence` and as `bin/cadence`: no document can show a command that
// does not work. A block after
// <!-- readme-test: skip --> is not run (installing, the test suite); one
// after <!-- readme-test: exit N stderr "RE" --> must end so. The commands
// that must be there (the quickstart, plan, status, answer...) are listed
// in wantCommands, so that dropping them from the documents fails too.
func TestReadmeCommands(t *testing.T) {
	if _, err := exec.LookPath("cadence"); err != nil {
		t.Fatalf("the test binary's cadence is not on PATH: %v", err)
	}
	var blocks []readmeBlock
	for _, f := range docFiles(t) {
		blocks = append(blocks, readmeBlocks(t, f, readDoc(t, f))...)
	}

	dir := t.TempDir()
	if err := copyExamples(filepath.Join("..", "..", "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	self, _ := exec.LookPath("cadence")
	for _, sub := range []string{"bin", "home"} { // home: a user's HOME exists
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(self, filepath.Join(dir, "bin", "cadence")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"HOME="+filepath.Join(dir, "home"),
		"CADENCE_HOME="+filepath.Join(dir, "cadence-home"),
		"CADENCE_CLAUDE_BIN=cadence-no-such-agent",
		"GIT_AUTHOR_NAME=cadence test", "GIT_AUTHOR_EMAIL=test@cadence.invalid",
		"GIT_COMMITTER_NAME=cadence test", "GIT_COMMITTER_EMAIL=test@cadence.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "NO_COLOR=1", noRaceExitSleep)

	ran := map[string]string{} // command → the document that ran it first
	for _, b := range blocks {
		if b.skip {
			continue
		}
		for i, c := range b.cmds {
			if ran[c] == "" {
				ran[c] = b.file
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			cmd := exec.CommandContext(ctx, "sh", "-c", c)
			cmd.Dir, cmd.Env = dir, env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			cancel()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("%s:%d: %s: %v", b.file, b.lines[i], c, err)
			}
			where := fmt.Sprintf("%s:%d: %s", b.file, b.lines[i], c)
			if code != b.exit {
				t.Errorf("%s\nexited %d, want %d\nstdout:\n%s\nstderr:\n%s", where, code, b.exit, stdout.String(), stderr.String())
				continue
			}
			if b.stderrRe != "" && !regexp.MustCompile(b.stderrRe).Match(stderr.Bytes()) {
				t.Errorf("%s\nstderr does not match %q:\n%s", where, b.stderrRe, stderr.String())
			}
			t.Logf("%s: exit %d", where, code)
		}
	}
	for _, want := range tryIt {
		if ran[want] != "" && ran[want] != "README.md" {
			t.Errorf("the try-it command %q is run from %s: it belongs on the README's first screen", want, ran[want])
		}
	}
	for _, want := range wantCommands {
		if ran[want] == "" {
			t.Errorf("no document runs %q any more (in a ```sh block that is not skipped): update README.md, docs/ or wantCommands", want)
		}
	}
}

// tryIt are the README's try-it commands: a fresh clone runs a real wave
// with them, so they stay in README.md itself.
var tryIt = wantCommands[:4]

// wantCommands are the commands TestReadmeCommands must find and run in
// the documents: the README's try-it and a form of each command a new user
// reaches for (docs/commands.md).
var wantCommands = []string{
	"sh examples/quickstart/setup.sh",
	"bin/cadence apply -auto-approve examples/quickstart/wave.hcl",
	"git -C examples/quickstart/repos/app log --oneline main",
	"bin/cadence status examples/quickstart/wave.hcl",
	"cadence validate examples/quickstart/wave.hcl",
	"cadence plan examples/quickstart/wave.hcl",
	"cadence plan -out quickstart.plan examples/quickstart/wave.hcl",
	"cadence show quickstart.plan",
	"cadence apply quickstart.plan",
	"cadence status examples/quickstart/wave.hcl",
	"cadence logs examples/quickstart/wave.hcl greeting",
	`cadence answer examples/quickstart/wave.hcl greeting "Say it in French."`,
}

// copyExamples copies the examples folder src to dst, leaving out what
// setup scripts and runs leave there (repos/, .cadence/, state files).
func copyExamples(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		name := info.Name()
		if info.IsDir() && (name == "repos" || name == ".cadence") {
			return filepath.SkipDir
		}
		if strings.Contains(name, ".state.json") {
			return nil
		}
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}
