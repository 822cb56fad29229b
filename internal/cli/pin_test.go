package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPinVersion: a clean build is its version line; a dirty one adds its
// binary's digest, so two dirty builds of one revision differ when their
// binaries do.
func TestPinVersion(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	os.WriteFile(one, []byte("binary one"), 0o755)
	os.WriteFile(two, []byte("binary two"), 0o755)
	at := func(p string) func() (string, error) { return func() (string, error) { return p, nil } }
	clean := buildVersion{Version: "dev", Revision: "0123456789abcdef0123456789abcdef01234567"}
	dirty := clean
	dirty.Dirty = true
	if got := pinVersion(clean, at(one)); got != "dev, revision 0123456789ab" {
		t.Errorf("clean: %q", got)
	}
	a, b := pinVersion(dirty, at(one)), pinVersion(dirty, at(two))
	if !strings.HasPrefix(a, "dev, revision 0123456789ab (modified: uncommitted changes), binary sha256:") || a == b {
		t.Errorf("dirty builds: %q and %q", a, b)
	}
	if again := pinVersion(dirty, at(one)); again != a {
		t.Errorf("the same dirty binary: %q then %q", a, again)
	}
	if got := pinVersion(dirty, func() (string, error) { return "", errors.New("no") }); !strings.HasSuffix(got, ", binary unknown") {
		t.Errorf("unknown binary: %q", got)
	}
	e := &env{version: "v9.9.9"}
	if got := e.cadenceVersion(); got != "v9.9.9" {
		t.Errorf("the env's version (tests set it): %q", got)
	}
}
