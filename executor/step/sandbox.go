package step

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/proc"
)

// shellCmd is the process of the shell command req.Command run in dir
// with env: in the step's OS sandbox (executor/step/box) unless the wave
// file turns it off for the step (req.NoSandbox) or the machine cannot
// run it (box.Prober, with the runner's PATH), else directly. bwrap runs
// under the step supervisor, as the command would: the supervisor's
// limits, cgroup and subreaper hold the box and all it runs. boxed says
// which; err says the box could not be made (a worktree's git folders
// unreadable): the step does not start.
func (l *Local) shellCmd(ctx context.Context, req Request, dir string, env []string) (c proc.Cmd, boxed bool, err error) {
	c = proc.Cmd{Path: "/bin/sh", Args: []string{"-c", req.Command}, Dir: dir, Env: env,
		Marks: stepMarks(req), Supervisor: l.sup, Limits: stepLimits(req.Limits)}
	if req.NoSandbox || l.noBox {
		return c, false, nil
	}
	bwrap, missing := l.prober.Probe(ctx, box.EnvValue(l.env, "PATH"))
	if missing != "" {
		return c, false, nil
	}
	cache, cacheEnv := box.CacheEnv(env)
	s := box.Spec{Branch: req.Branch, Dir: dir, Visible: visiblePaths(env, dir), Hidden: l.denyRead}
	if req.Branch != "" {
		// Only the busy lots' branches are bound read-only; the guard
		// puts back a move of an idle lot's (box.Spec.BusyOnly).
		s.BusyOnly = true
		for _, id := range l.guard.BusyLots(req.ID) {
			s.Busy = append(s.Busy, path.Dir(req.Branch)+"/"+id)
		}
	}
	if cache != "" {
		if err := os.MkdirAll(cache, 0o700); err != nil {
			return c, false, err
		}
		s.Writable = append(s.Writable, cache)
	}
	for _, r := range req.Repos {
		if rp := l.cfg.Repo(r.Name); rp != nil {
			s.Visible = append(s.Visible, rp.Path)
		}
		if _, err := os.Stat(r.Worktree); err == nil {
			s.Worktrees = append(s.Worktrees, r.Worktree)
		}
	}
	if len(req.Repos) == 0 {
		l.waveFolder(&s, dir)
	}
	if err := l.writable(&s, req.Writable); err != nil {
		return c, false, err
	}
	s.Status = true
	args, err := box.Args(s, append([]string{"/bin/sh", "-c"}, req.Command))
	if err != nil {
		return c, false, err
	}
	c.Path, c.Args, c.Env = bwrap, args, append(append([]string{}, env...), cacheEnv...)
	return c, true, nil
}

// boxStarts is how many times runShell starts a box whose own setup
// failed before it gives up on the step.
const boxStarts = 3

// runShell runs cmd, a process shellCmd made (boxed: in bwrap). A box
// gets bwrap's status pipe (box.Status) as its first extra file. A box
// whose own setup failed never ran the command — a path it binds went
// away between shellCmd's look and bwrap's mount (another lot's branch
// deleted meanwhile) — and is made again by again (which looks anew)
// and started, up to boxStarts times in all, with a note in log each
// time. When none started, the error wraps box.ErrNotStarted: the step
// is interrupted, never failed by what its command did not do.
func runShell(ctx context.Context, cmd proc.Cmd, boxed bool, log io.Writer, again func() (proc.Cmd, error)) (proc.Result, error) {
	if !boxed {
		return proc.Run(ctx, cmd)
	}
	for try := 1; ; try++ {
		st, err := box.NewStatus()
		if err != nil {
			return proc.Result{ExitCode: -1}, err
		}
		cmd.ExtraFiles = []*os.File{st.Writer()}
		res, rerr := proc.Run(ctx, cmd)
		started := st.Started()
		if rerr != nil || started || res.Stopped || res.Signal != 0 || res.LimitHit != "" || res.ExitCode == 0 {
			return res, rerr
		}
		if try == boxStarts {
			return res, fmt.Errorf("%w, %d times (bwrap's words are in the step's log)", box.ErrNotStarted, boxStarts)
		}
		noteInLog(log, fmt.Sprintf("the step's sandbox (bwrap) did not start (its words above); starting it again (%d of %d)", try+1, boxStarts))
		next, err := again()
		if err != nil {
			return res, fmt.Errorf("%w: %v", box.ErrNotStarted, err)
		}
		next.Stdout, next.Stderr, next.Started, next.Stdin = cmd.Stdout, cmd.Stderr, cmd.Started, cmd.Stdin
		cmd = next
	}
}

