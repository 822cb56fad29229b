package gitint

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxBaseFile bounds a file read from a branch by BaseFiles.
const maxBaseFile = 64 << 10

// BaseFiles reads the files names (paths relative to the repository's
// root, without newlines) as the branch base holds them, with one `git
// cat-file --batch` in the repository at dir: a name maps to its content,
// or is absent when the branch has no such file (or it is not a file, or
// is larger than 64 KiB). The lots of a wave work from their base branch,
// not from whatever the checkout has (docs/wave-file.md, "Each repository's environment"): what they see of a
// repository's files is this.
func (g Git) BaseFiles(ctx context.Context, dir, base string, names []string) (map[string][]byte, error) {
	var in strings.Builder
	for _, n := range names {
		if strings.ContainsAny(n, "\n\r") {
			return nil, fmt.Errorf("a file name with a newline: %q", n)
		}
		fmt.Fprintf(&in, "refs/heads/%s:%s\n", base, n)
	}
	out, err := g.runStdin(ctx, dir, in.String(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	r := bufio.NewReader(strings.NewReader(out))
	for _, n := range names {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file --batch: short output")
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			continue // "<object> missing" (or ambiguous): no such file
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("git cat-file --batch: %q", head)
		}
		body := make([]byte, size+1) // the content and its newline
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("git cat-file --batch: short output")
		}
		if f[1] == "blob" && size <= maxBaseFile {
			files[n] = body[:size]
		}
	}
	return files, nil
}
