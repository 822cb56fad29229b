package step

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cadence-run/cadence/executor/slots"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// SlotPool is a joined session slot pool: Slots for the run, closed after.
type SlotPool interface {
	Slots
	Close() error
}

// NewSystemHost is the SystemHost whose git starts from environ (the
// user's environment, gitint.Env's rules).
func NewSystemHost(environ []string) SystemHost {
	return SystemHost{Git: gitint.NewGit(environ)}
}

// NewGit is the git of a run on this machine, starting from environ
// (gitint.Repos).
func NewGit(environ []string) Git { return gitint.NewRepos(environ) }

// SystemHost is the Host of a real apply: flock locks in each repository's
// git common dir (layout.RepoLock), gitint's push guards, the state file's
// store, and the slots package.
type SystemHost struct {
	// Git runs the git calls of the locks and guards.
	Git gitint.Git
}

// LockRepo implements executor.Host.
func (s SystemHost) LockRepo(ctx context.Context, repo *spec.Repo, h flock.Holder) (func(), error) {
	// The common dir as gitint.Git.Inspect (and so `cadence` elsewhere) reads
	// it, with one git call: the lock file must be the same for all.
	out, err := s.Git.Run(ctx, repo.Path, "rev-parse", "--path-format=absolute", "--git-common-dir")
	common := strings.TrimSpace(out)
	if err != nil || common == "" {
		return nil, fmt.Errorf("repo %s: cannot find its git folder: %v", repo.Name, err)
	}
	l, err := flock.TryAcquire(layout.RepoLock(common), h)
	if err != nil {
		return nil, fmt.Errorf("repo %s is used by another wave: %w", repo.Name, err)
	}
	return func() { _ = l.Release() }, nil
}

// InstallGuard implements executor.Host.
func (h SystemHost) InstallGuard(ctx context.Context, repo *spec.Repo) (func() error, error) {
	return h.Git.InstallGuard(ctx, repo.Path)
}

// RemoveLeftGuard implements executor.Host: the repository's lock is
// taken without waiting for the removal (gitint.Git.RemoveLeftGuard) and
// given back; a held lock (another wave's) or a path that is no git
// repository is nothing to remove.
func (s SystemHost) RemoveLeftGuard(ctx context.Context, repo *spec.Repo, h flock.Holder) (bool, error) {
	release, err := s.LockRepo(ctx, repo, h)
	if err != nil {
		return false, nil
	}
	defer release()
	return s.Git.RemoveLeftGuard(ctx, repo.Path)
}

// OpenStore implements executor.Host.
func (SystemHost) OpenStore(path string) (*state.Store, error) { return state.OpenStore(path) }

// OpenSlots implements executor.Host.
func (SystemHost) OpenSlots(dir string, size int, wave string) (SlotPool, error) {
	pool, err := slots.Open(dir, size)
	if err != nil {
		return nil, err
	}
	return poolSlots{pool: pool, wave: wave}, nil
}

// Register implements executor.Host.
func (SystemHost) Register(dir string, e slots.WaveEntry) (io.Closer, error) {
	return slots.Register(dir, e)
}

// poolSlots adapts a slot pool to Slots.
type poolSlots struct {
	pool *slots.Pool
	wave string
}

// Acquire implements Slots.
func (s poolSlots) Acquire(ctx context.Context, lot string, step state.StepKind) (func(), *os.File, error) {
	sl, err := s.pool.Acquire(ctx, slots.Holder{Wave: s.wave, Lot: lot, Step: string(step)})
	if err != nil {
		return nil, nil, err
	}
	return func() { _ = sl.Release() }, sl.File(), nil
}

// Close implements SlotPool.
func (s poolSlots) Close() error { return s.pool.Close() }
