package executor

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/slots"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// fakeHost logs what Apply takes ("+x") and gives back ("-x"); fail makes
// the named step fail ("lock b", "guard b", "store", "slots", "register",
// "unguard a" on the way out).
type fakeHost struct {
	mu      sync.Mutex
	log     []string
	fail    map[string]error
	holders []flock.Holder
	entry   slots.WaveEntry
}

func (f *fakeHost) add(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
}

func (f *fakeHost) LockRepo(_ context.Context, r *spec.Repo, h flock.Holder) (func(), error) {
	if err := f.fail["lock "+r.Name]; err != nil {
		return nil, err
	}
	f.holders = append(f.holders, h)
	f.add("+lock " + r.Name)
	return func() { f.add("-lock " + r.Name) }, nil
}

func (f *fakeHost) InstallGuard(_ context.Context, r *spec.Repo) (func() error, error) {
	if err := f.fail["guard "+r.Name]; err != nil {
		return nil, err
	}
	f.add("+guard " + r.Name)
	return func() error {
		if err := f.fail["unguard "+r.Name]; err != nil {
			return err
		}
		f.add("-guard " + r.Name)
		return nil
	}, nil
}

func (f *fakeHost) RemoveLeftGuard(context.Context, *spec.Repo, flock.Holder) (bool, error) {
	return false, nil
}

func (f *fakeHost) OpenStore(path string) (*state.Store, error) {
	if err := f.fail["store"]; err != nil {
		return nil, err
	}
	f.add("+store")
	return state.OpenStore(path)
}

func (f *fakeHost) OpenSlots(dir string, size int, wave string) (SlotPool, error) {
	if err := f.fail["slots"]; err != nil {
		return nil, err
	}
	f.add("+slots")
	return fakePool{f}, nil
}

func (f *fakeHost) Register(dir string, e slots.WaveEntry) (io.Closer, error) {
	if err := f.fail["register"]; err != nil {
		return nil, err
	}
	f.entry = e
	f.add("+register")
	return closer(func() { f.add("-register") }), nil
}

type fakePool struct{ f *fakeHost }

func (p fakePool) Acquire(context.Context, string, state.StepKind) (func(), *os.File, error) {
	return func() {}, nil, nil
}
func (p fakePool) Close() error { p.f.add("-slots"); return nil }

type closer func()

func (c closer) Close() error { c(); return nil }

const applyWave = `
wave "w" {}
repo "a" {
  path = "."
}
repo "b" {
  path = "."
}
lot "x" {
  repo  = repo.a
  brief = "do x"
}
lot "y" {
  repo  = repo.b
  brief = "do y"
}
lot "z" {
  run = "true"
}
`

