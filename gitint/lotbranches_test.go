package gitint

import (
	"context"
	"reflect"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/spec"
)

// LotBranches lists the branch cadence itself and those under cadence/,
// never a branch that only starts with the word (cadence-x, lead/cadence).
func TestLotBranches(t *testing.T) {
	lotEnv(t)
	ctx := context.Background()
	path := gittest.NewRepo(t, nil)
	for _, b := range []string{"cadence-x", "lead/cadence", "cadence/w/a", "cadence/w-0123abcd/a"} {
		gittest.Git(t, path, "branch", b)
	}
	got, err := tgit().LotBranches(ctx, path)
	if want := []string{"cadence/w-0123abcd/a", "cadence/w/a"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("LotBranches = %q, %v; want %q", got, err, want)
	}
	other := gittest.NewRepo(t, nil)
	gittest.Git(t, other, "branch", "cadence")
	if got, err := tgit().LotBranches(ctx, other); err != nil || !reflect.DeepEqual(got, []string{"cadence"}) {
		t.Fatalf("LotBranches = %q, %v; want [cadence]", got, err)
	}
	if got, err := tgit().LotBranches(ctx, t.TempDir()); err == nil {
		t.Errorf("LotBranches of a folder that is no repository = %q, want an error", got)
	}
}

// Leftovers lists the lot branches of the namespace it is given only: a
// wave of the same name in another folder (cadence/w-<key>/…) keeps its
// own, and its worktrees are not this wave's.
func TestLeftoversOfOneNamespace(t *testing.T) {
	lotEnv(t)
	ctx := context.Background()
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	startLot(t, g, repo, "a") // cadence/w/a, with its worktree
	gittest.Git(t, path, "branch", "cadence/w-0123abcd/a")
	ls, err := tgit().Leftovers(ctx, repo, "w", "cadence/w-0123abcd", all)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, l.Kind+" "+l.Path)
	}
	if want := []string{"branch cadence/w-0123abcd/a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Leftovers = %q, want %q", got, want)
	}
}
