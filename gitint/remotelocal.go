package gitint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Remotes on this machine (docs/integration.md, Guards): a remote whose
// URL is a path or a file:// URL is a git dir cadence can read without
// network. Its refs are read from its files, and so is what its receive
// side leaves: a push writes objects (loose, or a pack) and a ref file,
// and a ref deleted again still leaves the folders it was written in
// modified. So a transient push (push, then delete the ref) shows in the
// modification times of the remote's refs and objects folders, though
// its refs compare equal. A push of objects the remote has already, to a
// ref deleted again, inside one folder's time resolution, and a push to
// a repository that is not a remote of the wave, are not seen.

// localRemoteDirs caches each repository's local remotes (repo path →
// []localRemote), read once per process: the remotes' URLs are config,
// which the config check keeps as it was.
var localRemoteDirs sync.Map

// localRemote is a remote of a repository that is a git dir on this
// machine.
type localRemote struct {
	Name, Dir string
}

// localRemotes are the remotes of the repository at repo whose URL (or
// push URL) names a git dir on this machine, sorted by name and folder.
func (g Git) localRemotes(ctx context.Context, repo string) []localRemote {
	if v, ok := localRemoteDirs.Load(repo); ok {
		return v.([]localRemote)
	}
	urls, _ := g.remoteURLs(ctx, repo)
	seen := map[localRemote]bool{}
	var out []localRemote
	for _, u := range urls {
		dir, ok := localGitDir(repo, u.URL)
		if !ok || seen[localRemote{u.Remote, dir}] {
			continue
		}
		seen[localRemote{u.Remote, dir}] = true
		out = append(out, localRemote{u.Remote, dir})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Dir < out[j].Dir
	})
	localRemoteDirs.Store(repo, out)
	return out
}

// localGitDir is the git dir a remote URL u of the repository at repo
// names when it is on this machine: a path (relative to repo) or a
// file:// URL, of a bare repository or of one with a .git folder.
func localGitDir(repo, u string) (string, bool) {
	p, isFile := strings.CutPrefix(u, "file://")
	if _, ok := RemoteHost(u); ok && !isFile {
		return "", false
	}
	if !isFile && strings.Contains(u, "://") {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(repo, p)
	}
	for _, d := range []string{filepath.Join(p, ".git"), p} {
		if st, err := os.Stat(filepath.Join(d, "objects")); err == nil && st.IsDir() {
			if _, err := os.Stat(filepath.Join(d, "HEAD")); err == nil {
				return filepath.Clean(d), true
			}
		}
	}
	return "", false
}

// receiveState describes the git dir dir of a local remote as read from
// its files (no git process): its refs ("<ref> <sha>" lines; "refs
// unreadable" when they cannot be read from files) and the modification
// times of its refs folders, packed-refs, objects folders and reflogs
// (the receive side).
func receiveState(dir string) string {
	var b strings.Builder
	if refs, err := snapshotCommon(dir, []string{"refs"}); err == nil {
		keys := make([]string, 0, len(refs))
		for k := range refs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s %s\n", k, refs[k])
		}
	} else {
		b.WriteString("refs unreadable\n")
	}
	var stamps []string
	stamp := func(p string) {
		if st, err := os.Lstat(p); err == nil {
			rel, _ := filepath.Rel(dir, p)
			stamps = append(stamps, fmt.Sprintf("%s %d", filepath.ToSlash(rel), st.ModTime().UnixNano()))
		}
	}
	for _, root := range []string{"refs", "logs"} {
		_ = filepath.WalkDir(filepath.Join(dir, root), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				stamp(p)
			}
			return nil
		})
	}
	stamp(filepath.Join(dir, "packed-refs"))
	objects := filepath.Join(dir, "objects")
	stamp(objects)
	if des, err := os.ReadDir(objects); err == nil {
		for _, de := range des {
			if de.IsDir() && de.Name() != "info" {
				stamp(filepath.Join(objects, de.Name()))
			}
		}
	}
	sort.Strings(stamps)
	for _, s := range stamps {
		b.WriteString("  written " + s + "\n")
	}
	return b.String()
}

// localRemoteStates is the part of a remote state (RemoteState,
// LocalRemoteState) read from the files of the local remotes.
func (g Git) localRemoteStates(ctx context.Context, repo string) string {
	var b strings.Builder
	for _, r := range g.localRemotes(ctx, repo) {
		fmt.Fprintf(&b, "local remote %s (%s):\n%s", r.Name, r.Dir, receiveState(r.Dir))
	}
	return b.String()
}

