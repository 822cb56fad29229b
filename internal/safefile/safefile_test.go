package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead: every kind of file that is not a bounded regular file is
// refused before it is read (a FIFO without blocking), and a regular file
// within the bounds is read.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	must(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "ok.txt"), []byte("fine"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("x", 11)), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "outside.txt"), []byte("secret"), 0o644))
	must(t, os.Symlink("../outside.txt", filepath.Join(root, "out")))
	must(t, os.Symlink("/dev/zero", filepath.Join(root, "zero")))
	must(t, os.Symlink("/proc/self/environ", filepath.Join(root, "environ")))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))

	b, err := ReadWithin(root, filepath.Join(root, "ok.txt"), 10)
	if err != nil || string(b) != "fine" {
		t.Fatalf("ok.txt: %q, %v", b, err)
	}
	for _, c := range []struct{ name, want string }{
		{"big.txt", "larger than 10 bytes"},
		{"out", "outside " + root},
		{"zero", "system file under /dev"},
		{"environ", "system file under /proc"},
		{"fifo", "is a named pipe"},
		{"sub", "is a folder"},
	} {
		_, err := ReadWithin(root, filepath.Join(root, c.name), 10)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal with %q", c.name, err, c.want)
		}
	}
	if _, err := Read(filepath.Join(root, "nope"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	// Without a root, a link out of the folder is read (var files given on
	// the command line may be anywhere); system files still are not.
	if b, err := Read(filepath.Join(root, "out"), 10); err != nil || string(b) != "secret" {
		t.Errorf("Read out: %q, %v", b, err)
	}
	if _, err := Read(filepath.Join(root, "zero"), 0); !errors.Is(err, ErrRefused) {
		t.Errorf("Read zero without a limit: %v, want a refusal", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
