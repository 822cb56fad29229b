package gitint

import (
	"context"
	"fmt"
	"path/filepath"
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
	g := trepos()
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
		if _, err := g.Advance(ctx, repo, "cadence/w/"+id, ""); err != nil {
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
	g := trepos()
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

// BenchmarkGuardedCommit measures what cadence's guard costs a lot's own
// git commands: an empty commit in a guarded lot worktree (cadence's hook
// shims run for each hook git calls) against the same commit in an
// unguarded worktree of the same repository, alternated in one loop. It
// reports both and their ratio (guarded/plain).
func BenchmarkGuardedCommit(b *testing.B) {
	lotEnv(b)
	path := gittest.NewRepo(b, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	ctx := context.Background()
	remove, err := tgit().InstallGuard(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = remove() }()
	guarded, plain := path+"-wt-guarded", path+"-wt-plain"
	for _, dir := range []string{guarded, plain} {
		if _, err := g.Worktree(ctx, repo, dir, "cadence/w/"+filepath.Base(dir), true); err != nil {
			b.Fatal(err)
		}
	}
	if err := GuardWorktree(ctx, path, guarded, "cadence/w/"+filepath.Base(guarded)); err != nil {
		b.Fatal(err)
	}
	var tg, tp time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, side := range []struct {
			dir string
			sum *time.Duration
		}{{guarded, &tg}, {plain, &tp}} {
			t := time.Now()
			gittest.Git(b, side.dir, "commit", "-q", "--allow-empty", "-m", "x")
			*side.sum += time.Since(t)
		}
	}
	b.ReportMetric(float64(tg.Microseconds())/float64(b.N)/1000, "guarded-ms/op")
	b.ReportMetric(float64(tp.Microseconds())/float64(b.N)/1000, "plain-ms/op")
	b.ReportMetric(float64(tg)/float64(tp), "ratio")
}
