// Package box confines a command step (a command lot's run, a test gate,
// a worktree's setup) in an OS sandbox that cadence configures itself with
// bubblewrap (docs/integration.md, Guards): the whole file system
// read-only, but for the lot's worktrees and what git needs to commit on
// the lot's own branch there (the worktree's git dir, the repository's
// objects, the folder of the lot's branch and of its reflog, the busy
// lots' refs in them bound read-only on top); a private /tmp; /dev and /proc of
// its own; its own user and PID namespaces (no capability, no nested user
// namespace); the network as it is. What the step's tools need under
// /tmp on the host (the repositories, the step's folder, HOME, the PATH
// folders) stays visible, read-only.
//
// The box is a command line: Args returns bwrap's arguments, which the
// caller runs through internal/proc under the step supervisor, so that
// the supervisor's limits, cgroup, marks and subreaper hold bwrap and all
// it runs (a process of the box cannot leave the supervisor's tree; when
// the box's first process ends, the kernel ends every other process of
// its PID namespace).
package box

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/internal/gitdirs"
)

// Spec is one step's box.
type Spec struct {
	// Worktrees are the lot's worktrees (absolute folders), writable with
	// what git needs to commit on Branch in each (GitPaths).
	Worktrees []string
	// Branch is the lot's branch in each worktree, without refs/heads/
	// ("" for none: the git paths of its ref are not made writable).
	Branch string
	// BusyOnly narrows the other lots' branches bound read-only in the
	// folders of Branch's ref and reflog (GitPaths) to Busy (names
	// without refs/heads/): the lots with a step, or cadence's own work
	// on their branch, running when the box is made. The branches of idle
	// lots stay writable, and a move of one is put back after the step
	// (executor/step/guard, lot branches): one bind per busy lot keeps a
	// box's start from growing with the wave (bwrap reads the mount table
	// again for every read-only bind). false binds every other entry.
	BusyOnly bool
	Busy     []string
	// Writable are other folders the step may write (the sandbox's build
	// cache); each must exist.
	Writable []string
	// Visible are files and folders that must stay visible, read-only,
	// even when they are under /tmp (which the box replaces with its own):
	// the lot's repositories, the step's folder, HOME, the PATH folders.
	// Those that do not exist are left out.
	Visible []string
	// Protected are files and folders inside Writable ones (or inside
	// the worktrees' git paths) that stay read-only, bound on top: each
	// must exist. A worktree or git path inside one is writable again.
	Protected []string
	// Hidden are files and folders the step must not read (a worker's
	// credentials, the machine's steering keys, other runs' folders): a
	// folder is an empty tmpfs in the box (what the step writes there is
	// the box's, and gone with it), a file /dev/null. A worktree,
	// writable or protected path inside a hidden folder is bound again
	// on top (the deeper bind wins). Those that do not exist are left out.
	Hidden []string
	// Dir is the step's working folder.
	Dir string
	// TmpSize bounds the box's private /tmp, in bytes (0:
	// DefaultTmpSize).
	TmpSize int64
	// Status has bwrap write its JSON status to fd StatusFD (Status),
	// which tells a box that did not start from a command that failed.
	Status bool
}

// privateTmp is the folder each box gets empty and of its own.
const privateTmp = "/tmp"

// DefaultTmpSize bounds, in bytes, what a box's private /tmp holds (a
// tmpfs: its pages are the machine's memory); a write beyond it fails
// with ENOSPC. A step that needs more writes in its worktree or a
// sandbox_writable folder. /dev/shm holds at most shmSize.
const (
	DefaultTmpSize = 1 << 30
	shmSize        = 256 << 20
)

// base are the arguments of every box, before its own binds and its
// /tmp: the namespaces, no capability, the read-only root, a fresh /dev,
// /proc and a bounded /dev/shm. The probe (Missing) runs the same.
var base = []string{"--die-with-parent", "--unshare-user", "--unshare-pid", "--disable-userns", "--cap-drop", "ALL",
	"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--size", strconv.Itoa(shmSize), "--tmpfs", "/dev/shm"}

// Args returns bwrap's arguments that run argv in the box s. The binds
// come in an order that makes each one hold: the visible folders under
// /tmp first (parents first), then the writable folders and the read-only
// protections together, each after every folder that holds it, so the
// deeper one wins (cadence's files in a writable folder are read-only, a
// lot's worktree and git paths in a protected folder writable); a path
// both writable and protected is read-only.
// An error says which worktree's git folders could not be read.
func Args(s Spec, argv []string) ([]string, error) {
	var rw, protect []string
	for _, wt := range s.Worktrees {
		var busy []string
		if s.BusyOnly {
			busy = append([]string{}, s.Busy...)
		}
		g, err := GitPaths(wt, s.Branch, busy)
		if err != nil {
			return nil, err
		}
		rw = append(rw, g.Writable...)
		protect = append(protect, g.Protected...)
	}
	for _, w := range s.Writable {
		rw = append(rw, real(w))
	}
	for _, p := range s.Protected {
		protect = append(protect, real(p))
	}
	var hide []bind
	for _, h := range s.Hidden {
		r := real(h)
		fi, err := os.Lstat(r)
		if r == "" || err != nil {
			continue
		}
		hide = append(hide, bind{path: r, hidden: true, file: !fi.IsDir()})
	}
	var visible []string
	for _, v := range s.Visible {
		if r := real(v); r != "" && under(r, privateTmp) {
			if _, err := os.Lstat(r); err == nil {
				visible = append(visible, r)
			}
		}
	}
	args := slices.Clone(base)
	tmp := s.TmpSize
	if tmp <= 0 {
		tmp = DefaultTmpSize
	}
	args = append(args, "--size", strconv.FormatInt(tmp, 10), "--tmpfs", privateTmp)
	if s.Status {
		args = append(args, "--json-status-fd", strconv.Itoa(StatusFD))
	}
	for _, v := range sortedPaths(visible) {
		args = append(args, "--ro-bind", v, v)
	}
	for _, b := range nested(rw, protect, hide) {
		switch {
		case b.hidden && b.file:
			args = append(args, "--ro-bind", "/dev/null", b.path)
		case b.hidden:
			args = append(args, "--tmpfs", b.path)
		case b.readOnly:
			// -try: a protected entry may go between Args and the box's
			// start (a lot's branch deleted, a state file replaced); the
			// box then starts without it.
			args = append(args, "--ro-bind-try", b.path, b.path)
		default:
			args = append(args, "--bind", b.path, b.path)
		}
	}
	if s.Dir != "" {
		args = append(args, "--chdir", real(s.Dir))
	}
	return append(append(args, "--"), argv...), nil
}

