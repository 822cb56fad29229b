package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// readRecorder records the files file(), templatefile() and the var files
// read while a wave file loads, in Config.FilesRead and Config.VarFilesRead,
// so that a saved plan can tell when one changed. A nil recorder records
// nothing.
type readRecorder struct {
	cfg *Config
}

// file records a file read by file() or templatefile(), by absolute path.
func (r *readRecorder) file(path string, b []byte) {
	if r == nil || r.cfg == nil {
		return
	}
	if r.cfg.FilesRead == nil {
		r.cfg.FilesRead = map[string]string{}
	}
	r.cfg.FilesRead[absPath(path)] = digest(b)
}

// varFile records a var file, by absolute path.
func (r *readRecorder) varFile(path string, b []byte) {
	if r == nil || r.cfg == nil {
		return
	}
	if r.cfg.VarFilesRead == nil {
		r.cfg.VarFilesRead = map[string]string{}
	}
	r.cfg.VarFilesRead[absPath(path)] = digest(b)
}

// digest is "sha256:" and the hex SHA-256 of b: the format of
// internal/state.Digest, which spec does not import.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// absPath is path made absolute (as it is when that fails).
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
