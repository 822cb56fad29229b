package executor

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// fakeGit is an in-memory Git: worktrees are plain folders, every commit
// is a counter.
type fakeGit struct {
	mu        sync.Mutex
	heads     map[string]int
	dirty     map[string][]string
	integrate map[string]error // by branch
	// worktreeErr fails the making of worktrees while set.
	worktreeErr error
	// resets and asides record ResetForReplay and SetAside calls.
	resets, asides []string
	// refs are the guarded refs (moveRef); restored, the moves RestoreRefs
	// put back.
	refs     gitint.Refs
	restored []gitint.RefMove
	// onAdvance, when set, is called at each Advance.
	onAdvance func()
	// emptyDiff makes PatchID find no diff (the branch adds nothing to
	// the base) while set; otherwise every change has patch-id "patch".
	emptyDiff bool
	// dirs are the lots' worktrees by branch: Advance of a branch returns
	// its worktree's HEAD, as git does.
	dirs map[string]string
}

func newFakeGit() *fakeGit {
	return &fakeGit{heads: map[string]int{}, dirty: map[string][]string{}, integrate: map[string]error{}}
}

func (g *fakeGit) Worktree(_ context.Context, _ *spec.Repo, dir, branch string, _ bool) (string, error) {
	g.mu.Lock()
	err := g.worktreeErr
	if g.dirs == nil {
		g.dirs = map[string]string{}
	}
	g.dirs[branch] = dir
	g.mu.Unlock()
	if err != nil {
		return "", err
	}
	return fakeBase, os.MkdirAll(dir, 0o755)
}
func (g *fakeGit) ResetForReplay(_ context.Context, _ *spec.Repo, dir, wave, lot, to string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.heads[dir] == 0 && len(g.dirty[dir]) == 0 {
		return "", nil
	}
	g.heads[dir] = 0
	g.resets = append(g.resets, lot+"@"+to)
	return fmt.Sprintf("refs/cadence/backup/%s/%s/%d", wave, lot, len(g.resets)), nil
}
func (g *fakeGit) SetAside(_ context.Context, _ *spec.Repo, dir, branch, wave, lot string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.heads[dir] = 0
	g.asides = append(g.asides, branch)
	return fmt.Sprintf("refs/cadence/backup/%s/%s/%d", wave, lot, len(g.asides)), nil
}
func (g *fakeGit) Head(_ context.Context, dir string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return fmt.Sprintf("a%039x", g.heads[dir]), nil
}
func (g *fakeGit) commit(dir string) {
	g.mu.Lock()
	g.heads[dir]++
	g.mu.Unlock()
}
func (g *fakeGit) Dirty(_ context.Context, dir string) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dirty[dir], nil
}
func (g *fakeGit) Commits(_ context.Context, dir, from, to string) ([]string, error) {
	return []string{to + " commit (" + filepath.Base(dir) + ")"}, nil
}
func (g *fakeGit) Base(context.Context, *spec.Repo) (string, error) { return fakeBase, nil }
func (g *fakeGit) Changed(context.Context, string, string, string) ([]string, error) {
	return nil, nil
}

// fakeBase is the fake git's base commit; its HEADs are "a" and 39 hex
// digits of a counter: object ids, as the state's checks want them.
var fakeBase = strings.Repeat("b", 40)

