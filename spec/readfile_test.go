package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/safefile"
)

// readTree lays out a git work tree for the file() rules:
//
//	root/outside.txt              outside every tree
//	root/plain/wave.hcl           a wave file in no git work tree
//	root/repo/.git/
//	root/repo/shared/brief.md     elsewhere in the same work tree
//	root/repo/waves/wave.hcl      the wave file
//	root/repo/waves/sub/brief.md  in the wave's own folder tree
//	root/repo/waves/out -> root/outside.txt
//	root/repo/waves/in -> ../shared/brief.md
//	root/repo/waves/fifo          a named pipe
//	root/repo/waves/big           MaxFileBytes+1 bytes
func readTree(t *testing.T) (root string) {
	t.Helper()
	root = t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("outside.txt", "secret")
	write("plain/wave.hcl", "")
	write("repo/.git/HEAD", "ref: refs/heads/main\n")
	write("repo/shared/brief.md", "shared brief")
	write("repo/waves/sub/brief.md", "sub brief")
	write("repo/waves/big", strings.Repeat("x", MaxFileBytes+1))
	if err := os.Symlink(filepath.Join(root, "outside.txt"), filepath.Join(root, "repo/waves/out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../shared/brief.md", filepath.Join(root, "repo/waves/in")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "repo/waves/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// loadTitle loads a wave at root/rel whose lot title is expr (on line 3)
// and returns its title or its diagnostics' text, failing when loading
// does not return promptly (a FIFO must not hang it).
func loadTitle(t *testing.T, root, rel, expr string) (string, []string) {
	t.Helper()
	src := "wave \"w\" {}\nlot \"a\" {\n  title = " + expr + "\n  run = \"true\"\n}\n"
	file := filepath.Join(root, rel)
	type result struct {
		cfg  *Config
		errs []string
	}
	done := make(chan result, 1)
	go func() {
		cfg, diags := NewLoader().LoadBytes([]byte(src), file, Options{})
		var errs []string
		for _, d := range diags {
			if d.Subject == nil || d.Subject.Filename != file || d.Subject.Start.Line != 3 {
				t.Errorf("diagnostic %q at %v, want %s line 3", d.Summary, d.Subject, file)
			}
			errs = append(errs, d.Summary+": "+d.Detail)
		}
		done <- result{cfg, errs}
	}()
	select {
	case r := <-done:
		if len(r.errs) > 0 {
			return "", r.errs
		}
		return r.cfg.Lot("a").Title, nil
	case <-time.After(60 * time.Second):
		t.Fatalf("loading %s with title = %s did not return", rel, expr)
		return "", nil
	}
}

// TestFileRefused: file() and templatefile() refuse every path that is not
// a regular file of at most MaxFileBytes inside the wave's folder tree or
// git work tree, with a diagnostic at the call naming the rule.
func TestFileRefused(t *testing.T) {
	root := readTree(t)
	outside := filepath.Join(root, "outside.txt")
	for _, c := range []struct{ name, rel, expr, want string }{
		{"absolute path outside", "repo/waves/wave.hcl", `file("` + outside + `")`, "outside " + filepath.Join(root, "repo")},
		{"dot-dot escape of the work tree", "repo/waves/wave.hcl", `file("../../outside.txt")`, "is outside"},
		{"dot-dot escape without git", "plain/wave.hcl", `file("../outside.txt")`, "outside " + filepath.Join(root, "plain")},
		{"symlink out", "repo/waves/wave.hcl", `file("out")`, "resolves to " + outside},
		{"dev zero", "repo/waves/wave.hcl", `file("/dev/zero")`, "system file under /dev"},
		{"proc self environ", "repo/waves/wave.hcl", `file("/proc/self/environ")`, "system file under /proc"},
		{"named pipe", "repo/waves/wave.hcl", `file("fifo")`, "is a named pipe"},
		{"folder", "repo/waves/wave.hcl", `file("sub")`, "is a folder"},
		{"over the cap", "repo/waves/wave.hcl", `file("big")`, "larger than 1048576 bytes"},
		{"templatefile outside", "repo/waves/wave.hcl", `templatefile("` + outside + `", {})`, "outside"},
		{"templatefile pipe", "repo/waves/wave.hcl", `templatefile("fifo", {})`, "is a named pipe"},
	} {
		t.Run(c.name, func(t *testing.T) {
			title, errs := loadTitle(t, root, c.rel, c.expr)
			if len(errs) == 0 {
				t.Fatalf("read %s: title %q", c.expr, title)
			}
			if !strings.Contains(errs[0], c.want) || !strings.Contains(errs[0], "file") {
				t.Errorf("diagnostic %q, want %q", errs[0], c.want)
			}
		})
	}
}

// TestFileAllowed: a file in a subfolder of the wave's folder and a file
// elsewhere in the same git work tree (also through a symlink) are read.
func TestFileAllowed(t *testing.T) {
	root := readTree(t)
	for _, c := range []struct{ expr, want string }{
		{`file("sub/brief.md")`, "sub brief"},
		{`file("../shared/brief.md")`, "shared brief"},
		{`file("` + filepath.Join(root, "repo/shared/brief.md") + `")`, "shared brief"},
		{`file("in")`, "shared brief"},
		{`templatefile("sub/brief.md", {})`, "sub brief"},
	} {
		title, errs := loadTitle(t, root, "repo/waves/wave.hcl", c.expr)
		if len(errs) > 0 || title != c.want {
			t.Errorf("%s = %q, %v; want %q", c.expr, title, errs, c.want)
		}
	}
}

// fiftyThousandLots is a wave of 50,000 lots written as the planner's
// generator writes them (planner.GenerateWave: five repos, a title, a
// brief, a budget and an estimate, or a run command, and up to three
// dependencies), about 11 MiB.
func fiftyThousandLots() []byte {
	var b strings.Builder
	b.WriteString("wave \"big\" {\n  budget = \"500M\"\n  max_sessions = 4\n}\n")
	for i := range 5 {
		fmt.Fprintf(&b, "repo \"r%d\" {\n  path = \"repos/r%d\"\n  test = \"make test\"\n  parallel = 3\n}\n", i, i)
	}
	for i := range 50000 {
		fmt.Fprintf(&b, "lot \"L%d\" {\n  repo = repo.r%d\n  title = \"Lot number %d | with <markup> & a long title to render\"\n", i, i%5, i)
		if i%4 == 3 {
			fmt.Fprintf(&b, "  run = \"make step-%d\"\n", i)
		} else {
			fmt.Fprintf(&b, "  brief = \"Implement part %d of the feature in pkg/p%d/file.go.\"\n  budget = \"40k\"\n  estimate = \"%dm\"\n", i, i%50, 10+i%120)
		}
		if i > 2 {
			fmt.Fprintf(&b, "  depends_on = [lot.L%d, lot.L%d]\n", i/2, i-3)
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

// TestReadWaveFileTakesFiftyThousandLots: the wave file cap
// (MaxWaveBytes) takes the planner's generated wave of 50,000 lots, and a
// file past the cap is still refused.
func TestReadWaveFileTakesFiftyThousandLots(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "wave.hcl")
	src := fiftyThousandLots()
	if err := os.WriteFile(big, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadWaveFile(big); err != nil || len(got) != len(src) {
		t.Fatalf("a %d-byte wave of 50,000 lots: %d bytes read, %v", len(src), len(got), err)
	}
	over := filepath.Join(dir, "over.hcl")
	if err := os.WriteFile(over, make([]byte, MaxWaveBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadWaveFile(over); !errors.Is(err, safefile.ErrRefused) {
		t.Fatalf("a file of MaxWaveBytes+1 bytes: %v, want a refusal", err)
	}
}
