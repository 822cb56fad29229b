package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/internal/layout"
)

// ignoreHeader introduces the lines init adds to a .gitignore.
const ignoreHeader = "# cadence: the state, its journal, lock and request folder, and the .cadence work folder beside\n" +
	"# the wave file are this machine's (absolute paths, process ids): not committed.\n"

// ignoreBeside makes the .gitignore in dir hold every line of
// layout.IgnoreBeside: it creates the file, or appends the lines it lacks
// (after ignoreHeader) and leaves the rest as it was. It returns the
// file's path and how many lines it added (0: nothing to do).
func ignoreBeside(dir string) (string, int, error) {
	path := filepath.Join(dir, ".gitignore")
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return path, 0, fmt.Errorf("read %s: %w", path, err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add bytes.Buffer
	n := 0
	for _, p := range layout.IgnoreBeside {
		if !have[p] {
			add.WriteString(p + "\n")
			n++
		}
	}
	if n == 0 {
		return path, 0, nil
	}
	var b bytes.Buffer
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteString("\n")
	}
	b.WriteString(ignoreHeader)
	b.Write(add.Bytes())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return path, 0, fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return path, 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return path, 0, fmt.Errorf("write %s: %w", path, err)
	}
	return path, n, nil
}
