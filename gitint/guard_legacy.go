package gitint

import (
	"context"
	"errors"
	"os"
	"strings"
)

// Versions of cadence before the guard folder installed a pre-push hook
// (marked HookMarker) in the repository's own hooks folder. A killed one
// may have left it: InstallGuard takes it over (removes it), and clean
// lists it as a "hook" leftover.

// RemoveGuard removes a pre-push hook if, and only if, it is cadence's
// (a legacy one, HookMarker).
func RemoveGuard(hook string) error {
	b, err := os.ReadFile(hook)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), HookMarker) {
		return nil
	}
	return os.Remove(hook)
}

// GuardHook returns where the pre-push hook of a repository is, and whether
// it is a legacy cadence hook left there.
func (g Git) GuardHook(ctx context.Context, repo string) (string, bool, error) {
	common, err := g.Run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", false, err
	}
	hook, err := g.hookPath(ctx, repo, strings.TrimSpace(common))
	if err != nil {
		return "", false, err
	}
	b, err := os.ReadFile(hook)
	return hook, err == nil && strings.Contains(string(b), HookMarker), nil
}
