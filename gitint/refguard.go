package gitint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// RescuePrefix is where cadence keeps what a foreign ref update pointed a
// guarded ref at before it put the ref back:
// refs/cadence/rescue/<wave>/<lot>/<n>, n = 1, 2, … per lot. cadence never
// deletes them (`git update-ref -d` removes one).
const RescuePrefix = "refs/cadence/rescue/"

// GuardedRefs are the namespaces whose refs no step may move (docs/decisions.md,
// "Guarded refs"): branches and tags.
var GuardedRefs = []string{"refs/heads", "refs/tags"}

// CadenceRefs is the namespace of cadence's own refs (backup and rescue
// refs, BackupPrefix and RescuePrefix): cadence creates them and never
// moves or deletes one while a wave runs, so a step's guard reports a ref
// of it that moved or went, not one created (docs/integration.md, Guards).
const CadenceRefs = "refs/cadence/"

// watchedRefs are the namespaces a step's guard snapshots: the guarded
// refs and cadence's own.
var watchedRefs = append(append([]string(nil), GuardedRefs...), strings.TrimSuffix(CadenceRefs, "/"))

// Refs is a snapshot of a repository's guarded refs: ref name → the object
// it points at (40 hex digits; for an annotated tag, the tag object), or,
// for a symbolic ref, SymbolicPrefix and the ref it names: a branch turned
// into a pointer to another (a step writing "ref: refs/heads/main" into a
// lot's ref file) is a change of its own, never the other ref's value, so
// that neither the guard's check nor a write of cadence's ever follows it.
type Refs map[string]string

// SymbolicPrefix starts the value (Refs) of a symbolic ref: "ref: " and the
// ref it names, as git writes it in the ref's file.
const SymbolicPrefix = "ref: "

// RefMove is a guarded ref that changed between two snapshots. Old is the
// value before ("" when the ref was created), New the value after ("" when
// it was deleted).
type RefMove struct {
	Ref, Old, New string
}

// String says what happened to the ref: "refs/heads/main moved from a to b",
// "… was created at b", "… was deleted (was a)", shas shortened to 12.
func (m RefMove) String() string {
	switch {
	case m.Old == "":
		return fmt.Sprintf("%s was created at %s", m.Ref, short12(m.New))
	case m.New == "":
		return fmt.Sprintf("%s was deleted (it was at %s)", m.Ref, short12(m.Old))
	}
	return fmt.Sprintf("%s moved from %s to %s", m.Ref, short12(m.Old), short12(m.New))
}

