package gitint

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestStashPutBack: a stash entry dropped by someone else (git stash
// drop) is found missing from the stash's reflog file and put back with
// its message; one whose commit is gone is reported, not put back.
func TestStashPutBack(t *testing.T) {
	repo := gittest.NewRepo(t, nil)
	for _, msg := range []string{"first", "second"} {
		if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte(msg+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, repo, "stash", "push", "-q", "-m", msg)
	}
	before, err := ReadStash(repo)
	if err != nil || len(before) != 2 || before[0].Message != "On main: first" || before[1].Message != "On main: second" {
		t.Fatalf("ReadStash = %+v, %v; want first and second, oldest first", before, err)
	}
	gittest.Git(t, repo, "stash", "drop", "-q", "stash@{1}") // "first"
	after, _ := ReadStash(repo)
	missing := MissingStash(before, after)
	if len(missing) != 1 || missing[0].Commit != before[0].Commit {
		t.Fatalf("MissingStash = %+v, want the first entry", missing)
	}
	gone := StashEntry{Commit: "0123456789012345678901234567890123456789", Message: "gone"}
	puts := NewGit(gittest.Env()).RestoreStash(context.Background(), repo, append(missing, gone))
	if len(puts) != 2 || puts[0].Err != nil || puts[1].Err == nil {
		t.Fatalf("RestoreStash = %+v, want the first put back and the gone one refused", puts)
	}
	now, _ := ReadStash(repo)
	if len(MissingStash(before, now)) != 0 {
		t.Fatalf("after RestoreStash the stash is %+v, want every entry of %+v", now, before)
	}
	if got := gittest.Git(t, repo, "log", "-g", "-1", "--format=%gs", "refs/stash"); got != "On main: first" {
		t.Errorf("the entry put back says %q, want its message", got)
	}
}
