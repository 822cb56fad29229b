// Package layout names every path cadence reads or writes
// (docs/integration.md, docs/running.md, docs/architecture.md): a wave's state file, its journal and lock, the .cadence work
// folder beside the wave file (logs, reports, the run journal), the lots'
// worktrees (outside every repository, under the cadence home unless the
// wave says where), the machine's slot and registry folders under
// $CADENCE_HOME, and the locks cadence keeps in a repository's git common
// dir. Nothing else builds these paths by hand.
//
// A [Wave] is built once per wave from plain strings (the wave file's
// path, the wave's name, the cadence home, the wave's worktrees folder);
// it never reads the environment and imports nothing of cadence. Apart
// from [Wave.MakeWorkDir] and [IgnoreSelf], which create the work folder
// and its .gitignore, it touches no file.
//
// The tree beside a wave file wave.hcl of wave "w":
//
//	wave.state.json                 the state (State)
//	wave.state.json.journal         its journal while a run is live (Journal)
//	wave.state.json.lock            one apply, answer or clean at a time (Lock)
//	wave.state.json.requests/       requests to the live apply: drop, stop, answer (Requests)
//	.cadence/.gitignore             "*": the folder ignores itself (GitIgnore)
//	.cadence/w/journal.log          the run's progress lines (JournalLog)
//	.cadence/w/<lot>/<n>-<kind>.json|.err|.log   step n's files (StepFile)
//	.cadence/w/<lot>/replaced-<k>/  the files of the k-th run set aside by -replace
//
// under the cadence home ($CADENCE_HOME, else ~/.cadence, see [Home]):
//
//	slots/slot-<n>                  the machine's session slots (SlotsDir)
//	slots/holds.json|.lock          the lead's holds (cadence hold; executor/slots)
//	waves/<pid>.json|.lock          the registry of live waves (RegistryDir)
//	worktrees/                      the lots' worktrees (WorktreesDir)
//
// and in the worktrees folder (<home>/worktrees, or the wave's `worktrees`
// attribute, see [Wave.WithWorktrees]), for a lot of repository "app":
//
//	app-<h(repo)>/w-<h(state)>/<lot>          the lot's worktree (Worktree)
//	app-<h(repo)>/w-<h(state)>/<lot>@<repo>   its worktree of a neighbour repo (AlsoWorktree)
//
// h(x) is the first 8 hex digits of the SHA-256 of the absolute path x:
// h(repo) of the repository's folder, h(state) of the wave's state file.
// So two clones of one repository, or two waves of one name in two
// folders, never share a folder; the names in front keep the path
// readable. Worktrees live outside the repositories because tools that
// look for configuration in parent folders (cargo and npm workspaces,
// go.work, lint and tsconfig lookups) must see a lot as they see the
// checkout (docs/integration.md, "Worktrees and branches"). The state file records each lot's worktree:
// once made, a worktree is found from the state (see [AlsoWorktree]),
// never by computing its path again, so a change of the home or of this
// scheme loses none. Before this scheme worktrees were
// .cadence/worktrees/<wave>/<lot> beside the wave file
// ([Wave.OldWorktreeRoot]); those recorded in a state are used as they are.
package layout

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WorkDirName is the name of the work folder beside a wave file.
const WorkDirName = ".cadence"

// ignoreAll is the content of the work folder's .gitignore.
const ignoreAll = "*\n"

// Wave is the on-disk layout of one wave. The zero value is not useful;
// build it with [New].
type Wave struct {
	file, name, home string
	// worktrees is the wave's worktrees folder ("" : <home>/worktrees).
	worktrees string
}

// New returns the layout of the wave whose file is waveFile (as given:
// relative paths stay relative to the current folder), named name, on a
// machine whose cadence home is home (see [Home]). Paths that need the name
// (logs, worktrees) are wrong with an empty one; a command that learns the
// name from the state file names the layout then, with [Wave.Named].
func New(waveFile, name, home string) Wave {
	return Wave{file: waveFile, name: name, home: home}
}

// Named returns the same layout for the wave called name.
func (w Wave) Named(name string) Wave {
	w.name = name
	return w
}

// Abs returns the same layout with the wave file's path, the home and the
// worktrees folder made absolute (against the current folder): what is
// handed to git and to child processes (worktrees, step files, the work
// folder) must not depend on the folder they run in. Messages keep the
// paths as the user gave them.
func (w Wave) Abs() Wave {
	w.file, w.home, w.worktrees = abs(w.file), abs(w.home), abs(w.worktrees)
	return w
}

