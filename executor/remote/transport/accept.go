package transport

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/gitint"
)

// IncomingRefPrefix is the quarantine of Accept in the lead's repository:
// a result is fetched into refs/cadence/incoming/<branch>, checked there,
// and the ref deleted once the lot's branch is at it or the result is
// refused.
const IncomingRefPrefix = "refs/cadence/incoming/"

// Reason says why Accept refused a result bundle.
type Reason string

// The reasons of a Refused.
const (
	// ReasonOversize: the file is above the cap.
	ReasonOversize Reason = "oversize"
	// ReasonCorrupt: not a regular file, or not a bundle git reads
	// (header, pack or objects).
	ReasonCorrupt Reason = "corrupt"
	// ReasonRefs: it names a ref other than the lot's branch, or more
	// than one.
	ReasonRefs Reason = "refs"
	// ReasonPrerequisites: it needs commits the lead does not have, or
	// that are not in the history of the commit sent.
	ReasonPrerequisites Reason = "prerequisites"
	// ReasonNotDescendant: its head does not descend from the commit sent
	// (rewritten or force-pushed history).
	ReasonNotDescendant Reason = "not-descendant"
	// ReasonBranchMoved: the lot's branch on the lead is no longer at the
	// commit sent.
	ReasonBranchMoved Reason = "branch-moved"
	// ReasonWorktree: the lot's worktree on the lead is not clean on its
	// branch at the commit sent, or holds files the result would
	// overwrite.
	ReasonWorktree Reason = "worktree"
)

// Refused is a result bundle Accept did not apply: nothing of it is in
// the lot's branch or worktree, and the lead's refs are as they were. The
// bundle file stays where it was given (the caller keeps it under the
// lot's log folder) for the lead to look at; the caller records an
// incident.
type Refused struct {
	Reason Reason
	// Detail says what was found, in git's terms.
	Detail string
	// Bundle is the refused bundle's path (kept, never applied).
	Bundle string
}

func (r *Refused) Error() string {
	return fmt.Sprintf("result bundle refused (%s): %s; kept at %s", r.Reason, r.Detail, r.Bundle)
}

// Accept applies the result bundle at bundle (a file the caller received
// and keeps under the lot's log folder; Accept never moves or removes it)
// to the lot's branch of the lead's repository at repoDir and its
// worktree at worktree ("" when the branch is checked out nowhere: a
// branch checked out in a worktree Accept is not given is refused), and
// returns the branch's new head. sentHead is the lot's head that was sent
// (Checkout's head); max caps the bundle in bytes.
//
// Before anything is fetched: the file is a regular file of at most max
// bytes; its header and `git bundle list-heads` name exactly one ref,
// refs/heads/<branch>; its prerequisites are commits of the lead's
// repository (`git bundle verify`) in the history of sentHead; the branch
// is at sentHead and the worktree clean on it (untracked files count);
// its objects pass git's checks (strictObjects, in a scratch repository
// beside the bundle). It is then fetched into the quarantine ref
// refs/cadence/incoming/<branch>; its head must descend from sentHead; the
// branch is fast-forwarded to it (`git merge --ff-only` in the worktree,
// which brings its files along, or `update-ref` with sentHead as the
// expected old value), never forced. A result the worktree's untracked or
// ignored files stand in the way of is refused too, so nothing is
// overwritten.
//
// A result already accepted (the branch at its head, the worktree clean
// on it) is accepted again: its head is returned, nothing changes. Any of
// these checks failing is a *Refused; errors of git itself (the lead's
// repository unreadable) are wrapped git errors.
func (t *Transport) Accept(ctx context.Context, repoDir, worktree, bundle, branch, sentHead string, max int64) (string, error) {
	if err := t.checkBranch(ctx, branch); err != nil {
		return "", err
	}
	if !isOID(sentHead) {
		return "", fmt.Errorf("sent head %q: not a full object id", sentHead)
	}
	path, err := filepath.Abs(bundle)
	if err != nil {
		return "", err
	}
	head, err := t.accept(ctx, repoDir, worktree, path, "refs/heads/"+branch, sentHead, max)
	if r, ok := err.(*Refused); ok {
		r.Bundle = bundle
	}
	return head, err
}