// waveFolder makes dir, the wave's folder a lot without a repository
// runs in, writable in its box s, but for what cadence keeps there, bound
// read-only: the wave file and the files named after it (state, journal,
// lock, requests, var files), every hidden entry (.cadence's logs,
// .git), the wave's repositories and worktrees folder. A wave folder
// that is one of the wave's repositories' folders, or inside one (your
// checkout), stays read-only.
func (l *Local) waveFolder(s *box.Spec, dir string) {
	stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(l.cfg.File), ".json"), ".hcl")
	var keep []string
	for _, rp := range l.cfg.Repos {
		if rp.Path == dir || strings.HasPrefix(dir, rp.Path+string(filepath.Separator)) {
			return
		}
		keep = append(keep, rp.Path)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || stem == "" {
		return
	}
	keep = append(keep, l.cfg.Wave.Worktrees)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), stem+".") || slices.Contains(keep, p) {
			s.Protected = append(s.Protected, p)
			continue
		}
		for _, k := range keep {
			if strings.HasPrefix(k, p+string(filepath.Separator)) {
				s.Protected = append(s.Protected, p)
				break
			}
		}
	}
	s.Writable = append(s.Writable, dir)
}

// visiblePaths are the files and folders a step's tools may need to see
// though they are under /tmp, which the box replaces: the step's folder
// and every absolute path the step's environment names (HOME, each PATH
// folder, GIT_CONFIG_GLOBAL, toolchains), read-only in the box.
func visiblePaths(env []string, dir string) []string {
	out := []string{dir}
	for _, e := range env {
		_, v, _ := strings.Cut(e, "=")
		for _, p := range filepath.SplitList(v) {
			if filepath.IsAbs(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// writable adds the folders of a lot's sandbox_writable to its box s,
// with what cadence keeps inside them bound read-only on top (cadenceOwn).
// A folder inside one of cadence's is an error (the step does not start):
// the wave file's checks refuse the ones they know of (spec,
// sandbox_writable), not the cadence home.
func (l *Local) writable(s *box.Spec, folders []string) error {
	if len(folders) == 0 {
		return nil
	}
	own := l.cadenceOwn()
	for _, w := range folders {
		rw := realPath(w)
		for _, p := range own {
			if within(rw, p) {
				return fmt.Errorf("the step sandbox: sandbox_writable %s is inside %s, which is cadence's", w, p)
			}
			if within(p, rw) {
				s.Protected = append(s.Protected, p)
			}
		}
		s.Writable = append(s.Writable, w)
	}
	return nil
}

// cadenceOwn are the existing files and folders of cadence's that a box
// never makes writable, symbolic links resolved: the wave file and what
// is named after it beside it (state, journal, lock, requests), the
// wave's .cadence folder, the cadence home, the wave's worktrees folder,
// every repository's folder and git dirs. The lot's own worktrees and git
// paths inside them are bound writable again on top (box.Args).
func (l *Local) cadenceOwn() []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if _, err := os.Lstat(p); err == nil {
			out = append(out, realPath(p))
		}
	}
	dir := filepath.Dir(l.cfg.File)
	stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(l.cfg.File), ".json"), ".hcl")
	add(l.cfg.File)
	add(filepath.Join(dir, layout.WorkDirName))
	if entries, err := os.ReadDir(dir); err == nil && stem != "" {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), stem+".") {
				add(filepath.Join(dir, e.Name()))
			}
		}
	}
	add(l.home)
	add(l.cfg.Wave.Worktrees)
	for _, r := range l.cfg.Repos {
		add(r.Path)
		for _, g := range gitDirsOf(r.Path) {
			add(g)
		}
	}
	return out
}

// gitDirsOf are the git dir and common dir of the checkout at path (its
// .git folder; or the folder a .git file's gitdir: line names and the
// one its commondir names); none when path has no readable .git.
func gitDirsOf(path string) []string {
	dotgit := filepath.Join(path, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		return []string{dotgit}
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return nil
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || gd == "" {
		return nil
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(path, gd)
	}
	out := []string{gd}
	if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		out = append(out, cd)
	}
	return out
}

// realPath is p with its symbolic links resolved (p, clean, when it
// cannot be).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within says p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
