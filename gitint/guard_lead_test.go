package gitint

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// commitOnMain commits a file on main in the lead's checkout repo (main
// checked out) with a plain environment: no step mark, no guard config.
func commitOnMain(t *testing.T, repo, name string) error {
	t.Helper()
	cmd := exec.Command("sh", "-c", "echo x > "+name+" && git add "+name+" && git commit -qm "+name)
	cmd.Dir = repo
	cmd.Env = gittest.Env()
	out, err := cmd.CombinedOutput()
	t.Logf("commit %s: %s", name, out)
	return err
}

// The lead-side hook reports the lead's update of main (a process that
// does not descend from the guard's owner and carries no step mark) to
// the witness, which records it with its old and new values; a process
// below the owner (a step, even without its marks) is refused and adds
// nothing.
func TestGuardLeadSideAttribution(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, nil)
	begin := time.Now().Truncate(time.Second)
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	common, err := tgit().commonDir(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.TrimSpace(gittest.Git(t, repo, "rev-parse", "main"))
	if err := commitOnMain(t, repo, "lead.txt"); err != nil {
		t.Fatalf("the lead's commit was refused: %v", err)
	}
	now := strings.TrimSpace(gittest.Git(t, repo, "rev-parse", "main"))
	moves := OutsideMoves(common, begin)
	if len(moves) != 1 || moves[0].Ref != "refs/heads/main" || moves[0].Old != old || moves[0].New != now {
		t.Fatalf("recorded %+v, want refs/heads/main %s -> %s", moves, old, now)
	}

	// This test process plays cadence: its children are steps.
	guardOwner = os.Getpid
	defer func() { guardOwner = func() int { return 0 } }()
	if _, err := tgit().InstallGuard(ctx, repo); err != nil {
		t.Fatal(err)
	}
	if err := commitOnMain(t, repo, "step.txt"); err == nil {
		t.Fatal("a step's commit on main in the lead's checkout went through")
	}
	if got := strings.TrimSpace(gittest.Git(t, repo, "rev-parse", "main")); got != now {
		t.Fatalf("main moved to %s", got)
	}
	if moves := OutsideMoves(common, begin); len(moves) != 1 {
		t.Fatalf("a step's update was recorded as outside: %+v", moves)
	}
}

// LeadValue follows the lead's recorded moves of a ref from the value
// expected: all of the move, none, or part of it.
func TestLeadValue(t *testing.T) {
	out := []OutsideMove{
		{RefMove: RefMove{Ref: "refs/heads/main", Old: "a", New: "b"}},
		{RefMove: RefMove{Ref: "refs/heads/x", Old: "b", New: "c"}},
		{RefMove: RefMove{Ref: "refs/heads/main", Old: "b", New: "c"}},
	}
	for _, tc := range []struct {
		m    RefMove
		want string
	}{
		{RefMove{Ref: "refs/heads/main", Old: "a", New: "c"}, "c"},
		{RefMove{Ref: "refs/heads/main", Old: "a", New: "d"}, "c"},
		{RefMove{Ref: "refs/heads/main", Old: "z", New: "c"}, "z"},
		{RefMove{Ref: "refs/tags/v1", Old: "", New: "c"}, ""},
	} {
		if got := LeadValue(tc.m, out); got != tc.want {
			t.Errorf("LeadValue(%v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}
