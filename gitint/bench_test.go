package gitint

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/spec"
)

// benchLot prepares a 1-commit lot; moveBase adds a commit to the base
// first so that integration must rebase.
func benchLot(b *testing.B, g *Repos, repo *spec.Repo, id string, moveBase bool) string {
	b.Helper()
	dir := fmt.Sprintf("%s-wt-%s", repo.Path, id)
	if _, err := g.Worktree(context.Background(), repo, dir, "cadence/w/"+id, true); err != nil {
		b.Fatal(err)
	}
	gittest.Commit(b, dir, id+": change ("+id+")", map[string]string{id + ".txt": id + "\n"})
	if moveBase {
		gittest.Commit(b, repo.Path, "base "+id, map[string]string{"base-" + id + ".txt": "x\n"})
	}
	return dir
}

func benchIntegrate(b *testing.B, moveBase bool) {
	lotEnv(b)
	path := gittest.NewRepo(b, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := NewRepos()
	ctx := context.Background()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := fmt.Sprintf("L%d", i)
		dir := benchLot(b, g, repo, id, moveBase)
		b.StartTimer()
		t := time.Now()
		unlock, err := g.LockIntegration(ctx, repo, "w")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.Rebase(ctx, repo, dir); err != nil {
			b.Fatal(err)
		}
		if _, err := g.Advance(ctx, repo, "cadence/w/"+id); err != nil {
			b.Fatal(err)
		}
		unlock()
		total += time.Since(t)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/lot")
}

// BenchmarkIntegrateFF integrates a 1-commit lot into an unmoved base
// (fast-forward; the base is checked out, so merge --ff-only).
func BenchmarkIntegrateFF(b *testing.B) { benchIntegrate(b, false) }

// BenchmarkIntegrateRebase integrates a 1-commit lot after the base moved.
func BenchmarkIntegrateRebase(b *testing.B) { benchIntegrate(b, true) }

// BenchmarkGitAlone does what integration must do with the fewest git
// commands (rebase, then merge --ff-only): the floor cadence's overhead is
// measured against.
func BenchmarkGitAlone(b *testing.B) {
	lotEnv(b)
	path := gittest.NewRepo(b, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := NewRepos()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := fmt.Sprintf("L%d", i)
		dir := benchLot(b, g, repo, id, true)
		b.StartTimer()
		t := time.Now()
		gittest.Git(b, dir, "rebase", "-q", "main")
		gittest.Git(b, path, "merge", "-q", "--ff-only", "cadence/w/"+id)
		total += time.Since(t)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/lot")
}
