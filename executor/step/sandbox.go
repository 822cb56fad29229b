package step

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/executor/step/box"
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
	s := box.Spec{Branch: req.Branch, Dir: dir, Visible: visiblePaths(env, dir)}
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
	args, err := box.Args(s, append([]string{"/bin/sh", "-c"}, req.Command))
	if err != nil {
		return c, false, err
	}
	c.Path, c.Args, c.Env = bwrap, args, append(append([]string{}, env...), cacheEnv...)
	return c, true, nil
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
