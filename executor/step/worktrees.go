package step

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Prepare makes, or finds again, each of the lot's worktrees on its
// branch (Git.Worktree) and puts it under its repository's guard
// (Git.GuardWorktree), the lot marked active meanwhile: another lot's
// step does not take the branch's making for a foreign move. A worktree
// not there before is named in Made. The first that cannot be made ends
// it, said in Err.
func (l *Local) Prepare(ctx context.Context, req PrepareRequest) (Prepared, error) {
	lot, err := l.guardLot(req.Lot)
	if err != nil {
		return Prepared{}, err
	}
	done := l.guard.Busy(req.ID) // the worktrees' branches are made
	defer done()
	p := Prepared{Starts: map[string]string{}}
	for _, r := range lot.Repos {
		if _, err := os.Stat(r.Dir); errors.Is(err, fs.ErrNotExist) {
			p.Made = append(p.Made, r.Repo.Name)
		}
		b, err := l.git.Worktree(ctx, r.Repo, r.Dir, req.Branch, req.Fresh)
		if err == nil {
			err = l.git.GuardWorktree(ctx, r.Repo, r.Dir, req.Branch)
		}
		if err != nil {
			p.Err = fmt.Sprintf("cannot make the worktree of repo %s: %v", r.Repo.Name, err)
			return p, nil
		}
		p.Starts[r.Repo.Name] = b
	}
	return p, nil
}

// SetAside sets each of the lot's branches aside (Git.SetAside) and
// returns the backup refs made, by repository name.
func (l *Local) SetAside(ctx context.Context, lot Lot) (map[string]string, error) {
	gl, err := l.guardLot(lot)
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	for _, r := range gl.Repos {
		ref, err := l.git.SetAside(ctx, r.Repo, r.Dir, lot.Branch, lot.Wave, lot.ID)
		if err != nil {
			return refs, fmt.Errorf("repo %s: %w", r.Repo.Name, err)
		}
		if ref != "" {
			refs[r.Repo.Name] = ref
		}
	}
	return refs, nil
}

// RemoveWorktrees removes each of the lot's worktrees, all of them tried;
// it returns the errors joined.
func (l *Local) RemoveWorktrees(ctx context.Context, lot Lot) error {
	gl, err := l.guardLot(lot)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range gl.Repos {
		errs = append(errs, l.git.RemoveWorktree(ctx, r.Repo, r.Dir))
	}
	return errors.Join(errs...)
}

// Look reads each of the lot's worktrees (LookRequest).
func (l *Local) Look(ctx context.Context, req LookRequest) ([]Looked, error) {
	gl, err := l.guardLot(req.Lot)
	if err != nil {
		return nil, err
	}
	var out []Looked
	for _, r := range gl.Repos {
		lk := Looked{Repo: r.Repo.Name}
		out = append(out, lk)
		w := &out[len(out)-1]
		fail := func(err error) { w.Err = err.Error() }
		if req.Dirty {
			d, err := l.git.Dirty(ctx, r.Dir)
			if err != nil {
				fail(err)
				continue
			}
			w.Dirty = d
		}
		if req.Tree {
			t, err := l.git.Tree(ctx, r.Dir)
			if err != nil {
				fail(err)
				continue
			}
			w.Tree = t
		}
		from := req.From[r.Repo.Name]
		if !req.Commits && !req.Changed && from == "" && (req.Dirty || req.Tree) {
			continue
		}
		head, err := l.git.Head(ctx, r.Dir)
		if err != nil {
			fail(err)
			continue
		}
		w.Head = head
		if from == RepoBase {
			if from, err = l.git.Base(ctx, r.Repo); err != nil {
				fail(err)
				continue
			}
		}
		if from == "" || from == head {
			continue
		}
		if req.Commits {
			if w.Commits, err = l.git.Commits(ctx, r.Dir, from, head); err != nil {
				fail(err)
				continue
			}
		}
		if req.Changed {
			if w.Changed, err = l.git.Changed(ctx, r.Dir, from, head); err != nil {
				fail(err)
			}
		}
	}
	return out, nil
}