// real is p with its symbolic links resolved (p itself when it cannot
// be), absolute and clean.
func real(p string) string {
	if p == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	return filepath.Clean(p)
}

// under says p is dir or inside it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// bind is one bind of a box: a host path at the same place, read-only or
// not, or hidden (an empty folder, or /dev/null for a file).
type bind struct {
	path     string
	readOnly bool
	hidden   bool
	file     bool
}

// rank orders the binds of one path: writable, then read-only, then
// hidden, so the safest one is made last and wins.
func (b bind) rank() int {
	switch {
	case b.hidden:
		return 2
	case b.readOnly:
		return 1
	}
	return 0
}

// nested are the writable paths rw, the read-only ones ro and the hidden
// binds hide in the order they must be made: a parent before what is
// inside it, and at one path the writable bind first and the hidden one
// last; "" entries and repeats left out.
func nested(rw, ro []string, hide []bind) []bind {
	out := slices.Clone(hide)
	for _, p := range rw {
		if p != "" {
			out = append(out, bind{path: p})
		}
	}
	for _, p := range ro {
		if p != "" {
			out = append(out, bind{path: p, readOnly: true})
		}
	}
	slices.SortFunc(out, func(a, b bind) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return a.rank() - b.rank()
	})
	return slices.Compact(out)
}

// sortedPaths is ps sorted (a parent before what is inside it) without
// repeats.
func sortedPaths(ps []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(ps)))
}

// GitFolders are what the box makes writable for git in one worktree, and
// what it binds read-only on top of them.
type GitFolders struct {
	Writable  []string
	Protected []string
}

// GitPaths finds, from the worktree wt's .git file, what a commit on
// branch in wt writes: wt itself; its git dir (<common>/worktrees/<name>:
// HEAD, index, its reflog); the repository's objects; the folder of the
// branch's ref and of its reflog (git writes <ref>.lock there and renames
// it onto the ref). The other entries of those two folders (the other
// lots' branches of the wave and their reflogs, not their passing .lock
// files) are Protected; when busy is not nil, only those of the branches
// it names (without refs/heads/; Spec.BusyOnly). The two
// folders are made when missing (git would make them on the first
// commit). The rest of the git dir (config, hooks, packed-refs, other
// refs, cadence's guard) stays read-only.
func GitPaths(wt, branch string, busy []string) (GitFolders, error) {
	wt = real(wt)
	gitDir, common, err := gitdirs.Read(wt)
	if err != nil {
		return GitFolders{}, fmt.Errorf("the sandbox of worktree %s: %w", wt, err)
	}
	g := GitFolders{Writable: []string{wt, gitDir, filepath.Join(common, "objects")}}
	if gitDir != common {
		// The links between the worktree and its repository stay as
		// they are (the agent sandbox denies them too): a step that
		// pointed the worktree's .git file, or its git dir's commondir
		// or gitdir, elsewhere would make every git process cadence
		// runs in the worktree afterwards, outside the box, work on
		// another repository or branch (your checkout's).
		for _, f := range []string{filepath.Join(wt, ".git"), filepath.Join(gitDir, "commondir"),
			filepath.Join(gitDir, "gitdir"), filepath.Join(gitDir, "config.worktree")} {
			if _, err := os.Lstat(f); err == nil {
				g.Protected = append(g.Protected, f)
			}
		}
	}
	if branch == "" || gitDir == common {
		return g, nil
	}
	for _, top := range []string{filepath.Join(common, "refs", "heads"), filepath.Join(common, "logs", "refs", "heads")} {
		ref := filepath.Join(top, filepath.FromSlash(branch))
		dir := filepath.Dir(ref)
		if !under(dir, top) {
			return GitFolders{}, fmt.Errorf("the sandbox of worktree %s: branch %q is not a branch name", wt, branch)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return GitFolders{}, fmt.Errorf("the sandbox of worktree %s: %w", wt, err)
		}
		g.Writable = append(g.Writable, dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return GitFolders{}, fmt.Errorf("the sandbox of worktree %s: %w", wt, err)
		}
		own := filepath.Base(ref)
		var bound map[string]bool
		if busy != nil {
			bound = map[string]bool{}
			for _, b := range busy {
				if path.Dir(b) == path.Dir(branch) {
					bound[path.Base(b)] = true
				}
			}
		}
		for _, e := range entries {
			if bound != nil && !bound[e.Name()] {
				continue
			}
			// Another lot's <ref>.lock lives only while git updates its
			// ref: it is not bound (the box's start would fail when it
			// goes first), so a step could make or remove one and fail
			// that lot's next commit, nothing more.
			if n := e.Name(); n != own && n != own+".lock" && !strings.HasSuffix(n, ".lock") {
				g.Protected = append(g.Protected, filepath.Join(dir, n))
			}
		}
	}
	return g, nil
}