// abs is p made absolute; "" stays "", and so does p when the current
// folder is unknown.
func abs(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// Home is the cadence home: cadenceHome (the value of $CADENCE_HOME) when
// set, else <userHome>/.cadence, else <tmp>/cadence when the user has no
// home folder (userHome "").
func Home(cadenceHome, userHome string) string {
	switch {
	case cadenceHome != "":
		return cadenceHome
	case userHome != "":
		return filepath.Join(userHome, WorkDirName)
	}
	return filepath.Join(os.TempDir(), "cadence")
}

// File is the wave file, as given to New.
func (w Wave) File() string { return w.file }

// Name is the wave's name.
func (w Wave) Name() string { return w.name }

// Dir is the folder of the wave file.
func (w Wave) Dir() string { return filepath.Dir(w.file) }

// StateFile is the wave's state file: the wave file's folder, its stem
// (without .hcl, .json or .hcl.json) plus ".state.json" (docs/running.md,
// "State and resume").
func (w Wave) StateFile() string { return StateFile(w.file) }

// StateFile is the state file of the wave file waveFile (see
// [Wave.StateFile]); it needs neither the wave's name nor the home.
func StateFile(waveFile string) string {
	dir, base := stem(waveFile)
	return filepath.Join(dir, base+".state.json")
}

// stem splits waveFile into its folder and its name without .hcl, .json
// or .hcl.json.
func stem(waveFile string) (dir, base string) {
	dir, base = filepath.Split(waveFile)
	for _, ext := range []string{".hcl.json", ".json", ".hcl"} {
		if strings.HasSuffix(base, ext) {
			base = strings.TrimSuffix(base, ext)
			break
		}
	}
	return dir, base
}

// AutoVarFiles are the var files loaded with the wave file waveFile
// without a -var-file, when they exist: beside it, its stem plus
// ".vars.hcl" (HCL) and plus ".vars.json" (HCL JSON), in that order:
// wave.hcl → wave.vars.hcl, wave.vars.json (as Terraform loads
// terraform.tfvars; one wave's, so several waves can share a folder).
func AutoVarFiles(waveFile string) []string {
	dir, base := stem(waveFile)
	return []string{filepath.Join(dir, base+".vars.hcl"), filepath.Join(dir, base+".vars.json")}
}

// Journal is the state's journal, kept beside the state file while a run
// is live (the state store appends state.JournalSuffix).
func (w Wave) Journal() string { return w.StateFile() + ".journal" }

// Lock is the wave lock, <state file>.lock: held by apply from before
// planning to its end, and by answer and clean.
func (w Wave) Lock() string { return w.StateFile() + ".lock" }

// Requests is the wave's request channel, <state file>.requests: the
// folder (0700) where drop, stop and answer leave requests for the live
// apply, and the apply its acknowledgements (executor/control).
func (w Wave) Requests() string { return w.StateFile() + ".requests" }

// WorkDir is the .cadence folder beside the wave file.
func (w Wave) WorkDir() string { return filepath.Join(w.Dir(), WorkDirName) }

// GitIgnore is the work folder's .gitignore, which ignores everything
// (the folder itself included).
func (w Wave) GitIgnore() string { return filepath.Join(w.WorkDir(), ".gitignore") }

// IgnoreBeside is what a .gitignore beside a wave file needs so that
// nothing cadence leaves there shows as untracked, one gitignore pattern a
// line: the state file, its journal (left by a killed apply) and lock
// (StateFile, Journal, Lock), the request channel (Requests), the state store's temporary file of an atomic
// write cut short (".<state file>.tmp-<random>", internal/state), and the
// work folder (WorkDir; it also ignores itself). None of them is meant to
// be committed: the state holds absolute paths (worktrees, the wave file)
// and process ids of this machine. The wave file and its var files are
// committed. `cadence init` and the examples' .gitignore files hold these
// lines; layout's tests check that they cover every path above.
var IgnoreBeside = []string{
	"*.state.json",
	"*.state.json.journal",
	"*.state.json.lock",
	"*.state.json.requests/",
	".*.state.json.tmp-*",
	WorkDirName + "/",
}

// MakeWorkDir creates the work folder, the lead's alone (mode 0700, also
// when it was made before with another), and its self-ignoring .gitignore.
func (w Wave) MakeWorkDir() error {
	if err := os.MkdirAll(w.WorkDir(), 0o700); err != nil {
		return fmt.Errorf("make the work folder: %w", err)
	}
	if err := os.Chmod(w.WorkDir(), 0o700); err != nil {
		return fmt.Errorf("make the work folder: %w", err)
	}
	return IgnoreSelf(w.WorkDir())
}

// LogDir is the wave's folder of logs and reports: .cadence/<wave>.
func (w Wave) LogDir() string { return filepath.Join(w.WorkDir(), w.name) }

// JournalLog is the run's progress journal: .cadence/<wave>/journal.log.
func (w Wave) JournalLog() string { return filepath.Join(w.LogDir(), "journal.log") }

// LotDir is a lot's folder of step files: .cadence/<wave>/<lot>.
func (w Wave) LotDir(lot string) string { return filepath.Join(w.LogDir(), lot) }

// StepFile is a file of the lot's step n (its index in the lot's steps in
// the state): <LotDir>/<n>-<kind><ext>, ext one of ".json" (the agent's
// output or report), ".err" (its stderr), ".log" (a command's output), or
// "" for the prefix the agent runner completes.
func (w Wave) StepFile(lot string, n int, kind, ext string) string {
	return filepath.Join(w.LotDir(lot), fmt.Sprintf("%d-%s%s", n, kind, ext))
}

// StepGlob matches every file of the lot's step n (the formatting retry's
// and relaunch's files included), for filepath.Glob.
func (w Wave) StepGlob(lot string, n int) string {
	return filepath.Join(w.LotDir(lot), fmt.Sprintf("%d-*", n))
}

// ReplacedDir is where the files of a lot's earlier run go when -replace
// starts it afresh (its steps are numbered from 0 again): the k-th such
// run (k from 1) in <LotDir>/replaced-<k>.
func (w Wave) ReplacedDir(lot string, k int) string {
	return filepath.Join(w.LotDir(lot), fmt.Sprintf("replaced-%d", k))
}

// ReplacedGlob matches every replaced-<k> folder of the lot, for
// filepath.Glob.
func (w Wave) ReplacedGlob(lot string) string {
	return filepath.Join(w.LotDir(lot), "replaced-*")
}

// Home is the cadence home the layout was built with.
func (w Wave) Home() string { return w.home }

// SlotsDir is the machine's folder of session slots: <home>/slots.
func (w Wave) SlotsDir() string { return filepath.Join(w.home, "slots") }

// RegistryDir is the machine's registry of live waves: <home>/waves.
func (w Wave) RegistryDir() string { return filepath.Join(w.home, "waves") }

// RepoLock is the one-wave-per-repository lock of the repository whose git
// common dir is commonDir: <commonDir>/cadence/repo.lock. It is a function
// of the repository, shared by every wave.
func RepoLock(commonDir string) string { return filepath.Join(commonDir, "cadence", "repo.lock") }

// IntegrateLock serialises integrations into the repository whose git
// common dir is commonDir: <commonDir>/cadence/integrate.lock.
func IntegrateLock(commonDir string) string {
	return filepath.Join(commonDir, "cadence", "integrate.lock")
}

// RepoGuard is cadence's guard folder of the repository whose git common
// dir is commonDir, there while a wave runs (gitint.InstallGuard: hooks,
// push-blocking config, the lot worktrees' entries):
// <commonDir>/cadence/guard.
func RepoGuard(commonDir string) string { return filepath.Join(commonDir, "cadence", "guard") }

// EnclosingWorkDir returns the nearest folder named .cadence that holds
// path (path itself included), or "" when there is none.
func EnclosingWorkDir(path string) string {
	for d := path; d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) == WorkDirName {
			return d
		}
	}
	return ""
}

// IgnoreSelf writes the .gitignore of "*" into the work folder dir unless
// it already says exactly that, so that cadence's files never show in a
// repository that contains the wave file.
func IgnoreSelf(dir string) error {
	p := filepath.Join(dir, ".gitignore")
	b, err := os.ReadFile(p)
	if err == nil && string(b) == ignoreAll {
		return nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", p, err)
	}
	if err := os.WriteFile(p, []byte(ignoreAll), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}
