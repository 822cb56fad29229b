package gitint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// hookScript is the pre-push hook cadence installs for a wave's duration:
// it refuses every push made while CADENCE_WAVE is set (agent sessions and
// command lots have it; the lead's own shell does not).
const hookScript = `#!/bin/sh
` + HookMarker + ` (removed when the wave ends; see cadence clean)
if [ -n "$CADENCE_WAVE" ]; then
  echo "cadence: no push during wave $CADENCE_WAVE (lot ${CADENCE_LOT:-?}): integration is local, pushing is the lead's call" >&2
  exit 1
fi
exit 0
`

// InstallGuard installs cadence's pre-push hook in a repository (where git
// looks for hooks, honouring core.hooksPath) and returns its removal. A
// pre-push hook of someone else's is never overwritten: that is an error
// (preflight refuses such a repository first). A leftover cadence hook (a
// wave that was killed) is simply taken over.
func InstallGuard(ctx context.Context, repo string) (func() error, error) {
	common, err := Run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return nil, err
	}
	hook, err := hookPath(ctx, repo, strings.TrimSpace(common))
	if err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(hook); err == nil && !strings.Contains(string(b), HookMarker) {
		return nil, fmt.Errorf("%s has a pre-push hook of its own (%s); cadence does not overwrite it", repo, hook)
	}
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		return nil, err
	}
	// Written aside and renamed into place: a cadence killed mid-write must
	// never leave a half hook (without the marker, it would pass for a
	// foreign one and refuse the repository from then on).
	tmp, err := os.CreateTemp(filepath.Dir(hook), ".cadence-pre-push-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(hookScript); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), hook); err != nil {
		return nil, err
	}
	return func() error { return RemoveGuard(hook) }, nil
}

// RemoveGuard removes a pre-push hook if, and only if, it is cadence's.
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
// it is a cadence hook left there.
func GuardHook(ctx context.Context, repo string) (string, bool, error) {
	common, err := Run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", false, err
	}
	hook, err := hookPath(ctx, repo, strings.TrimSpace(common))
	if err != nil {
		return "", false, err
	}
	b, err := os.ReadFile(hook)
	return hook, err == nil && strings.Contains(string(b), HookMarker), nil
}

// PushBlockEnv returns environment entries that give every remote of the
// repositories a push URL that cannot work, through git's GIT_CONFIG_COUNT
// mechanism (the user's configuration is never edited). Tool rules can be
// bypassed (`git -C . push`, `bash -c 'git push'`); these entries reach
// every git the session runs. base is the session's environment, whose own
// GIT_CONFIG_* entries are kept and continued.
func PushBlockEnv(ctx context.Context, repos []string, base []string) []string {
	n := 0
	for _, kv := range base {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	seen := map[string]bool{}
	var env []string
	for _, repo := range repos {
		out, err := Run(ctx, repo, "remote")
		if err != nil {
			continue
		}
		for _, r := range strings.Fields(out) {
			if seen[r] {
				continue
			}
			seen[r] = true
			env = append(env,
				fmt.Sprintf("GIT_CONFIG_KEY_%d=remote.%s.pushurl", n, r),
				fmt.Sprintf("GIT_CONFIG_VALUE_%d=cadence-no-push://blocked-during-wave/%s", n, r))
			n++
		}
	}
	if len(env) == 0 {
		return nil
	}
	return append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(n))
}

// RemoteState describes what the remotes of a repository hold, as far as
// cadence can see: its remote-tracking refs, and each remote's refs by
// `git ls-remote` (bounded to a few seconds; an unreachable remote is noted,
// not an error). Two equal states mean no push happened in between.
func RemoteState(ctx context.Context, repo string) string {
	var b strings.Builder
	refs, _ := Run(ctx, repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes")
	b.WriteString(refs)
	out, err := Run(ctx, repo, "remote")
	if err != nil {
		return b.String()
	}
	remotes := strings.Fields(out)
	sort.Strings(remotes)
	for _, r := range remotes {
		lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		ls, err := Run(lctx, repo, "ls-remote", "--quiet", r)
		cancel()
		if err != nil {
			fmt.Fprintf(&b, "remote %s: unreachable\n", r)
			continue
		}
		fmt.Fprintf(&b, "remote %s:\n%s", r, ls)
	}
	return b.String()
}
