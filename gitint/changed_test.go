package gitint

import (
	"context"
	"reflect"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestChanged: the files a range adds or changes, with their paths from
// the repository's root however deep, a rename's new path, and no
// deleted file.
func TestChanged(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n", "old.json": "{}\n", "gone.txt": "x\n"})
	start := gittest.Git(t, repo, "rev-parse", "HEAD")
	gittest.Commit(t, repo, "one", map[string]string{"a.txt": "A\n", "sub/.mcp.json": "{}\n", "name with space": "s\n"})
	gittest.Commit(t, repo, "dir", map[string]string{".claude/keep": "k\n"})
	gittest.Git(t, repo, "mv", "old.json", ".claude/settings.json")
	gittest.Git(t, repo, "rm", "-q", "gone.txt")
	gittest.Git(t, repo, "commit", "-qm", "two")
	head := gittest.Git(t, repo, "rev-parse", "HEAD")
	got, err := trepos().Changed(context.Background(), repo, start, head)
	want := []string{".claude/keep", ".claude/settings.json", "a.txt", "name with space", "sub/.mcp.json"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Changed = %q, %v; want %q", got, err, want)
	}
}
