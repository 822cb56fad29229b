package gitint

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Reading refs from the files of git's "files" ref backend, without
// starting git (gitrepository-layout(5): a loose ref is the file
// <common>/<refname> holding "<hex>\n" or "ref: <target>\n"; the
// packed-refs file holds "<hex> <refname>" lines, an annotated tag's
// peeled value on a "^<hex>" line after it). A git process costs 3–5 ms on
// these machines, and cadence reads refs before and after every step;
// these readers answer the common case and say errAskGit for
// anything they are not sure to read as git does (a reftable repository,
// a ref file that is neither a hash nor a symbolic ref, a name git would
// refuse, a symbolic link): the caller then asks git.
//
// Order matters against a concurrent `git pack-refs` (which writes
// packed-refs, then deletes the loose files): loose refs are read first,
// packed-refs after, as git's own files backend does (refs/files-backend.c,
// files_ref_iterator_begin), so a ref being packed is seen in one or the
// other.

// errAskGit says the files cannot be read with certainty: ask git.
var errAskGit = errors.New("ref files: ask git")

// openRegular opens path for reading only if it is a regular file, not
// through a symbolic link, and never blocks on the opening (O_NONBLOCK):
// a step may leave a named pipe where a ref file was, which would hang a
// plain read (git's own reads of it ran in a process bounded by a
// timeout). The error is fs.ErrNotExist's when path is absent.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	switch {
	case err == nil && st.IsDir():
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EISDIR}
	case err != nil || !st.Mode().IsRegular():
		f.Close()
		return nil, errAskGit
	}
	return f, nil
}

// readRegular reads the regular file at path (openRegular), at most 1 MiB.
func readRegular(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, errAskGit
	}
	return b, nil
}

// gitDirs returns the git dir and the common git dir of the worktree at dir
// from its .git (a folder: the main worktree; a "gitdir: <path>" file: a
// linked worktree or a separate git dir, whose commondir file names the
// common dir), as git finds them (setup.c). ok is false when dir/.git is
// neither.
func gitDirs(dir string) (gitDir, common string, ok bool) {
	dotGit := filepath.Join(dir, ".git")
	st, err := os.Lstat(dotGit)
	switch {
	case err != nil:
		return "", "", false
	case st.IsDir():
		gitDir = dotGit
	case st.Mode().IsRegular():
		b, err := readRegular(dotGit)
		if err != nil {
			return "", "", false
		}
		gd, found := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
		if !found || gd == "" || strings.ContainsAny(gd, "\n\r") {
			return "", "", false
		}
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(dir, gd)
		}
		gitDir = filepath.Clean(gd)
	default:
		return "", "", false
	}
	common = gitDir
	if b, err := readRegular(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimRight(string(b), "\r\n")
		if c == "" || strings.ContainsAny(c, "\n\r") {
			return "", "", false
		}
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", false
	}
	return gitDir, common, true
}

// filesBackend says whether the common dir keeps its refs in files: a
// refs folder, and no reftable folder.
func filesBackend(common string) bool {
	if _, err := os.Lstat(filepath.Join(common, "reftable")); err == nil {
		return false
	}
	st, err := os.Lstat(filepath.Join(common, "refs", "heads"))
	return err == nil && st.IsDir()
}

// isHex says whether s is an object name: 40 (SHA-1) or 64 (SHA-256) lower
// case hex digits.
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// plainRefName says whether a ref name is one these readers take as git
// does: components of letters, digits and "-_./+@" that neither start with
// a dot nor end with ".lock", no "..", no "@{" (git-check-ref-format(1)).
// Anything else is left to git.
func plainRefName(name string) bool {
	if name == "" || strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.HasSuffix(name, "/") {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || c[0] == '.' || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_./+@", c) >= 0) {
			return false
		}
	}
	return true
}

// readLoose reads the loose ref file of name: its object name, or the
// target of a symbolic ref; found is false when there is no such file.
func readLoose(common, name string) (sha, target string, found bool, err error) {
	b, err := readRegular(filepath.Join(common, filepath.FromSlash(name)))
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		return "", "", false, nil
	case err != nil:
		return "", "", false, errAskGit
	}
	s := strings.TrimRight(string(b), "\n")
	if isHex(s) {
		return s, "", true, nil
	}
	if t, ok := strings.CutPrefix(s, "ref: "); ok && plainRefName(t) && strings.HasPrefix(t, "refs/") {
		return "", t, true, nil
	}
	return "", "", false, errAskGit
}