// accept is Accept of the bundle at path (absolute) to ref.
func (t *Transport) accept(ctx context.Context, repoDir, worktree, path, ref, sentHead string, max int64) (string, error) {
	h, err := t.verifyBundle(ctx, repoDir, path, ref, sentHead, max)
	if err != nil {
		return "", err
	}
	head := h.Refs[0].OID
	if head != sentHead && t.accepted(ctx, repoDir, worktree, ref, head) {
		return head, nil
	}
	if err := t.leadReady(ctx, repoDir, worktree, ref, sentHead); err != nil {
		return "", err
	}
	if head == sentHead {
		return sentHead, nil // nothing was committed remotely
	}
	if err := t.strictObjects(ctx, repoDir, path, h.Size); err != nil {
		return "", refusal(ReasonCorrupt, "%v", err)
	}
	incoming := IncomingRefPrefix + strings.TrimPrefix(ref, "refs/heads/")
	defer t.dropIncoming(ctx, repoDir, incoming)
	if err := t.unpack(ctx, repoDir, path, h.Size, incoming, head); err != nil {
		return "", refusal(ReasonCorrupt, "%v", err)
	}
	if got, err := t.commit(ctx, repoDir, incoming); err != nil || got != head {
		return "", refusal(ReasonCorrupt, "fetched %.12s, its header names %.12s", got, head)
	}
	if ok, err := t.isAncestor(ctx, repoDir, sentHead, head); err != nil {
		return "", err
	} else if !ok {
		return "", refusal(ReasonNotDescendant, "%.12s does not descend from %.12s, the commit sent", head, sentHead)
	}
	if worktree == "" {
		if _, err := t.git(ctx, repoDir, "update-ref", "--no-deref", "-m", "cadence: remote result", ref, head, sentHead); err != nil {
			return "", fmt.Errorf("fast-forward %s: %w", ref, err)
		}
		return head, nil
	}
	if why, err := t.inTheWay(ctx, worktree, sentHead, head); err != nil {
		return "", err
	} else if why != "" {
		return "", refusal(ReasonWorktree, "%s", why)
	}
	// Once begun, the fast-forward of the worktree runs to its end (git
	// does not update a checkout atomically), as gitint.Repos.Advance's.
	if _, err := t.git(context.WithoutCancel(ctx), worktree, "merge", "--ff-only", "--quiet", head); err != nil {
		return "", fmt.Errorf("fast-forward %s in %s: %w", ref, worktree, err)
	}
	return head, nil
}

