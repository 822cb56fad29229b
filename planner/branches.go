package planner

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// Lot branches. A lot with a repository works on one branch, of one name
// in each of its repositories: <namespace>/<lot>. The lots of a wave share
// one namespace (git's folder of refs refs/heads/<namespace>/):
//
//   - the namespace the wave's state records (the folder of a lot's
//     recorded branch, state.Lot.Branch): a wave keeps its branches
//     whatever the repositories hold since;
//   - else cadence/<wave> (Namespace), unless another wave of that name
//     over one of the wave's repositories has branches in it (its state
//     file is elsewhere: this state records none);
//   - else cadence/<wave>-<key> (KeyedNamespace), key being the wave's
//     state key (layout.Wave.StateKey, which also names the folder of its
//     worktrees).
//
// When both are taken the plan refuses (branchDiags). So one wave of a
// name over a repository keeps the branches cadence/<wave>/<lot>, and a
// second one, in another folder, gets its own.

// branchRoot is the folder of every lot branch: refs/heads/cadence/.
const branchRoot = "cadence"

// Namespace is the plain namespace of the wave named wave: cadence/<wave>.
func Namespace(wave string) string { return branchRoot + "/" + wave }

// KeyedNamespace is the namespace of the wave named wave whose state key is
// key (layout.Wave.StateKey), for when its plain one is another wave's:
// cadence/<wave>-<key>.
func KeyedNamespace(wave, key string) string { return Namespace(wave) + "-" + key }

// LotBranch is the branch of the lot named lot in the namespace ns:
// <ns>/<lot>.
func LotBranch(ns, lot string) string { return ns + "/" + lot }

