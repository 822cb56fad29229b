package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/safefile"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/toolchain"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// recordInputs fills in what a saved plan needs to tell later that one of
// its inputs changed: the files file() and templatefile() read, the var
// files, the brief templates folder and what env() returned (as digests:
// an env() value may be a secret).
//
// The wave's auto-loaded var files (layout.AutoVarFiles) that are not there
// are recorded too, with the digest "" of a missing file: one that appears
// after the plan makes it stale ("var file X appeared since the plan").
func recordInputs(s *planner.SavedPlan, w *wave) {
	s.Files = w.cfg.FilesRead
	s.VarFileDigests = map[string]string{}
	for path, d := range w.cfg.VarFilesRead {
		s.VarFileDigests[path] = d
	}
	for _, path := range layout.AutoVarFiles(w.file) {
		if abs, err := filepath.Abs(path); err == nil {
			if _, read := s.VarFileDigests[abs]; !read {
				s.VarFileDigests[abs] = ""
			}
		}
	}
	s.CopyFiles = copyDigests(w.cfg)
	s.Templates = w.cfg.Wave.Templates
	s.TemplatesDigest = templatesDigest(s.Templates)
	s.Variables = w.cfg.Variables
	for name := range w.cfg.SensitiveVars {
		s.SensitiveVars = append(s.SensitiveVars, name)
	}
	sort.Strings(s.SensitiveVars)
	// Always recorded, "" for none: a CADENCE_VAR_name (of a declared
	// variable) added later makes the plan stale too.
	s.Env = map[string]string{cadenceVarsKey: cadenceVarsDigest(os.Environ(), s.Variables)}
	if len(w.cfg.Env) > 0 {
		for name, v := range w.cfg.Env {
			s.Env[name] = ""
			if v.Set {
				s.Env[name] = secretDigest(v.Value)
			}
		}
	}
}

// currentInputs are the current values of what the saved plan s recorded:
// the wave w and its plan p as apply loaded them now, and, for what they
// no longer read, the files, variables and base branches themselves.
// givenVars are the -var assignments given to apply itself.
func currentInputs(ctx context.Context, git gitint.Git, s *planner.SavedPlan, w *wave, p *planner.Plan, givenVars []string) planner.Inputs {
	in := planner.Inputs{
		WaveDigest: w.digest, StateDigest: w.stateDigest, Vars: givenVars,
		BaseSHAs: map[string]string{}, Files: map[string]string{}, VarFiles: map[string]string{}, Env: map[string]string{},
		TemplatesDigest: templatesDigest(s.Templates),
		Sensitive:       func(name string) bool { return w.cfg.SensitiveVars[name] },
	}
	for path := range s.Files {
		in.Files[path] = readDigest(w.cfg.FilesRead, path)
	}
	for path := range s.VarFileDigests {
		in.VarFiles[path] = readDigest(w.cfg.VarFilesRead, path)
	}
	for name := range s.Env {
		if name == cadenceVarsKey {
			in.Env[name] = cadenceVarsDigest(os.Environ(), w.cfg.Variables)
			continue
		}
		v, set := os.LookupEnv(name)
		if got, ok := w.cfg.Env[name]; ok {
			v, set = got.Value, got.Set
		}
		if set {
			in.Env[name] = secretDigest(v)
		}
	}
	for _, r := range p.Repos {
		if r.BaseSHA != "" {
			in.BaseSHAs[r.Name] = r.BaseSHA
		}
	}
	in.CopyFiles = copyDigests(w.cfg)
	in.ToolchainFiles, in.Toolchains = toolchainInputs(w, p)
	for k := range s.ToolchainFiles {
		if _, ok := in.ToolchainFiles[k]; !ok {
			in.ToolchainFiles[k] = toolchainFileDigest(w, k)
		}
	}
	// The plan checks only the repos with pending lots: look the others up.
	for name := range s.BaseSHAs {
		if r := w.cfg.Repo(name); in.BaseSHAs[name] == "" && r != nil {
			if f, err := git.Inspect(ctx, r.Path, r.Base); err == nil {
				in.BaseSHAs[name] = f.BaseSHA
			}
		}
	}
	return in
}

