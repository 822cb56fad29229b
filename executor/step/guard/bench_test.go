package guard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/spec"
)

// BenchmarkGuardStep is the cost of the guard around one step (Before,
// then After, nothing moved) of a lot of one repository in a wave of 3
// repositories, each with 40 branches, 40 tags and a stash entry:
// lot-repos watches the lot's repository only (the guard given only
// it), every-repo the wave's 3 (docs/integration.md, Guards).
func BenchmarkGuardStep(b *testing.B) {
	var repos []*spec.Repo
	for i := range 3 {
		dir := gittest.NewRepo(b, nil)
		for k := range 40 {
			gittest.Git(b, dir, "branch", fmt.Sprintf("topic-%d", k))
			gittest.Git(b, dir, "tag", fmt.Sprintf("v0.%d", k))
		}
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("the lead's edit\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		gittest.Git(b, dir, "stash", "push", "-q")
		repos = append(repos, &spec.Repo{Name: fmt.Sprintf("r%d", i), Path: dir, Base: "main"})
	}
	wt := filepath.Join(b.TempDir(), "a")
	gittest.Git(b, repos[0].Path, "worktree", "add", "-q", "-b", "cadence/w/a", wt)
	lot := Lot{ID: "a", Branch: "cadence/w/a", Repos: []Repo{{Repo: repos[0], Dir: wt}}}
	git := gitint.NewRepos(gittest.Env())
	for _, tc := range []struct {
		name  string
		repos []*spec.Repo
	}{{"lot-repos", repos[:1]}, {"every-repo", repos}} {
		b.Run(tc.name, func(b *testing.B) {
			g := New(git, "w", tc.repos)
			ctx := context.Background()
			for b.Loop() {
				w, _ := g.Before(ctx, lot, Options{Kind: "run"})
				if f := w.After(ctx); f.Incident != "" {
					b.Fatal(f.Incident)
				}
			}
		})
	}
}