func (g *fakeGit) LockIntegration(context.Context, *spec.Repo, string) (func(), error) {
	return func() {}, nil
}
func (g *fakeGit) Rebase(context.Context, *spec.Repo, string) (bool, error) { return false, nil }
func (g *fakeGit) RebaseOnto(context.Context, *spec.Repo, string, string, string) (bool, error) {
	return false, nil
}
func (g *fakeGit) Unstack(context.Context, *spec.Repo, string, string, string, string, string, bool) (string, error) {
	return "", nil
}
func (g *fakeGit) Tree(_ context.Context, dir string) (string, error) {
	return fmt.Sprintf("%x", sha1.Sum([]byte(dir))), nil // a tree per worktree
}
func (g *fakeGit) TreeOf(_ context.Context, _ *spec.Repo, commit string) (string, error) {
	return fmt.Sprintf("%x", sha1.Sum([]byte(commit))), nil // a tree per commit
}
func (g *fakeGit) IsAncestor(context.Context, *spec.Repo, string, string) bool { return true }
func (g *fakeGit) Advance(_ context.Context, _ *spec.Repo, branch, _ string) (string, error) {
	if g.onAdvance != nil {
		g.onAdvance()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.integrate[branch]; err != nil {
		return "", err
	}
	if dir, ok := g.dirs[branch]; ok {
		return fmt.Sprintf("a%039x", g.heads[dir]), nil
	}
	return "integrated-" + branch, nil
}
func (g *fakeGit) Rewind(context.Context, *spec.Repo, string, string) error { return nil }
func (g *fakeGit) PatchID(context.Context, *spec.Repo, string, string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.emptyDiff {
		return "", nil
	}
	return "patch", nil
}
func (g *fakeGit) RemoteState(context.Context, *spec.Repo) string              { return "" }
func (g *fakeGit) LocalRemoteState(context.Context, *spec.Repo) string         { return "" }
func (g *fakeGit) SessionEnv(context.Context, []*spec.Repo, []string) []string { return nil }
func (g *fakeGit) RemoteHosts(context.Context, []*spec.Repo) []string          { return nil }
func (g *fakeGit) RemoveWorktree(context.Context, *spec.Repo, string) error    { return nil }

// The guarded refs of the fake: one set for every repository, moved by
// tests through moveRef; worktrees are always on their lot's branch.
func (g *fakeGit) Refs(_ context.Context, _ *spec.Repo, skip string) (gitint.Refs, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := gitint.Refs{}
	for k, v := range g.refs {
		if skip == "" || !strings.HasPrefix(k, skip) {
			out[k] = v
		}
	}
	return out, nil
}
func (g *fakeGit) OutsideMoves(context.Context, *spec.Repo, time.Time) []gitint.OutsideMove {
	return nil
}
func (g *fakeGit) Refusals(context.Context, *spec.Repo) []gitint.Refusal { return nil }
func (g *fakeGit) CheckoutStatus(context.Context, *spec.Repo) (gitint.CheckoutStatus, error) {
	return gitint.CheckoutStatus{}, nil
}
func (g *fakeGit) RestoreRefs(_ context.Context, _ *spec.Repo, wave, lot string, moves []gitint.RefMove) []gitint.PutBack {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []gitint.PutBack
	for _, m := range moves {
		g.restored = append(g.restored, m)
		if g.refs[m.Ref] == m.New {
			g.refs[m.Ref] = m.Old
		}
		out = append(out, gitint.PutBack{RefMove: m, Rescue: fmt.Sprintf("%s%s/%s/%d", gitint.RescuePrefix, wave, lot, len(g.restored))})
	}
	return out
}
func (g *fakeGit) WorktreeHead(string) (string, error) { return "", errors.New("fake: no HEAD") }
func (g *fakeGit) HeadLogTip(string) string            { return "" }
func (g *fakeGit) Hooks(context.Context, *spec.Repo) (gitint.HookFiles, error) {
	return gitint.HookFiles{}, nil
}
func (g *fakeGit) RestoreHooks(gitint.HookFiles, string, string) []gitint.HookChange { return nil }
func (g *fakeGit) Stash(context.Context, *spec.Repo) ([]gitint.StashEntry, error) {
	return nil, nil
}
func (g *fakeGit) RestoreStash(context.Context, *spec.Repo, []gitint.StashEntry) []gitint.StashPutBack {
	return nil
}
func (g *fakeGit) PutOnBranch(context.Context, *spec.Repo, string, string, string, string) (string, error) {
	return "", nil
}

// moveRef moves a guarded ref of the fake ("" deletes it).
func (g *fakeGit) moveRef(ref, sha string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refs == nil {
		g.refs = gitint.Refs{}
	}
	if sha == "" {
		delete(g.refs, ref)
		return
	}
	g.refs[ref] = sha
}
func (g *fakeGit) GuardWorktree(context.Context, *spec.Repo, string, string) error { return nil }
func (g *fakeGit) SetUpWorktree(context.Context, *spec.Repo, string, spec.Bootstrap) error {
	return nil
}
func (g *fakeGit) ConfigFiles(context.Context, *spec.Repo) (gitint.ConfigFiles, error) {
	return gitint.ConfigFiles{}, nil
}
func (g *fakeGit) RestoreConfig(gitint.ConfigFiles, string, string) []gitint.ConfigChange { return nil }
func (g *fakeGit) GuardIntact(gitint.ConfigFiles) string                                  { return "" }
func (g *fakeGit) RepairGuard(context.Context, *spec.Repo) (string, error)                { return "", nil }

// span is one recorded session.
type span struct {
	lot        string
	step       state.StepKind
	pass       int
	start, end time.Time
	brief      string
}

// fakeAgent plays scripted sessions and records them.
type fakeAgent struct {
	git    *fakeGit
	mu     sync.Mutex
	spans  []span
	script func(s Session) (Outcome, time.Duration)
	// noCommit, when set, says which write sessions end ok without a commit.
	noCommit func(s Session) bool
	// recount, when set, makes the agent a Recounter.
	recount func(a *spec.Agent, sessionID, dir, logPrefix string) (agent.Spent, bool)
}

func (a *fakeAgent) Run(ctx context.Context, s Session) Outcome {
	if s.Started != nil {
		s.Started(4242)
	}
	out, d := Outcome{Status: state.StepOK, Usage: state.Usage{Input: 10, Output: 5}}, 5*time.Millisecond
	if s.ReadOnly {
		out.Report = &Report{Verdict: "fine"}
	} else {
		out.Report = &Report{Summary: "did it"}
	}
	if a.script != nil {
		out, d = a.script(s)
	}
	sp := span{lot: s.Lot, step: s.Step, pass: s.Pass, start: time.Now(), brief: s.Brief}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		out = Outcome{Status: state.StepInterrupted, Cause: "stopped"}
	}
	if out.Status == state.StepOK && !s.ReadOnly && (a.noCommit == nil || !a.noCommit(s)) {
		a.git.commit(s.Dir)
	}
	sp.end = time.Now()
	a.mu.Lock()
	a.spans = append(a.spans, sp)
	a.mu.Unlock()
	return out
}