// RecordedNamespace is the namespace of the lot branches st records: the
// folder of the recorded branch of the first lot by id that has one; ""
// when st is nil or records none.
func RecordedNamespace(st *state.State) string {
	if st == nil {
		return ""
	}
	ids := make([]string, 0, len(st.Lots))
	for id, l := range st.Lots {
		if l != nil && l.Branch != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	sort.Strings(ids)
	return path.Dir(st.Lots[ids[0]].Branch)
}

// lotBranches decides the namespace and the branch of every selected lot
// with a repository (b.branch), from the state and, when known, the
// branches found in the repositories (found, per repository inspected:
// RepoFacts.Branches; nil offline), and reports what makes a pending lot's
// branch impossible (branchDiags).
func (b *builder) lotBranches(found map[*spec.Repo][]string) {
	ns := RecordedNamespace(b.st)
	var taken []string // the namespaces found taken, for the refusal
	if ns == "" {
		wave := b.cfg.Wave.Name
		key := layout.New(b.cfg.File, wave, "").StateKey()
		for _, cand := range []string{Namespace(wave), KeyedNamespace(wave, key)} {
			if !nsTaken(found, cand) {
				ns = cand
				break
			}
			taken = append(taken, cand)
		}
		if ns == "" { // refused below: the plain names, for the plan
			ns = Namespace(wave)
		}
	}
	b.branch = map[*spec.Lot]string{}
	for _, l := range b.selected {
		if l.Repo == nil {
			continue
		}
		br := ""
		if rec := b.st.Lots[l.ID]; rec != nil {
			br = rec.Branch
		}
		if br == "" {
			br = LotBranch(ns, l.ID)
		}
		b.branch[l] = br
	}
	if len(taken) == 2 {
		b.refuseNamespaces(found, taken)
		return
	}
	b.branchDiags(found)
}

// nsTaken reports whether a repository has a branch in the namespace ns.
func nsTaken(found map[*spec.Repo][]string, ns string) bool {
	for _, bs := range found {
		for _, br := range bs {
			if strings.HasPrefix(br, ns+"/") {
				return true
			}
		}
	}
	return false
}

// refuseNamespaces reports, per repository of a pending lot, the
// branches that take both namespaces the wave could use.
func (b *builder) refuseNamespaces(found map[*spec.Repo][]string, taken []string) {
	for _, r := range b.branchRepos() {
		var in []string
		for _, br := range found[r] {
			if strings.HasPrefix(br, taken[0]+"/") || strings.HasPrefix(br, taken[1]+"/") {
				in = append(in, br)
			}
		}
		if len(in) == 0 {
			continue
		}
		b.branchDiag(r, fmt.Sprintf("repo %q: %s, which this wave's state does not record: %s another wave's named %q over this repository (its wave file in another folder, or this wave's state file before it was removed), so neither %s/<lot> nor %s/<lot> is free. Rename this wave, or remove %s once that wave is done (cadence clean in its folder).",
			r.Name, branchesThere(in), itThey(len(in), "it is", "they are"), b.cfg.Wave.Name, taken[0], taken[1], itThey(len(in), "it", "them")))
	}
}

// branchDiags reports, per repository, what makes the branch of a pending
// lot impossible: a branch whose name is a folder of it (the lead's
// cadence or cadence/<wave>: git cannot have both a ref and a folder of
// refs by one name), or a branch under it, or the branch itself there
// while the state does not record it for that lot (another wave's).
func (b *builder) branchDiags(found map[*spec.Repo][]string) {
	for _, r := range b.branchRepos() {
		// blockers: a branch in the way → the lot branch it blocks.
		blockers, foreign := map[string]string{}, map[string]bool{}
		for _, l := range b.pendingIn(r) {
			lb := b.branch[l]
			rec := ""
			if s := b.st.Lots[l.ID]; s != nil {
				rec = s.Branch
			}
			for _, br := range found[r] {
				switch {
				case strings.HasPrefix(lb, br+"/") || strings.HasPrefix(br, lb+"/"):
					blockers[br] = lb
				case br == lb && rec != lb:
					foreign[br] = true
				}
			}
		}
		for _, br := range sortedKeys(blockers) {
			lb := blockers[br]
			what := "the lot branches " + path.Dir(lb) + "/<lot>"
			if !strings.HasPrefix(lb, br+"/") {
				what = "the lot branch " + lb
			}
			b.branchDiag(r, fmt.Sprintf("repo %q: the branch %s exists, so git cannot make %s (a branch cannot also be a folder of branches). Rename it (git -C %s branch -m %s <new name>) and plan again.",
				r.Name, br, what, r.Sensitive.Show("path", r.Path), br))
		}
		if len(foreign) > 0 {
			fs := sortedKeys(foreign)
			b.branchDiag(r, fmt.Sprintf("repo %q: %s, which this wave's state does not record: %s another wave's named %q over this repository (its wave file in another folder, or this wave's state file before it was removed). Rename this wave, or remove %s once that wave is done (cadence clean in its folder).",
				r.Name, branchesThere(fs), itThey(len(fs), "it is", "they are"), b.cfg.Wave.Name, itThey(len(fs), "it", "them")))
		}
	}
}

// branchRepos are the repositories of the pending lots with a branch, in
// file order.
func (b *builder) branchRepos() []*spec.Repo {
	var out []*spec.Repo
	for _, r := range b.cfg.Repos {
		if len(b.pendingIn(r)) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// pendingIn are the pending lots that have a branch in the repository r
// (their own or an also repository).
func (b *builder) pendingIn(r *spec.Repo) []*spec.Lot {
	var out []*spec.Lot
	for _, l := range b.selected {
		if b.branch[l] == "" || !b.actions[l].Action.Pending() {
			continue
		}
		for _, lr := range l.Repos() {
			if lr == r {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

func (b *builder) branchDiag(r *spec.Repo, detail string) {
	rng := r.DeclRange
	b.diags = append(b.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Lot branch name taken",
		Detail: detail, Subject: &rng})
}

// branchesThere says that the branches bs (sorted, at least one) are
// there: "the branch X is there", "the branches X, Y are there".
func branchesThere(bs []string) string {
	if len(bs) == 1 {
		return "the branch " + bs[0] + " is there"
	}
	return "the branches " + shortList(bs, 4) + " are there"
}

// itThey is one for n == 1, else many.
func itThey(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
