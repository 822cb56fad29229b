package executor

import (
	"context"
	"io"

	"github.com/cadence-run/cadence/executor/slots"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Host is what Apply takes around a run and gives back after it: the
// repository locks and push guards, the state store, the machine's session
// slots and registry of live waves. SystemHost is the real one; tests use
// fakes that count what is taken and given back.
type Host interface {
	// LockRepo takes the one-wave-per-repository lock of repo for holder,
	// without waiting; the error of a held lock names the holder.
	LockRepo(ctx context.Context, repo *spec.Repo, holder flock.Holder) (release func(), err error)
	// InstallGuard installs cadence's guard in repo for the wave (hooks
	// and push-blocking config that lot worktrees get; the lead's checkout
	// is not touched); remove takes it out again.
	InstallGuard(ctx context.Context, repo *spec.Repo) (remove func() error, err error)
	// RemoveLeftGuard removes the guard a killed cadence left in repo, a
	// repository of the wave where no lot of this run works, if its
	// one-wave lock is free (taken for holder, without waiting, and given
	// back); removed says whether there was one. A held lock is another
	// wave's, whose guard stays.
	RemoveLeftGuard(ctx context.Context, repo *spec.Repo, holder flock.Holder) (removed bool, err error)
	// OpenStore opens the state store of the state file at path.
	OpenStore(path string) (*state.Store, error)
	// OpenSlots joins the session slot pool in dir with a cap of size, for
	// the sessions of wave.
	OpenSlots(dir string, size int, wave string) (SlotPool, error)
	// Register adds this process's entry to the registry of live waves in
	// dir; closing it removes the entry.
	Register(dir string, e slots.WaveEntry) (io.Closer, error)
}

// SlotPool is a joined session slot pool (step.SlotPool).
type SlotPool = step.SlotPool

// SystemHost is the Host of a real apply (step.SystemHost).
type SystemHost = step.SystemHost
