package gitint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrForgedObjects means an object a lot's commits bring does not hash to
// its name: its file in the repository's objects folder holds other
// content (git trusts a loose object's name and never hashes it again on
// read, and a step may write that folder: docs/integration.md, Guards).
var ErrForgedObjects = errors.New("an object of the lot's commits does not hash to its name")

// verifyObjects checks the objects reachable from tip and not from base
// (the lot's change, what an integration brings into the base): `git
// pack-objects` packs them as they are stored, under the names the
// repository gives them, into a scratch folder, and `git verify-pack`
// computes each packed object's name from its content again. Any
// mismatch is ErrForgedObjects, with git's words. The scratch folder is
// in the repository's <common>/cadence (cadence's own, read-only in every
// step sandbox; on the repository's disk, whose space the lot's change
// already takes), the system's temporary folder when that cannot be
// found, and removed after; one a killed cadence left there is removed
// first (the caller holds the repository's integration lock, beside it in
// that folder, so no other check runs). Its cost is the lot's change, not
// the repository.
func (g Git) verifyObjects(ctx context.Context, repo, base, tip string) error {
	parent := ""
	if _, common, ok := gitDirs(repo); ok {
		if own := filepath.Join(common, "cadence"); os.MkdirAll(own, 0o755) == nil {
			parent = own
			left, _ := filepath.Glob(filepath.Join(own, "objects-check-*"))
			for _, l := range left {
				_ = os.RemoveAll(l)
			}
		}
	}
	dir, err := os.MkdirTemp(parent, "objects-check-")
	if err != nil {
		return fmt.Errorf("check the lot's objects: %w", err)
	}
	defer os.RemoveAll(dir)
	revs := tip + "\n"
	if base != "" {
		revs += "^" + base + "\n"
	}
	name, err := g.runStdin(ctx, repo, revs, "pack-objects", "--revs", "-q", filepath.Join(dir, "lot"))
	if err != nil {
		return fmt.Errorf("check the lot's objects: %w", err)
	}
	idx := filepath.Join(dir, "lot-"+strings.TrimSpace(name)+".idx")
	if _, err := g.Run(ctx, repo, "verify-pack", idx); err != nil {
		return fmt.Errorf("%w (git verify-pack of its objects: %v; `git -C %s fsck` names the object)", ErrForgedObjects, err, repo)
	}
	return nil
}
