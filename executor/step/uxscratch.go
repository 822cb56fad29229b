package step

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// uxScratchPrefix begins the name of every UX session's scratch folder.
const uxScratchPrefix = "cadence-ux-"

// uxScratchDir is the scratch folder (agent.Browser.Scratch, the
// session's working folder) of the UX session sessionID of the wave
// waveID (its state's lineage) in the machine's temporary folder tmp:
// tmp/cadence-ux-W-S, W the first 8 hex digits of waveID's SHA-256 and S
// the first 12 of sessionID's. The name is a rule, not a random one, so
// that a later apply finds what a killed session left: Recount the
// session's transcript (the agent CLI keeps it under its working folder's
// name) and tidyUXScratch the folder itself. It is short because chromium
// puts a socket in it, whose path holds at most 107 bytes (sun_path).
func uxScratchDir(tmp, waveID, sessionID string) string {
	return filepath.Join(tmp, uxScratchPrefix+hexSum(waveID, 8)+"-"+hexSum(sessionID, 12))
}

func hexSum(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// uxTempDir is the machine's temporary folder (os.TempDir) with its
// symbolic links resolved, as the agent CLI names its working folder.
func uxTempDir() string {
	t := os.TempDir()
	if r, err := filepath.EvalSymlinks(t); err == nil {
		return r
	}
	return t
}

// makeUXScratch makes the empty scratch folder dir (uxScratchDir),
// readable by its owner only; a folder of that name left before (a
// retried session) is removed first, a symbolic link or a file there is
// an error.
func makeUXScratch(dir string) error {
	if fi, err := os.Lstat(dir); err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: fs.ErrExist}
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	return os.Mkdir(dir, 0o700)
}

// tidyUXScratch removes the scratch folders of the wave waveID's UX
// sessions that a killed cadence left in tmp (uxScratchDir: named by the
// wave, never another wave's or anything else), and returns the folders
// removed. The caller holds the wave's lock: no session of the wave runs.
func tidyUXScratch(tmp, waveID string) ([]string, error) {
	prefix := uxScratchPrefix + hexSum(waveID, 8) + "-"
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || len(name) != len(prefix)+12 || !e.IsDir() {
			continue
		}
		p := filepath.Join(tmp, name)
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}