// diskInputs are the inputs of the saved plan s as they are on disk and in
// the environment now, before any load: the state and the bases are taken
// as saved (apply compares them once it has planned). It lets apply say
// which input changed even when the change breaks the wave.
func diskInputs(s *planner.SavedPlan, givenVars []string) planner.Inputs {
	in := planner.Inputs{
		WaveDigest: readDigest(nil, s.WaveFile), StateDigest: s.StateDigest, BaseSHAs: s.BaseSHAs, Vars: givenVars,
		// The toolchains need the wave's repositories: compared once
		// apply has planned (currentInputs), taken as saved until then.
		ToolchainFiles: s.ToolchainFiles, Toolchains: s.Toolchains,
		Files: map[string]string{}, VarFiles: map[string]string{}, Env: map[string]string{},
		TemplatesDigest: templatesDigest(s.Templates),
		Sensitive:       func(name string) bool { return slices.Contains(s.SensitiveVars, name) },
	}
	for path := range s.Files {
		in.Files[path] = readDigest(nil, path)
	}
	for path := range s.VarFileDigests {
		in.VarFiles[path] = readDigest(nil, path)
	}
	for name := range s.Env {
		if name == cadenceVarsKey {
			in.Env[name] = cadenceVarsDigest(os.Environ(), s.Variables)
			continue
		}
		if v, ok := os.LookupEnv(name); ok {
			in.Env[name] = secretDigest(v)
		}
	}
	return in
}

// copyDigests are the digests of the files the wave's copy attributes
// name (every lot's worktrees, spec.Bootstrap.Copy) in the lead's
// checkouts, keyed "repo/path" ("" for one that is not there); nil when
// the wave copies none.
func copyDigests(cfg *spec.Config) map[string]string {
	var out map[string]string
	add := func(rp *spec.Repo, copies []string) {
		for _, c := range copies {
			if out == nil {
				out = map[string]string{}
			}
			out[rp.Name+"/"+c] = readDigest(nil, filepath.Join(rp.Path, filepath.FromSlash(c)))
		}
	}
	for _, l := range cfg.Lots {
		for _, rp := range l.Repos() {
			if rp == l.Repo {
				add(rp, l.Bootstrap.Copy)
			} else {
				add(rp, rp.Bootstrap.Copy)
			}
		}
	}
	return out
}

// readDigest is the digest of the file at path: the one this load recorded
// when it read it, else that of the file as it is now ("" when missing).
func readDigest(read map[string]string, path string) string {
	if d, ok := read[path]; ok {
		return d
	}
	b, err := safefile.Read(path, spec.MaxWaveBytes)
	if err != nil {
		return ""
	}
	return state.Digest(b)
}

// templatesDigest is the digest of a brief templates folder: the names and
// bytes of its *.tmpl files (what executor/briefs.Load reads), sorted by
// name; "" when dir is "".
func templatesDigest(dir string) string {
	if dir == "" {
		return ""
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.tmpl"))
	sort.Strings(files)
	var all []byte
	for _, f := range files {
		b, err := safefile.Read(f, spec.MaxFileBytes)
		if err != nil {
			b = []byte("unreadable: " + err.Error())
		}
		all = fmt.Appendf(all, "%s\x00%d\x00", filepath.Base(f), len(b))
		all = append(all, b...)
	}
	return state.Digest(all)
}

// absPaths are paths made absolute against the working folder, so that a
// saved plan finds them from any folder.
func absPaths(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("var file %s: %w", p, err)
		}
		out = append(out, abs)
	}
	return out, nil
}