// maxOverlap is the most sessions that ran at one instant.
func (a *fakeAgent) maxOverlap() int {
	type ev struct {
		t time.Time
		d int
	}
	var evs []ev
	for _, s := range a.spans {
		evs = append(evs, ev{s.start, 1}, ev{s.end, -1})
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].t.Equal(evs[j].t) {
			return evs[i].d < evs[j].d
		}
		return evs[i].t.Before(evs[j].t)
	})
	cur, most := 0, 0
	for _, e := range evs {
		cur += e.d
		most = max(most, cur)
	}
	return most
}

// harness runs waves of one test.
type harness struct {
	t     testing.TB
	dir   string
	cfg   *spec.Config
	git   *fakeGit
	agent *fakeAgent
	// sup, when set (useSupervisor), is what the run's steps run under.
	sup *step.Supervisor
}

func newHarness(t testing.TB, src string) *harness {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "wave.hcl")
	os.WriteFile(file, []byte(src), 0o644)
	cfg, diags := spec.NewLoader().LoadFile(file, spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g := newFakeGit()
	return &harness{t: t, dir: dir, cfg: cfg, git: g, agent: &fakeAgent{git: g}}
}

// run plans against the current state and runs it.
func (h *harness) run(ctx context.Context, opts planner.Options) (Result, error) {
	h.t.Helper()
	return h.runWith(ctx, opts, func(*Options) {})
}

// runWith is harness.run with Options shaped by set.
func (h *harness) runWith(ctx context.Context, opts planner.Options, set func(*Options)) (Result, error) {
	h.t.Helper()
	statePath := filepath.Join(h.dir, "wave.state.json")
	st, _, err := state.Read(statePath)
	if err != nil && err != state.ErrNotExist {
		h.t.Fatal(err)
	}
	opts.Jobs = max(opts.Jobs, 2)
	p, diags := planner.Build(planner.Input{Config: h.cfg, State: st, Options: opts})
	if diags.HasErrors() {
		h.t.Fatal(diags.Error())
	}
	store, err := state.OpenStore(statePath)
	if err != nil {
		h.t.Fatal(err)
	}
	defer store.Close()
	bs, _ := briefs.Load("")
	o := Options{Config: h.cfg, Plan: p, Store: store, Agent: h.agent, Git: h.git, Briefs: bs,
		Layout:      layout.New(filepath.Join(h.dir, "wave.hcl"), h.cfg.Wave.Name, filepath.Join(h.dir, "home")),
		MaxSessions: p.Totals.MaxSessions, Jobs: p.Totals.Jobs, Budget: int64(p.Totals.Budget), BudgetUSDMicros: int64(p.Totals.BudgetUSD),
		Env: []string{"PATH=" + os.Getenv("PATH")}, Supervisor: h.sup,
		// The harness's worktrees are no git worktrees (a fake Git) and
		// its commands write markers beside them: outside the step
		// sandbox, which executor/step's tests cover.
		NoStepSandbox: true}
	set(&o)
	return Run(ctx, o)
}

// lots reads the lot statuses from the state file.
func (h *harness) lots() map[string]*state.Lot {
	st, _, err := state.Read(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	return st.Lots
}

func (h *harness) status(id string) state.LotStatus {
	if l := h.lots()[id]; l != nil {
		return l.Status
	}
	return ""
}

func agentLots(ids ...string) string {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "lot %q {\n  repo = repo.r\n  brief = \"do %s\"\n}\n", id, id)
	}
	return b.String()
}
