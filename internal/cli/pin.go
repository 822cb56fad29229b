package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// cadenceVersion is cadence's version as a wave's state records it and
// compares it (docs/running.md, "The same tool for
// a whole wave"): e.version when set (tests
// set it: the test binary's own build info must not matter), else
// pinVersion of this build, computed once.
func (e *env) cadenceVersion() string {
	if e.version == "" {
		e.version = pinVersion(readBuildVersion(), os.Executable)
	}
	return e.version
}

// pinVersion is the version line of `cadence version` (buildVersion.String:
// the release or module version, and the commit, its time and dirty flag
// when built from a checkout). Two builds are the same cadence when these
// strings are equal, so a dirty build never equals a clean one of its
// revision. Two dirty builds of one revision may differ in their code: a
// dirty build adds the SHA-256 of its executable (", binary sha256:…", 12
// hex digits), which Go's reproducible builds keep equal for the same
// source. exe finds the executable (os.Executable); when it or the read
// fails, the build is marked ", binary unknown" (then it compares equal
// only to another such build of that revision).
func pinVersion(v buildVersion, exe func() (string, error)) string {
	s := v.String()
	if !v.Dirty {
		return s
	}
	if d, err := fileDigest(exe); err == nil {
		return s + ", binary sha256:" + d[:12]
	}
	return s + ", binary unknown"
}

// fileDigest is the hex SHA-256 of the file exe names.
func fileDigest(exe func() (string, error)) (string, error) {
	path, err := exe()
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
