package claude

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The sandbox leaves a repository's objects folder writable (commits need
// it), objects/info/commit-graphs included: a session can plant a
// commit-graph there, which git trusts for parents and ancestry without
// reading the commits (and which outlives the wave). Sessions' git does
// not write commit-graphs itself (the steps' guard environment turns
// gc.writeCommitGraph and fetch.writeCommitGraph off), and cadence's own
// git reads none (core.commitGraph=false). So when the last sandboxed
// session of a repository ends, every commit-graph file that appeared or
// changed since the first one began is moved aside, never deleted, to
// <common>/cadence/rescue/sandbox/commit-graphs-<n>/, and the move is
// noted in the journal (git falls back to reading the commits).

// graphFile is a commit-graph file's size and modification time.
type graphFile struct {
	size int64
	mod  time.Time
}

// graphPaths are the commit-graph files of the repository whose common git
// dir is common, relative to it: objects/info/commit-graph and the files
// of objects/info/commit-graphs/.
func graphPaths(common string) []string {
	out := []string{filepath.Join("objects", "info", "commit-graph")}
	des, _ := os.ReadDir(filepath.Join(common, "objects", "info", "commit-graphs"))
	for _, de := range des {
		if de.Name() != ".claude-sandbox-noreplace" {
			out = append(out, filepath.Join("objects", "info", "commit-graphs", de.Name()))
		}
	}
	return out
}

// readGraphs records the commit-graph files of common as they are (a
// non-nil map, empty when there are none).
func readGraphs(common string) map[string]graphFile {
	out := map[string]graphFile{}
	for _, rel := range graphPaths(common) {
		if fi, err := os.Lstat(filepath.Join(common, rel)); err == nil {
			out[rel] = graphFile{fi.Size(), fi.ModTime()}
		}
	}
	return out
}

// setGraphsAside moves the commit-graph files of common that are not as
// before into a new rescue folder and returns what it did, one note each.
func setGraphsAside(common string, before map[string]graphFile) []string {
	var notes []string
	dir := ""
	for _, rel := range graphPaths(common) {
		p := filepath.Join(common, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if b, ok := before[rel]; ok && b.size == fi.Size() && b.mod.Equal(fi.ModTime()) {
			continue
		}
		if dir == "" {
			base := filepath.Join(common, "cadence", "rescue", "sandbox")
			if err := os.MkdirAll(base, 0o755); err != nil {
				return append(notes, fmt.Sprintf("a sandboxed session wrote the commit-graph file %s, which could NOT be moved aside (%v): remove it, git rebuilds it", p, err))
			}
			for n := 1; ; n++ {
				d := filepath.Join(base, fmt.Sprintf("commit-graphs-%d", n))
				if err := os.Mkdir(d, 0o755); err == nil {
					dir = d
					break
				} else if !os.IsExist(err) {
					return append(notes, fmt.Sprintf("a sandboxed session wrote the commit-graph file %s, which could NOT be moved aside (%v): remove it, git rebuilds it", p, err))
				}
			}
		}
		to := filepath.Join(dir, filepath.Base(rel))
		if err := os.Rename(p, to); err != nil {
			notes = append(notes, fmt.Sprintf("a sandboxed session wrote the commit-graph file %s, which could NOT be moved aside (%v): remove it, git rebuilds it", p, err))
			continue
		}
		notes = append(notes, fmt.Sprintf("a sandboxed session wrote the commit-graph file %s: git trusts it for history, so it was moved aside to %s (git reads the commits instead)", p, to))
	}
	return notes
}
