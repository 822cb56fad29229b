package gitint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// RemoteState describes what the remotes of a repository hold, as far as
// cadence can see: its remote-tracking refs, and each remote's refs by
// `git ls-remote` (bounded to a few seconds; an unreachable remote is noted,
// not an error), and the remotes' URLs: a remote re-pointed at a decoy
// is a change too, and what the local remotes' files say of their receive
// side (remotelocal.go). Two equal states mean no push happened in between.
//
// Its git processes: one `git config` (the remotes and their URLs), then
// one `ls-remote` per remote; the remote-tracking refs are read from their
// files (snapshotFiles; `git for-each-ref` when those cannot be read with
// certainty), and `git remote` runs only when the repository has remotes
// of the old kinds, the files under <common>/remotes and <common>/branches.
func (g Git) RemoteState(ctx context.Context, repo string) string {
	var b strings.Builder
	cfg, _ := g.Run(ctx, repo, "config", "-z", "--get-regexp", `^remote\.`)
	urls, names := remotesOfConfig(cfg)
	b.WriteString(urls)
	g.writeTrackingRefs(ctx, &b, repo)
	if legacyRemotes(repo) {
		out, err := g.Run(ctx, repo, "remote")
		if err != nil {
			return b.String()
		}
		names = strings.Fields(out)
	}
	sort.Strings(names)
	for _, r := range names {
		lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		ls, err := g.Run(lctx, repo, "ls-remote", "--quiet", r)
		cancel()
		if err != nil {
			fmt.Fprintf(&b, "remote %s: unreachable\n", r)
			continue
		}
		fmt.Fprintf(&b, "remote %s:\n%s", r, ls)
	}
	b.WriteString(g.localRemoteStates(ctx, repo))
	return b.String()
}

// remoteKey is a key of a remote's config: remote.<name>.<variable> (the
// name may hold dots; the variable may not).
var remoteKey = regexp.MustCompile(`^remote\.(.+)\.([^.]+)$`)

// remotesOfConfig reads `git config -z --get-regexp '^remote\.'`: the
// URL entries ("remote.<name>.url <value>" and pushurl lines, in order) and
// the names of the remotes, each once, in order (`git remote` lists every
// remote with a config entry).
func remotesOfConfig(cfg string) (urls string, names []string) {
	var b strings.Builder
	seen := map[string]bool{}
	for _, e := range strings.Split(cfg, "\x00") {
		k, v, _ := strings.Cut(e, "\n")
		m := remoteKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
		if m[2] == "url" || m[2] == "pushurl" {
			fmt.Fprintf(&b, "%s %s\n", k, v)
		}
	}
	return b.String(), names
}

// legacyRemotes says whether the repository at repo may have remotes
// defined outside its config (<common>/remotes/<name>,
// <common>/branches/<name>, gitrepository-layout(5)), or its folders
// cannot be read: then `git remote` lists them.
func legacyRemotes(repo string) bool {
	_, common, ok := gitDirs(repo)
	if !ok {
		return true
	}
	for _, d := range []string{"remotes", "branches"} {
		des, err := os.ReadDir(filepath.Join(common, d))
		if err != nil && !os.IsNotExist(err) || len(des) > 0 {
			return true
		}
	}
	return false
}