// short12 is sha's first 12 hex digits; a symbolic ref's value
// (SymbolicPrefix) whole.
func short12(sha string) string {
	if strings.HasPrefix(sha, SymbolicPrefix) {
		return "\"" + sha + "\""
	}
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// SnapshotRefs reads the guarded refs of the repository at repo (refs/heads
// and refs/tags) and cadence's own (CadenceRefs), leaving out the refs under skip (a prefix such as
// "refs/heads/cadence/<wave>/": the wave's own lot branches; "" skips
// nothing): from the ref files (snapshotFiles, no git process) or, when
// they cannot be read with certainty, with one `git for-each-ref`. The
// error is git's.
func (g Git) SnapshotRefs(ctx context.Context, repo, skip string) (Refs, error) {
	if refs, err := snapshotFiles(repo, watchedRefs); err == nil {
		for ref := range refs {
			if skip != "" && strings.HasPrefix(ref, skip) {
				delete(refs, ref)
			}
		}
		return refs, nil
	}
	args := append([]string{"for-each-ref", "--format=%(objectname) %(refname) %(symref)"}, watchedRefs...)
	out, err := g.Run(ctx, repo, args...)
	if err != nil {
		return nil, err
	}
	return parseRefs(out, skip), nil
}

// parseRefs reads "<sha> <ref> [<target>]" lines (a symbolic ref names
// its target: SymbolicPrefix), leaving out refs under skip.
func parseRefs(out, skip string) Refs {
	refs := Refs{}
	for _, line := range strings.Split(out, "\n") {
		sha, rest, ok := strings.Cut(line, " ")
		ref, target, _ := strings.Cut(rest, " ")
		if !ok || (skip != "" && strings.HasPrefix(ref, skip)) {
			continue
		}
		if target != "" {
			sha = SymbolicPrefix + target
		}
		refs[ref] = sha
	}
	return refs
}

// Diff lists the refs that differ from before to after (created, moved,
// deleted), sorted by ref name.
func (before Refs) Diff(after Refs) []RefMove {
	var moves []RefMove
	for ref, old := range before {
		if now := after[ref]; now != old {
			moves = append(moves, RefMove{Ref: ref, Old: old, New: now})
		}
	}
	for ref, now := range after {
		if _, ok := before[ref]; !ok {
			moves = append(moves, RefMove{Ref: ref, New: now})
		}
	}
	sort.Slice(moves, func(i, j int) bool { return moves[i].Ref < moves[j].Ref })
	return moves
}

// PutBack is what RestoreRefs did with one foreign move.
type PutBack struct {
	RefMove
	// Rescue is the ref that keeps the foreign value (m.New), "" for a
	// deleted ref (nothing foreign to keep) or when it could not be made.
	Rescue string
	// Err says why the ref was not put back (the compare-and-swap found it
	// moved again, or git failed); nil when it is back at Old.
	Err error
}

// String says what happened, for an incident: the move, where its value is
// kept, and whether the ref is back.
func (p PutBack) String() string {
	s := p.RefMove.String()
	if p.Rescue != "" {
		s += " (kept under " + p.Rescue + ")"
	}
	switch {
	case p.Err != nil:
		return s + "; NOT put back: " + p.Err.Error()
	case p.Old == "":
		return s + "; deleted again"
	}
	return s + "; put back to " + short12(p.Old)
}

// RestoreRefs puts foreign moves of guarded refs back, each on its own:
// first the foreign value (m.New) is kept under the lot's next rescue ref
// (RescuePrefix<wave>/<lot>/<n>, created, never overwritten), then the ref
// is put back with a compare-and-swap: `update-ref <ref> <old> <new>` for a
// moved ref, `update-ref -d <ref> <new>` for a created one, `update-ref
// <ref> <old> ""` for a deleted one, all with --no-deref. A ref that moved
// again since (the swap finds another value) is left as it is and said so
// in its Err: cadence never forces a ref. A ref made symbolic (its New a
// SymbolicPrefix value) is put back without a swap (there is no object to
// compare), one that was symbolic before with `git symbolic-ref`. Call it
// with the repository's write lock held.
func (g Git) RestoreRefs(ctx context.Context, repo, wave, lot string, moves []RefMove) []PutBack {
	next := g.nextRescue(ctx, repo, wave, lot)
	out := make([]PutBack, 0, len(moves))
	for _, m := range moves {
		p := PutBack{RefMove: m}
		// A symbolic value names a ref: nothing of it to keep.
		if m.New != "" && !strings.HasPrefix(m.New, SymbolicPrefix) {
			ref, err := g.keepRescue(ctx, repo, wave, lot, next, m.New, m.Ref+" moved")
			next++
			if err != nil {
				p.Err = fmt.Errorf("%w, so it is left as it is", err)
				out = append(out, p)
				continue
			}
			p.Rescue = ref
		}
		msg := "cadence: put back " + m.Ref + " moved during lot " + lot
		// --no-deref: the ref itself is written, never one it names
		// (a symbolic ref: SymbolicPrefix), whose value a compare-and-swap
		// would also read; a symbolic value is swapped without a check.
		var err error
		newVal := m.New
		if strings.HasPrefix(newVal, SymbolicPrefix) {
			newVal = ""
		}
		switch {
		case m.Old == "" && newVal == "":
			_, err = g.Run(ctx, repo, "update-ref", "--no-deref", "-m", msg, "-d", m.Ref)
		case m.Old == "":
			_, err = g.Run(ctx, repo, "update-ref", "--no-deref", "-m", msg, "-d", m.Ref, newVal)
		case strings.HasPrefix(m.Old, SymbolicPrefix):
			_, err = g.Run(ctx, repo, "symbolic-ref", "-m", msg, m.Ref, strings.TrimPrefix(m.Old, SymbolicPrefix))
		case m.New == "":
			_, err = g.Run(ctx, repo, "update-ref", "--no-deref", "-m", msg, m.Ref, m.Old, "")
		case newVal == "":
			_, err = g.Run(ctx, repo, "update-ref", "--no-deref", "-m", msg, m.Ref, m.Old)
		default:
			_, err = g.Run(ctx, repo, "update-ref", "--no-deref", "-m", msg, m.Ref, m.Old, newVal)
		}
		if err != nil {
			p.Err = g.casError(ctx, repo, m, err)
		}
		out = append(out, p)
	}
	return out
}

// keepRescue stores sha under the lot's rescue ref number n (created, never
// overwritten) and returns the ref.
func (g Git) keepRescue(ctx context.Context, repo, wave, lot string, n int, sha, what string) (string, error) {
	ref := fmt.Sprintf("%s%s/%s/%d", RescuePrefix, wave, lot, n)
	if _, err := g.Run(ctx, repo, "update-ref", "-m", "cadence: rescue ("+what+" during lot "+lot+")", ref, sha, ""); err != nil {
		return "", fmt.Errorf("cannot keep %s under %s: %w", short12(sha), ref, err)
	}
	return ref, nil
}

// casError explains a failed put-back: the ref moved again (its value now),
// or git's error.
func (g Git) casError(ctx context.Context, repo string, m RefMove, err error) error {
	now, rerr := g.refValue(ctx, repo, m.Ref)
	switch {
	case rerr != nil && m.New != "":
		return errors.New("it was deleted again meanwhile")
	case rerr == nil && now != m.New:
		return fmt.Errorf("it moved again meanwhile (now at %s)", short12(now))
	}
	return err
}

// refValue is the object name ref points at in the repository at repo (its
// files, or `git rev-parse --verify --quiet`); an error when there is no
// such ref.
func (g Git) refValue(ctx context.Context, repo, ref string) (string, error) {
	if _, common, ok := gitDirs(repo); ok {
		if sha, err := resolveRef(common, ref); err == nil {
			if sha == "" {
				return "", fmt.Errorf("no ref %s", ref)
			}
			return sha, nil
		}
	}
	out, err := g.Run(ctx, repo, "rev-parse", "--verify", "--quiet", ref)
	return strings.TrimSpace(out), err
}

// nextRescue is the lot's next free rescue number (1 when it has none).
func (g Git) nextRescue(ctx context.Context, repo, wave, lot string) int {
	refs, _ := g.lotRefs(ctx, repo, RescuePrefix, wave, lot)
	return nextNumber(refs)
}

// RescueRefs lists the rescue refs of a lot (lot "": of every lot of the
// wave), sorted by name.
func (g Git) RescueRefs(ctx context.Context, repo, wave, lot string) ([]string, error) {
	return g.lotRefs(ctx, repo, RescuePrefix, wave, lot)
}

// WorktreeHead says what the linked worktree at dir has checked out, read
// from its HEAD file (no git process): the ref ("refs/heads/x") or, when
// HEAD is detached, its commit. A detached HEAD in the middle of a rebase
// (rebase-merge or rebase-apply) is reported as the branch being rebased,
// which is where git puts HEAD back when the rebase ends. The error says
// dir is not a linked worktree or its files cannot be read.
func WorktreeHead(dir string) (string, error) {
	gitDir, _, ok := linkedGitDir(dir)
	if !ok {
		return "", fmt.Errorf("%s is not a linked worktree (no .git file naming a worktrees/ folder)", dir)
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", err
	}
	head := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(head, "ref: "); ok {
		return strings.TrimSpace(ref), nil
	}
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if b, err := os.ReadFile(filepath.Join(gitDir, d, "head-name")); err == nil {
			if name := strings.TrimSpace(string(b)); strings.HasPrefix(name, "refs/") {
				return name, nil
			}
		}
	}
	return head, nil
}