// verifyBundle reads and checks the bundle at path before anything of it
// is fetched (Accept's first checks) and returns its header: a *Refused
// when it fails one.
func (t *Transport) verifyBundle(ctx context.Context, repoDir, path, ref, sentHead string, max int64) (header, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return header{}, fmt.Errorf("result bundle: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return header{}, refusal(ReasonCorrupt, "not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > max {
		return header{}, refusal(ReasonOversize, "%d bytes, above the cap of %d", fi.Size(), max)
	}
	h, err := readHeader(path)
	if err != nil {
		return h, refusal(ReasonCorrupt, "%v", err)
	}
	if names := refNames(h.Refs); len(names) != 1 || names[0] != ref {
		return h, refusal(ReasonRefs, "it names %s; only %s is accepted", strings.Join(names, ", "), ref)
	}
	out, err := t.git(ctx, repoDir, "bundle", "list-heads", path)
	if err != nil {
		return h, refusal(ReasonCorrupt, "git bundle list-heads: %v", err)
	}
	if listed, err := parseListHeads(out); err != nil || !slices.Equal(listed, h.Refs) {
		return h, refusal(ReasonCorrupt, "git bundle list-heads says %q, its header %v", out, h.Refs)
	}
	if len(h.Prerequisites) > maxPrerequisites {
		return h, refusal(ReasonPrerequisites, "%d prerequisites, above %d", len(h.Prerequisites), maxPrerequisites)
	}
	for _, p := range h.Prerequisites {
		if _, err := t.commit(ctx, repoDir, p); err != nil {
			return h, refusal(ReasonPrerequisites, "it needs %s, which is no commit of %s", p, repoDir)
		}
	}
	// Verified where only the prerequisites are refs (borrowing): they
	// are commits of the lead's (checked above), so their history is
	// complete there.
	scratch, done, err := t.borrowing(ctx, repoDir, filepath.Dir(path))
	if err != nil {
		return h, err
	}
	defer done()
	for i, p := range h.Prerequisites {
		if _, err := t.git(ctx, scratch, "update-ref", fmt.Sprintf("refs/prerequisites/%d", i), p); err != nil {
			return h, err
		}
	}
	if _, err := t.git(ctx, scratch, "bundle", "verify", "-q", path); err != nil {
		return h, refusal(ReasonCorrupt, "git bundle verify: %v", err)
	}
	for _, p := range h.Prerequisites {
		if ok, err := t.isAncestor(ctx, repoDir, p, sentHead); err != nil {
			return h, err
		} else if !ok {
			return h, refusal(ReasonPrerequisites, "it needs %s, which is not in the history of %.12s", p, sentHead)
		}
	}
	return h, nil
}

// leadReady checks that ref of the repository at repoDir is at sentHead
// and that the worktree at worktree has it checked out, clean (worktree
// "": that no worktree has it checked out): a *Refused when not.
func (t *Transport) leadReady(ctx context.Context, repoDir, worktree, ref, sentHead string) error {
	at, err := t.commit(ctx, repoDir, ref)
	if err != nil {
		return fmt.Errorf("%s of %s: %w", ref, repoDir, err)
	}
	if at != sentHead {
		return refusal(ReasonBranchMoved, "%s is at %.12s on the lead, not at %.12s, the commit sent", ref, at, sentHead)
	}
	if worktree != "" {
		why, err := t.worktreeReady(ctx, worktree, ref, sentHead)
		if err != nil {
			return err
		}
		if why != "" {
			return refusal(ReasonWorktree, "%s", why)
		}
		return nil
	}
	wt, err := t.checkedOutIn(ctx, repoDir, ref)
	if err != nil {
		return err
	}
	if wt != "" {
		return refusal(ReasonWorktree, "%s is checked out in %s, which Accept was not given", ref, wt)
	}
	return nil
}

// accepted says whether this result was accepted already: ref is at
// head, and the worktree (if any) has it checked out at head, clean. A
// second Accept of one result (its caller stopped before recording the
// first) then returns head again instead of a refusal.
func (t *Transport) accepted(ctx context.Context, repoDir, worktree, ref, head string) bool {
	if at, err := t.commit(ctx, repoDir, ref); err != nil || at != head {
		return false
	}
	if worktree == "" {
		return true
	}
	why, err := t.worktreeReady(ctx, worktree, ref, head)
	return err == nil && why == ""
}

// refusal is a *Refused whose Bundle Accept fills in.
func refusal(r Reason, format string, args ...any) error {
	return &Refused{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// strictObjects checks the objects of the pack of the bundle at path
// (from byte offset packAt) as the lead's repository would receive them
// from a push with fsckObjects (`git index-pack --strict --fix-thin`:
// every object well formed, no tree entry such as ".git"), in a scratch
// repository beside the bundle that borrows the lead's objects
// (objects/info/alternates) and is removed after: the lead's repository
// gets nothing of a pack that fails. git fetch checks the objects of a
// bundle itself only from git 2.46 (fetch.fsckObjects), which is why the
// check is made here too.
func (t *Transport) strictObjects(ctx context.Context, repoDir, path string, packAt int64) error {
	scratch, done, err := t.borrowing(ctx, repoDir, filepath.Dir(path))
	if err != nil {
		return err
	}
	defer done()
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(packAt, io.SeekStart); err != nil {
		return err
	}
	if _, err := t.Repos.RunInput(ctx, scratch, f, "index-pack", "--strict", "--fix-thin", "--stdin"); err != nil {
		return fmt.Errorf("its objects fail git's checks: %w", err)
	}
	return nil
}

// unpack puts the objects of the pack of the bundle at path (from byte
// offset packAt; strictObjects passed them) into the repository at
// repoDir with `git index-pack --stdin --fix-thin`, and points ref at
// head. Neither walks the repository's refs: a fetch from the bundle
// would (its connectivity check, over every worktree's HEAD), and fail
// while another lot's worktree is being made.
func (t *Transport) unpack(ctx context.Context, repoDir, path string, packAt int64, ref, head string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(packAt, io.SeekStart); err != nil {
		return err
	}
	if _, err := t.Repos.RunInput(ctx, repoDir, f, "index-pack", "--stdin", "--fix-thin"); err != nil {
		return fmt.Errorf("git index-pack: %w", err)
	}
	if _, err := t.git(ctx, repoDir, "update-ref", ref, head); err != nil {
		return fmt.Errorf("git update-ref: %w", err)
	}
	return nil
}

// borrowing makes an empty bare repository in a new folder under near
// that borrows the objects of the repository at repoDir
// (objects/info/alternates) and has no ref: git's checks of a bundle run
// there see the lead's objects but none of its refs, worktree HEADs
// among them (another lot's worktree being made has a HEAD that names
// no object yet, which fails a check run in the lead's repository). done
// removes it.
func (t *Transport) borrowing(ctx context.Context, repoDir, near string) (scratch string, done func(), err error) {
	common, err := t.git(ctx, repoDir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp(near, ".accept-*")
	if err != nil {
		return "", nil, err
	}
	done = func() { os.RemoveAll(tmp) }
	scratch = filepath.Join(tmp, "check.git")
	if _, err := t.git(ctx, tmp, "init", "-q", "--bare", "--template=", scratch); err != nil {
		done()
		return "", nil, err
	}
	alt := filepath.Join(scratch, "objects", "info", "alternates")
	if err := os.MkdirAll(filepath.Dir(alt), 0o755); err == nil {
		err = os.WriteFile(alt, []byte(filepath.Join(common, "objects")+"\n"), 0o644)
	}
	if err != nil {
		done()
		return "", nil, err
	}
	return scratch, done, nil
}

// worktreeReady says why the worktree at dir cannot take a fast-forward
// of ref from sentHead ("" when it can): it must have ref checked out at
// sentHead, with no change and no untracked file.
func (t *Transport) worktreeReady(ctx context.Context, dir, ref, sentHead string) (string, error) {
	st, err := t.git(ctx, dir, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--ignore-submodules=none")
	if err != nil {
		return "", fmt.Errorf("status of %s: %w", dir, err)
	}
	c := gitint.ParseStatusV2(st)
	switch {
	case c.Head != ref:
		return fmt.Sprintf("%s has %s checked out, not %s", dir, orDetached(c.Head), ref), nil
	case c.OID != sentHead:
		return fmt.Sprintf("%s is at %.12s, not at %.12s, the commit sent", dir, c.OID, sentHead), nil
	case len(c.Paths()) > 0:
		return fmt.Sprintf("%s has uncommitted changes or untracked files, left as they are: %s", dir, strings.Join(firstN(c.Paths(), 20), ", ")), nil
	}
	return "", nil
}

// checkedOutIn returns the worktree of the repository at repoDir that
// has ref checked out (`git worktree list --porcelain`), "" when none.
func (t *Transport) checkedOutIn(ctx context.Context, repoDir, ref string) (string, error) {
	out, err := t.git(ctx, repoDir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return "", err
	}
	var path string
	for _, f := range strings.Split(out, "\x00") {
		if p, ok := strings.CutPrefix(f, "worktree "); ok {
			path = p
		} else if f == "branch "+ref {
			return path, nil
		}
	}
	return "", nil
}

// inTheWay says which files of the worktree at dir (untracked or ignored:
// the caller checked that nothing else changed) the fast-forward from to
// to would overwrite, "" when none.
func (t *Transport) inTheWay(ctx context.Context, dir, from, to string) (string, error) {
	out, err := t.git(ctx, dir, "diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", "--no-ext-diff", from, to, "--")
	if err != nil {
		return "", err
	}
	var hit []string
	for _, p := range strings.Split(out, "\x00") {
		if p == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			hit = append(hit, p)
		}
	}
	if len(hit) == 0 {
		return "", nil
	}
	return fmt.Sprintf("%s holds files the result adds, left as they are: %s", dir, strings.Join(firstN(hit, 20), ", ")), nil
}

// dropIncoming deletes the quarantine ref; an error is ignored (the ref
// holds only the result's commits, which the kept bundle holds too).
func (t *Transport) dropIncoming(ctx context.Context, repoDir, ref string) {
	_, _ = t.git(context.WithoutCancel(ctx), repoDir, "update-ref", "-d", ref)
}

// refNames are the names of refs, in their order.
func refNames(refs []Ref) []string {
	var names []string
	for _, r := range refs {
		names = append(names, r.Name)
	}
	return names
}

func orDetached(head string) string {
	if head == "" {
		return "a detached HEAD"
	}
	return head
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}