// packedRefs reads the packed-refs file: ref name → object name (peeled
// lines skipped). A missing file is no refs.
func packedRefs(common string) (map[string]string, error) {
	f, err := openRegular(filepath.Join(common, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errAskGit
	}
	defer f.Close()
	refs := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		sha, name, ok := strings.Cut(line, " ")
		if !ok || !isHex(sha) {
			return nil, errAskGit
		}
		refs[name] = sha
	}
	if sc.Err() != nil {
		return nil, errAskGit
	}
	return refs, nil
}

// resolveRef returns the object name the ref name (refs/…) points at, from
// the files of the common dir, following symbolic refs; "" when there is
// no such ref. errAskGit when the files say something these readers do not
// take for certain.
func resolveRef(common, name string) (string, error) {
	if !filesBackend(common) {
		return "", errAskGit
	}
	var packed map[string]string
	packedRead := false
	for depth := 0; depth < 5; depth++ {
		if !plainRefName(name) || !strings.HasPrefix(name, "refs/") {
			return "", errAskGit
		}
		sha, target, found, err := readLoose(common, name)
		if err != nil {
			return "", err
		}
		if found && target == "" {
			return sha, nil
		}
		if found {
			name = target
			continue
		}
		if !packedRead {
			if packed, err = packedRefs(common); err != nil {
				return "", err
			}
			packedRead = true
		}
		return packed[name], nil
	}
	return "", errAskGit
}

// headOf returns the commit the HEAD of the worktree at dir points at, from
// its files: "" and errAskGit when they cannot tell (not a worktree, an
// unborn branch, another ref backend).
func headOf(dir string) (string, error) {
	gitDir, common, ok := gitDirs(dir)
	if !ok {
		return "", errAskGit
	}
	b, err := readRegular(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", errAskGit
	}
	s := strings.TrimRight(string(b), "\n")
	if isHex(s) {
		return s, nil
	}
	t, ok := strings.CutPrefix(s, "ref: ")
	if !ok || !strings.HasPrefix(t, "refs/heads/") {
		return "", errAskGit
	}
	sha, err := resolveRef(common, t)
	if err != nil || sha == "" {
		return "", errAskGit
	}
	return sha, nil
}

// branchOf returns the commit of refs/heads/<branch> of the repository at
// repo, read from its files: "" when there is no such branch; errAskGit as
// resolveRef.
func branchOf(repo, branch string) (string, error) {
	_, common, ok := gitDirs(repo)
	if !ok {
		return "", errAskGit
	}
	return resolveRef(common, "refs/heads/"+branch)
}

// snapshotFiles reads every ref under the prefixes (e.g. "refs/heads") from
// the files: what `git for-each-ref --format='%(objectname) %(refname)'
// <prefixes>` prints, as a map. errAskGit as resolveRef.
func snapshotFiles(repo string, prefixes []string) (Refs, error) {
	_, common, ok := gitDirs(repo)
	if !ok {
		return nil, errAskGit
	}
	return snapshotCommon(common, prefixes)
}

// snapshotCommon is snapshotFiles of the repository whose git common dir
// is common (a bare repository's folder too).
func snapshotCommon(common string, prefixes []string) (Refs, error) {
	if !filesBackend(common) {
		return nil, errAskGit
	}
	refs := Refs{}
	symbolic := map[string]string{}
	for _, p := range prefixes {
		root := filepath.Join(common, filepath.FromSlash(p))
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // a folder removed meanwhile (its refs packed or deleted)
				}
				return errAskGit
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(common, path)
			if err != nil {
				return errAskGit
			}
			name := filepath.ToSlash(rel)
			if strings.HasSuffix(name, ".lock") || strings.HasPrefix(d.Name(), ".") {
				return nil // a ref being written (git skips these names too)
			}
			if !d.Type().IsRegular() || !plainRefName(name) {
				return errAskGit
			}
			sha, target, found, err := readLoose(common, name)
			switch {
			case err != nil:
				return err
			case !found: // deleted (or packed) meanwhile: packed-refs below says
			case target != "":
				symbolic[name] = target
			default:
				refs[name] = sha
			}
			return nil
		})
		if err != nil {
			return nil, errAskGit
		}
	}
	packed, err := packedRefs(common)
	if err != nil {
		return nil, err
	}
	for name, sha := range packed {
		if _, loose := refs[name]; loose {
			continue
		}
		if _, loose := symbolic[name]; loose {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p+"/") {
				if !plainRefName(name) {
					return nil, errAskGit
				}
				refs[name] = sha
				break
			}
		}
	}
	for name, target := range symbolic {
		// Refs' value of a symbolic ref: the ref it names, never that
		// ref's value (SymbolicPrefix).
		refs[name] = SymbolicPrefix + target
	}
	return refs, nil
}
