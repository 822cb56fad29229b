package gitint

import (
	"context"
	"fmt"
	"strings"
)

// lotBranchRoot is the folder of every lot branch: refs/heads/cadence/
// (the planner names the branches in it).
const lotBranchRoot = "cadence"

// LotBranches lists the branches of the repository at repo named
// lotBranchRoot or under it (names without refs/heads/, git's order; nil
// for none), with one `git for-each-ref`: a pattern matches a ref whole or
// up to a '/' (git-for-each-ref(1)). The error is git's.
func (g Git) LotBranches(ctx context.Context, repo string) ([]string, error) {
	out, err := g.Run(ctx, repo, "for-each-ref", "--format=%(refname)", "refs/heads/"+lotBranchRoot)
	if err != nil {
		return nil, fmt.Errorf("list the branches %s/… of %s: %w", lotBranchRoot, repo, err)
	}
	var bs []string
	for _, ref := range strings.Fields(out) {
		bs = append(bs, strings.TrimPrefix(ref, "refs/heads/"))
	}
	return bs, nil
}
