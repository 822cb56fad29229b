package flock

import (
	"os"
	"path/filepath"
	"testing"
)

func openT(t *testing.T, path string) *File {
	t.Helper()
	f, err := Open(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func try(t *testing.T, f *File, shared bool) bool {
	t.Helper()
	var ok bool
	var err error
	if shared {
		ok, err = f.TryRLock()
	} else {
		ok, err = f.TryLock()
	}
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestFileExclusiveAndShared: two descriptions of one file exclude each
// other as flock(2) says: exclusive against anything, shared with shared;
// Unlock and Close both free the lock.
func TestFileExclusiveAndShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	a, b := openT(t, path), openT(t, path)

	if !try(t, a, false) {
		t.Fatal("TryLock of a free file refused")
	}
	if try(t, b, false) || try(t, b, true) {
		t.Fatal("a second description locked a file held exclusively")
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	if !try(t, b, true) {
		t.Fatal("TryRLock refused after Unlock")
	}
	if !try(t, a, true) {
		t.Fatal("two shared locks exclude each other")
	}
	if try(t, a, false) {
		t.Fatal("exclusive lock taken while another description holds a shared one")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !try(t, a, false) {
		t.Fatal("Close did not free the shared lock")
	}

	c := openT(t, path)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Lock(); err != nil {
		t.Fatalf("Lock after the holder closed: %v", err)
	}
	if err := c.RLock(); err != nil { // converts the held lock
		t.Fatalf("RLock of a held lock: %v", err)
	}
}

// TestFileOpen: Open creates the file with the mode asked for (under the
// umask), locks nothing, and Stat and Path name the opened file.
func TestFileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "y.lock")
	f := openT(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&^0o600 != 0 {
		t.Errorf("mode %v, want at most 0600", fi.Mode().Perm())
	}
	if got, err := f.Stat(); err != nil || !os.SameFile(got, fi) {
		t.Errorf("Stat = %v, %v; not the file at %s", got, err, path)
	}
	if f.Path() != path || f.OS().Name() != path {
		t.Errorf("Path %q, OS().Name() %q, want %q", f.Path(), f.OS().Name(), path)
	}
	if !try(t, openT(t, path), false) {
		t.Error("Open locked the file")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "no", "such", "dir"), 0o600); err == nil {
		t.Error("Open made a missing folder")
	}
}