// applyCase plans applyWave and applies it through host.
func applyCase(t *testing.T, host *fakeHost, run func(context.Context, Options) (Result, error)) (*harness, layout.Wave, Result, error, []string) {
	t.Helper()
	h := newHarness(t, applyWave)
	p, diags := planner.Build(planner.Input{Config: h.cfg, Options: planner.Options{Jobs: 2}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	lay := layout.New(filepath.Join(h.dir, "wave.hcl"), "w", filepath.Join(h.dir, "home"))
	var warnings []string
	res, err := Apply(context.Background(), p, ApplyOptions{
		Config: h.cfg, Layout: lay, WaveDigest: "digest", Agent: h.agent, Git: h.git, Host: host,
		Env: []string{"PATH=" + os.Getenv("PATH")}, Jobs: 2,
		Warn: func(s string) { warnings = append(warnings, s) },
		run:  run,
	})
	return h, lay, res, err, warnings
}

func list(s ...string) []string { return s }

// taken is the way in of a run that got everything.
var taken = list("+lock a", "+lock b", "+guard a", "+guard b", "+store", "+slots", "+register")

func TestApplyTakesAndGivesBack(t *testing.T) {
	host := &fakeHost{}
	h, lay, res, err, warnings := applyCase(t, host, nil)
	if err != nil || res.Status != state.WaveDone || res.Lots[state.LotDone] != 3 {
		t.Fatalf("res %+v, err %v", res, err)
	}
	want := append(append([]string{}, taken...), "-register", "-slots", "-guard b", "-guard a", "-lock b", "-lock a")
	if !reflect.DeepEqual(host.log, want) {
		t.Errorf("host log\n got %v\nwant %v", host.log, want)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	if res.State == nil || res.State.Lots["x"].Status != state.LotDone || res.State.Lineage == "" || res.State.WaveDigest != "digest" {
		t.Errorf("Result.State %+v", res.State)
	}
	if _, err := os.Stat(lay.Journal()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the store was not closed: its journal %s is still there (%v)", lay.Journal(), err)
	}
	if host.holders[0].What != "repo a" || host.holders[1].What != "repo b" || host.holders[0].Wave != "w" || host.holders[0].PID != os.Getpid() {
		t.Errorf("repo lock holders %+v", host.holders)
	}
	if host.entry.Wave != "w" || host.entry.StateFile != lay.Abs().StateFile() || host.entry.MaxSessions == 0 {
		t.Errorf("registry entry %+v", host.entry)
	}
	if b, err := os.ReadFile(lay.GitIgnore()); err != nil || string(b) != "*\n" {
		t.Errorf("work folder .gitignore: %q, %v", b, err)
	}
	_ = h
}

func TestApplyReleasesOnEveryPath(t *testing.T) {
	boom := errors.New("boom")
	runErr := func(context.Context, Options) (Result, error) {
		return Result{Status: state.WaveRunning}, boom
	}
	for _, c := range []struct {
		name  string
		fail  string
		run   func(context.Context, Options) (Result, error)
		setup bool
		log   []string
		warn  string
	}{
		{name: "lock held", fail: "lock b", setup: true,
			log: list("+lock a", "-lock a")},
		{name: "guard install fails", fail: "guard b", setup: true,
			log: list("+lock a", "+lock b", "+guard a", "-guard a", "-lock b", "-lock a")},
		{name: "store cannot open", fail: "store", setup: true,
			log: list("+lock a", "+lock b", "+guard a", "+guard b", "-guard b", "-guard a", "-lock b", "-lock a")},
		{name: "slots cannot open", fail: "slots", setup: true,
			log: list("+lock a", "+lock b", "+guard a", "+guard b", "+store", "-guard b", "-guard a", "-lock b", "-lock a")},
		{name: "registry fails: warned, the run goes on", fail: "register", warn: "registry of live waves (boom)",
			log: list("+lock a", "+lock b", "+guard a", "+guard b", "+store", "+slots", "-slots", "-guard b", "-guard a", "-lock b", "-lock a")},
		{name: "run error", run: runErr,
			log: append(append([]string{}, taken...), "-register", "-slots", "-guard b", "-guard a", "-lock b", "-lock a")},
		{name: "guard removal fails on the way out", fail: "unguard a", warn: "could not remove the push guard: boom",
			log: append(append([]string{}, taken...), "-register", "-slots", "-guard b", "-lock b", "-lock a")},
	} {
		t.Run(c.name, func(t *testing.T) {
			host := &fakeHost{fail: map[string]error{}}
			if c.fail != "" {
				host.fail[c.fail] = boom
			}
			_, lay, res, err, warnings := applyCase(t, host, c.run)
			var se *SetupError
			switch {
			case c.setup && !errors.As(err, &se):
				t.Errorf("err %v, want a *SetupError", err)
			case c.setup && !errors.Is(err, boom):
				t.Errorf("err %v does not wrap the cause", err)
			case !c.setup && c.run != nil && (!errors.Is(err, boom) || errors.As(err, &se)):
				t.Errorf("err %v, want the run's error as it is", err)
			case !c.setup && c.run == nil && err != nil:
				t.Errorf("err %v", err)
			}
			if !reflect.DeepEqual(host.log, c.log) {
				t.Errorf("host log\n got %v\nwant %v", host.log, c.log)
			}
			if c.warn == "" && len(warnings) > 0 {
				t.Errorf("warnings %v", warnings)
			}
			if c.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], c.warn)) {
				t.Errorf("warnings %v, want one with %q", warnings, c.warn)
			}
			if !c.setup && res.State == nil {
				t.Errorf("no Result.State after the run")
			}
			if _, err := os.Stat(lay.Journal()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the store was left open: its journal is there (%v)", err)
			}
			if c.setup {
				if _, err := os.Stat(lay.WorkDir()); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a refused apply made the work folder (%v)", err)
				}
			}
		})
	}
}

// TestApplyReleasesOnPanic: a panic in the run still gives everything back.
func TestApplyReleasesOnPanic(t *testing.T) {
	host := &fakeHost{}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		applyCase(t, host, func(context.Context, Options) (Result, error) { panic("run") })
	}()
	want := append(append([]string{}, taken...), "-register", "-slots", "-guard b", "-guard a", "-lock b", "-lock a")
	if !reflect.DeepEqual(host.log, want) {
		t.Errorf("host log\n got %v\nwant %v", host.log, want)
	}
}

// TestApplySetupIgnoresCancel: a cancelled context stops the run, not the
// way in: the run sees it and records the wave interrupted.
func TestApplySetupIgnoresCancel(t *testing.T) {
	h := newHarness(t, applyWave)
	p, _ := planner.Build(planner.Input{Config: h.cfg, Options: planner.Options{Jobs: 2}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	host := &fakeHost{}
	var sawCancel bool
	_, err := Apply(ctx, p, ApplyOptions{Config: h.cfg, Layout: layout.New(filepath.Join(h.dir, "wave.hcl"), "w", h.dir),
		Agent: h.agent, Git: h.git, Host: host, Now: time.Now,
		run: func(ctx context.Context, o Options) (Result, error) {
			sawCancel = ctx.Err() != nil
			return Result{Status: state.WaveInterrupted}, nil
		}})
	if err != nil || !sawCancel || len(host.log) != 13 {
		t.Errorf("err %v, run saw cancel %v, host log %v", err, sawCancel, host.log)
	}
}