// PutOnBranch puts the linked worktree at dir of the repository at repo
// back on branch (a short name such as "cadence/w/a") after something moved
// its HEAD elsewhere. A detached HEAD's commit is first kept under the
// lot's next rescue ref (RescuePrefix<wave>/<lot>/<n>), so that commits
// made there stay reachable. A clean worktree is then checked out (`git
// checkout`: files and index follow the branch); one with uncommitted
// changes only gets its HEAD pointed back (`git symbolic-ref`): its files
// and index are left as they are and show as changes against the branch.
// It says what it did.
func (g Git) PutOnBranch(ctx context.Context, repo, dir, branch, wave, lot string) (string, error) {
	var did []string
	if head, err := WorktreeHead(dir); err == nil && !strings.HasPrefix(head, "refs/") && head != "" {
		ref, err := g.keepRescue(ctx, repo, wave, lot, g.nextRescue(ctx, repo, wave, lot), head, "detached HEAD of "+dir)
		if err != nil {
			return "", err
		}
		did = append(did, "its detached HEAD "+short12(head)+" kept under "+ref)
	}
	dirty, err := g.dirtyFiles(ctx, dir)
	if err == nil && len(dirty) == 0 {
		if _, err := g.Run(ctx, dir, "checkout", "-q", branch, "--"); err == nil {
			return strings.Join(append(did, "checked out "+branch+" again"), "; "), nil
		}
	}
	if _, err := g.Run(ctx, dir, "symbolic-ref", "-m", "cadence: back on the lot's branch", "HEAD", "refs/heads/"+branch); err != nil {
		return strings.Join(did, "; "), err
	}
	return strings.Join(append(did, "HEAD pointed back at "+branch+" with git symbolic-ref (the uncommitted files are left as they were and now show as changes against "+branch+")"), "; "), nil
}

// Refs implements the executor's view: the guarded refs of a repository
// (SnapshotRefs).
func (g *Repos) Refs(ctx context.Context, repo *spec.Repo, skip string) (Refs, error) {
	return g.SnapshotRefs(ctx, repo.Path, skip)
}

// RestoreRefs implements the executor's view (RestoreRefs), under the
// repository's write lock.
func (g *Repos) RestoreRefs(ctx context.Context, repo *spec.Repo, wave, lot string, moves []RefMove) []PutBack {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	return g.Git.RestoreRefs(ctx, repo.Path, wave, lot, moves)
}

// WorktreeHead implements the executor's view (WorktreeHead).
func (g *Repos) WorktreeHead(dir string) (string, error) { return WorktreeHead(dir) }

// PutOnBranch implements the executor's view (PutOnBranch), under the
// repository's write lock.
func (g *Repos) PutOnBranch(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot string) (string, error) {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	return g.Git.PutOnBranch(ctx, repo.Path, dir, branch, wave, lot)
}
