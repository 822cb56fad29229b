package transport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/gitint"
)

// Transport makes, reads and checks bundles with git. Its zero value is
// not usable: make it with [New].
type Transport struct {
	// Repos runs git (gitint: bounded, no hooks, the environment it was
	// made with) and reads HEAD from the files when they say.
	Repos *gitint.Repos
	// BaseCache is a folder of the worker's where Checkout keeps the
	// objects of each base commit it was sent, indexed once
	// (baseobjects.go); "": every Checkout indexes its base bundle.
	BaseCache string
}

// New returns a Transport whose git starts from the environment environ
// ("KEY=value" entries, which internal/cli reads).
func New(environ []string) *Transport {
	return &Transport{Repos: gitint.NewRepos(environ)}
}

// git runs git in dir and returns its output without the trailing newline.
func (t *Transport) git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := t.Repos.Run(ctx, dir, args...)
	return strings.TrimSuffix(out, "\n"), err
}

// commit resolves rev to a commit of the repository at dir (its full
// object id).
func (t *Transport) commit(ctx context.Context, dir, rev string) (string, error) {
	return t.git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
}

// isAncestor says whether commit a is an ancestor of commit b (or b
// itself) in the repository at dir: `git merge-base --is-ancestor`, whose
// exit 1 is "no" and any other failure an error.
func (t *Transport) isAncestor(ctx context.Context, dir, a, b string) (bool, error) {
	_, err := t.git(ctx, dir, "merge-base", "--is-ancestor", a, b)
	var ge *gitint.Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && ge.ExitCode == 1:
		return false, nil
	default:
		return false, err
	}
}

// checkBranch says whether branch is a valid branch name
// (`git check-ref-format --branch`), so that refs/heads/<branch> is one
// ref and not an option or a pattern.
func (t *Transport) checkBranch(ctx context.Context, branch string) error {
	if branch == "" || strings.HasPrefix(branch, "-") {
		return fmt.Errorf("branch name %q", branch)
	}
	if _, err := t.git(ctx, "", "check-ref-format", "--branch", branch); err != nil {
		return fmt.Errorf("branch name %q: %w", branch, err)
	}
	return nil
}

// thinBundle writes to out a bundle of refs/heads/<branch> of the
// repository at dir without the history of from (`git bundle create OUT
// refs/heads/<branch> ^FROM`), or the empty bundle (emptyBundle) when the
// branch is at from. It returns the branch's head. out is written whole
// or not at all (a temporary file in its folder, then renamed); with max
// > 0 a bundle of more than max bytes is not written and the error is a
// *TooLarge.
func (t *Transport) thinBundle(ctx context.Context, dir, branch, from, out string, max int64) (string, error) {
	if err := t.checkBranch(ctx, branch); err != nil {
		return "", err
	}
	ref := "refs/heads/" + branch
	head, err := t.commit(ctx, dir, ref)
	if err != nil {
		return "", fmt.Errorf("branch %s in %s: %w", branch, dir, err)
	}
	base, err := t.commit(ctx, dir, from)
	if err != nil {
		return "", fmt.Errorf("commit %s in %s: %w", from, dir, err)
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".bundle-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	if head == base {
		format, err := t.git(ctx, dir, "rev-parse", "--show-object-format")
		if err != nil {
			return "", err
		}
		b, err := emptyBundle(format, ref, head)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(tmp.Name(), b, 0o644); err != nil {
			return "", err
		}
	} else if _, err := t.git(ctx, dir, "bundle", "create", "-q", tmp.Name(), ref, "^"+base); err != nil {
		return "", fmt.Errorf("bundle of %s above %.12s: %w", branch, base, err)
	}
	fi, err := os.Stat(tmp.Name())
	if err != nil {
		return "", err
	}
	if max > 0 && fi.Size() > max {
		return "", &TooLarge{Size: fi.Size(), Max: max}
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	return head, nil
}

// TooLarge is a bundle above its cap, in bytes.
type TooLarge struct {
	Size, Max int64
}

func (e *TooLarge) Error() string {
	return fmt.Sprintf("the bundle is %d bytes, above its cap of %d", e.Size, e.Max)
}