// varFilesChanged says how the -var-file list given to apply PLANFILE
// differs from the saved one ("" when none was given or it is the same).
func varFilesChanged(saved, given []string) string {
	if len(given) == 0 {
		return ""
	}
	abs, err := absPaths(given)
	if err != nil {
		return err.Error()
	}
	if strings.Join(abs, "\x00") == strings.Join(saved, "\x00") {
		return ""
	}
	return fmt.Sprintf("-var-file changed (%s → %s)", strings.Join(saved, ", "), strings.Join(abs, ", "))
}

// refuseStale prints why a saved plan is stale, with a -var-file list given
// again that differs from the saved one, and returns ExitApplyRefused; goOn when
// nothing changed.
func refuseStale(e *env, why []string, savedVarFiles, givenVarFiles []string) ExitCode {
	if d := varFilesChanged(savedVarFiles, givenVarFiles); d != "" {
		why = append(why, d)
	}
	if len(why) == 0 {
		return goOn
	}
	fmt.Fprintf(e.stderr, "cadence apply: the saved plan is stale: %s. Plan again.\n", strings.Join(why, "; "))
	return ExitApplyRefused
}

// cadenceVarsKey is the key, among a saved plan's env() digests, of the
// digest of every CADENCE_VAR_name variable (cadenceVarsDigest): the wave's
// variables from the environment are inputs of the plan like -var values,
// and a saved plan is stale when one of them is changed, added or removed.
const cadenceVarsKey = envVarPrefix + "*"

// cadenceVarsDigest is the digest of the CADENCE_VAR_name entries of
// environ ("name=value" lines, sorted), "" when there is none.
func cadenceVarsDigest(environ, declared []string) string {
	vars := envVars(environ)
	for name := range vars {
		if !slices.Contains(declared, name) {
			delete(vars, name) // ignored by the load, so no input
		}
	}
	if len(vars) == 0 {
		return ""
	}
	lines := make([]string, 0, len(vars))
	for k, v := range vars {
		lines = append(lines, k+"="+v)
	}
	sort.Strings(lines)
	return secretDigest(strings.Join(lines, "\n"))
}

// toolchainInputs are the toolchain inputs of the plan p of the wave w:
// the digests of the toolchain files (toolchain.Files) of every
// repository p inspected (those with a base commit), keyed "repo/file",
// "" for a file that is not there; and what each one's toolchain
// resolved to (planner.SavedToolchain), its folders and variables as a
// keyed digest (secretDigest: a variable of mise may be a secret).
func toolchainInputs(w *wave, p *planner.Plan) (map[string]string, map[string]planner.SavedToolchain) {
	files := map[string]string{}
	tcs := map[string]planner.SavedToolchain{}
	for _, rp := range p.Repos {
		if rp.BaseSHA == "" {
			continue
		}
		for _, f := range toolchain.Files {
			files[rp.Name+"/"+f] = toolchainFileDigest(w, rp.Name+"/"+f)
		}
		resolved := rp.Toolchain
		if rp.ToolchainErr != "" {
			resolved = "cannot be resolved: " + rp.ToolchainErr
		}
		lines := append([]string{"path"}, rp.ToolchainPath...)
		names := make([]string, 0, len(rp.ToolchainEnv))
		for n := range rp.ToolchainEnv {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			lines = append(lines, n+"="+rp.ToolchainEnv[n])
		}
		tcs[rp.Name] = planner.SavedToolchain{Resolved: resolved, Digest: secretDigest(strings.Join(lines, "\x00"))}
	}
	return files, tcs
}

// toolchainFileDigest is the digest of the toolchain file key ("repo/file")
// of the wave w as it is now, "" when it (or the repo) is not there.
func toolchainFileDigest(w *wave, key string) string {
	name, file, _ := strings.Cut(key, "/")
	r := w.cfg.Repo(name)
	if r == nil {
		return ""
	}
	return readDigest(nil, filepath.Join(r.Path, file))
}