// LocalRemoteState is what RemoteState can say without network and
// without git process after the first call per repository: the
// remote-tracking refs and the local remotes (receiveState). It is
// compared around every command, test gate and setup; RemoteState, which
// asks every remote over the network, only before integrations and at the
// wave's end.
func (g Git) LocalRemoteState(ctx context.Context, repo string) string {
	var b strings.Builder
	g.writeTrackingRefs(ctx, &b, repo)
	b.WriteString(g.localRemoteStates(ctx, repo))
	return b.String()
}

// writeTrackingRefs writes the remote-tracking refs of repo to b, one
// "<ref> <sha>" line each, sorted: read from their files (snapshotFiles),
// or from `git for-each-ref` when those cannot be read with certainty.
func (g Git) writeTrackingRefs(ctx context.Context, b *strings.Builder, repo string) {
	if refs, err := snapshotFiles(repo, []string{"refs/remotes"}); err == nil {
		keys := make([]string, 0, len(refs))
		for k := range refs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "%s %s\n", k, refs[k])
		}
		return
	}
	out, _ := g.Run(ctx, repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes")
	b.WriteString(out)
}

// RemoteChanges says, line by line, what differs from the remote state
// before to after (RemoteState or LocalRemoteState): each ref moved,
// created or deleted, a URL changed, a remote's folders written to
// (receiveState) or unreachable, at most max lines and "and N more".
func RemoteChanges(before, after string, max int) []string {
	type entry struct{ section, key, value string }
	parse := func(s string) map[string]entry {
		out := map[string]entry{}
		section := ""
		for _, line := range strings.Split(s, "\n") {
			switch {
			case line == "":
				continue
			case strings.HasSuffix(line, ": unreachable"):
				out[line] = entry{strings.TrimSuffix(line, ": unreachable"), "reachable", "no"}
				section = ""
				continue
			case strings.HasPrefix(line, "remote ") || strings.HasPrefix(line, "local remote "):
				section = strings.TrimSuffix(line, ":")
				continue
			case strings.HasPrefix(line, "  written "):
				k := section + "\x00written"
				out[k] = entry{section, "written", out[k].value + line + "\n"}
				continue
			}
			var key, value string
			if sha, ref, ok := strings.Cut(line, "\t"); ok { // ls-remote: "<sha>\t<ref>"
				key, value = ref, sha
			} else {
				key, value, _ = strings.Cut(line, " ")
			}
			out[section+"\x00"+key] = entry{section, key, value}
		}
		return out
	}
	b, a := parse(before), parse(after)
	keys := map[string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range a {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	// A remote whose refs changed was written to: its folders' times say
	// nothing more.
	refsMoved := map[string]bool{}
	for _, k := range sorted {
		if e := a[k]; b[k] != e && e.key != "written" && e.key != "reachable" {
			refsMoved[e.section] = true
		} else if e := b[k]; a[k] != e && e.key != "written" && e.key != "reachable" {
			refsMoved[e.section] = true
		}
	}
	var out []string
	for _, k := range sorted {
		was, is := b[k], a[k]
		section, key, _ := strings.Cut(k, "\x00")
		if was == is || key == "written" && refsMoved[section] {
			continue
		}
		e := is
		if e.section == "" && e.key == "" {
			e = was
		}
		where := ""
		if e.section != "" {
			where = e.section + ": "
		}
		switch {
		case e.key == "written":
			out = append(out, where+"its refs or objects folders were written to (a push, even one whose ref was deleted again)")
		case e.key == "reachable":
			out = append(out, e.section+" became unreachable or reachable again")
		case was.value == "":
			out = append(out, fmt.Sprintf("%s%s created at %s", where, e.key, short12(is.value)))
		case is.value == "":
			out = append(out, fmt.Sprintf("%s%s deleted (it was at %s)", where, e.key, short12(was.value)))
		default:
			out = append(out, fmt.Sprintf("%s%s moved from %s to %s", where, e.key, short12(was.value), short12(is.value)))
		}
	}
	if len(out) > max && max > 0 {
		out = append(out[:max], fmt.Sprintf("and %d more", len(out)-max))
	}
	return out
}
