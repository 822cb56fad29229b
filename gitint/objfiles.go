package gitint

import (
	"bytes"
	"compress/zlib"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Reading the commits a command lot just made from git's loose object
// files (gitrepository-layout(5) objects/xx/yyyy: zlib of "commit <size>\0"
// and the commit), without starting git: `git log --reverse --format='%H
// %s' from..to` for the common case, a short line of single-parent commits
// from to down to from, each a loose object, each message's first line its
// subject. Anything else (a merge, a packed object, a message whose subject
// git would join from several lines or re-encode, replace refs or grafts
// that git log would honour) is left to git (errAskGit).

// maxLooseWalk bounds the commits read from files for one range.
const maxLooseWalk = 64

// commitsFromFiles returns from..to as Commits does, oldest first, read
// from the loose objects of the repository of the worktree at dir.
func commitsFromFiles(dir, from, to string) ([]string, error) {
	if !isHex(from) || !isHex(to) || len(from) != len(to) {
		return nil, errAskGit
	}
	_, common, ok := gitDirs(dir)
	if !ok {
		return nil, errAskGit
	}
	for _, p := range []string{"refs/replace", "info/grafts", "shallow"} {
		if _, err := os.Lstat(filepath.Join(common, p)); err == nil {
			return nil, errAskGit
		}
	}
	packed, err := packedRefs(common)
	if err != nil {
		return nil, errAskGit
	}
	for ref := range packed {
		if strings.HasPrefix(ref, "refs/replace/") {
			return nil, errAskGit
		}
	}
	var out []string
	for sha := to; sha != from; {
		if len(out) == maxLooseWalk {
			return nil, errAskGit
		}
		parents, subject, err := looseCommit(common, sha)
		if err != nil || len(parents) != 1 {
			return nil, errAskGit
		}
		out = append(out, sha+" "+subject)
		sha = parents[0]
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// looseCommit reads the commit sha from its loose object file: its parents
// and its subject. errAskGit when it is not a loose commit these readers
// take for certain.
func looseCommit(common, sha string) (parents []string, subject string, err error) {
	f, err := openRegular(filepath.Join(common, "objects", sha[:2], sha[2:]))
	if err != nil {
		return nil, "", errAskGit
	}
	defer f.Close()
	zr, err := zlib.NewReader(f)
	if err != nil {
		return nil, "", errAskGit
	}
	defer zr.Close()
	b, err := io.ReadAll(io.LimitReader(zr, 1<<20))
	if err != nil {
		return nil, "", errAskGit
	}
	hdr, body, ok := bytes.Cut(b, []byte{0})
	if !ok || !bytes.HasPrefix(hdr, []byte("commit ")) {
		return nil, "", errAskGit
	}
	head, msg, ok := strings.Cut(string(body), "\n\n")
	if !ok {
		return nil, "", errAskGit
	}
	for _, line := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "parent":
			if !isHex(v) {
				return nil, "", errAskGit
			}
			parents = append(parents, v)
		case "encoding":
			return nil, "", errAskGit // git log would re-encode it
		}
	}
	// git's %s is the message's first paragraph, its lines joined
	// (pretty.c, format_subject): take only a one-line paragraph of plain
	// printable ASCII after no blank line.
	first, rest, _ := strings.Cut(msg, "\n")
	if rest != "" && strings.TrimRight(strings.SplitN(rest, "\n", 2)[0], " \t") != "" {
		return nil, "", errAskGit
	}
	subject = strings.TrimRight(first, " \t")
	if subject == "" {
		return nil, "", errAskGit
	}
	for i := 0; i < len(subject); i++ {
		if c := subject[i]; c < 0x20 || c > 0x7e {
			return nil, "", errAskGit
		}
	}
	return parents, subject, nil
}
