package layout_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
)

func TestPaths(t *testing.T) {
	w := layout.New("waves/big.hcl", "w", "/home/u/.cadence")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"StateFile", w.StateFile(), "waves/big.state.json"},
		{"Journal", w.Journal(), "waves/big.state.json.journal"},
		{"Lock", w.Lock(), "waves/big.state.json.lock"},
		{"WorkDir", w.WorkDir(), "waves/.cadence"},
		{"GitIgnore", w.GitIgnore(), "waves/.cadence/.gitignore"},
		{"LogDir", w.LogDir(), "waves/.cadence/w"},
		{"JournalLog", w.JournalLog(), "waves/.cadence/w/journal.log"},
		{"LotDir", w.LotDir("a"), "waves/.cadence/w/a"},
		{"StepFile", w.StepFile("a", 3, "review", ".json"), "waves/.cadence/w/a/3-review.json"},
		{"StepFile prefix", w.StepFile("a", 0, "implement", ""), "waves/.cadence/w/a/0-implement"},
		{"StepGlob", w.StepGlob("a", 12), "waves/.cadence/w/a/12-*"},
		{"ReplacedDir", w.ReplacedDir("a", 2), "waves/.cadence/w/a/replaced-2"},
		{"ReplacedGlob", w.ReplacedGlob("a"), "waves/.cadence/w/a/replaced-*"},
		{"WorktreeRoot", w.WorktreeRoot(), "waves/.cadence/worktrees/w"},
		{"Worktree", w.Worktree("a"), "waves/.cadence/worktrees/w/a"},
		{"AlsoWorktree", w.AlsoWorktree("a", "lib"), "waves/.cadence/worktrees/w/a@lib"},
		{"SlotsDir", w.SlotsDir(), "/home/u/.cadence/slots"},
		{"RegistryDir", w.RegistryDir(), "/home/u/.cadence/waves"},
		{"RepoLock", layout.RepoLock("/r/.git"), "/r/.git/cadence/repo.lock"},
		{"IntegrateLock", layout.IntegrateLock("/r/.git"), "/r/.git/cadence/integrate.lock"},
		{"Abs", w.Abs().Worktree("a"), filepath.Join(wd, "waves/.cadence/worktrees/w/a")},
		{"Abs keeps", layout.New("/abs/w.hcl", "w", "").Abs().StateFile(), "/abs/w.state.json"},
		{"Named", w.Named("v").LotDir("a"), "waves/.cadence/v/a"},
		{"Home env", layout.Home("/ch", "/home/u"), "/ch"},
		{"Home user", layout.Home("", "/home/u"), "/home/u/.cadence"},
		{"Home none", layout.Home("", ""), filepath.Join(os.TempDir(), "cadence")},
		{"EnclosingWorkDir", layout.EnclosingWorkDir("/x/.cadence/worktrees/w/a"), "/x/.cadence"},
		{"EnclosingWorkDir none", layout.EnclosingWorkDir("/x/y"), ""},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestStateFile(t *testing.T) {
	for in, want := range map[string]string{
		"wave.hcl":       "wave.state.json",
		"dir/w.hcl.json": "dir/w.state.json",
		"dir/w.json":     "dir/w.state.json",
		"/abs/x.hcl":     "/abs/x.state.json",
		"noext":          "noext.state.json",
		"a.b.hcl":        "a.b.state.json",
	} {
		if got := layout.StateFile(in); got != want {
			t.Errorf("StateFile(%q) = %q, want %q", in, got, want)
		}
		if got := state.PathFor(in); got != want {
			t.Errorf("state.PathFor(%q) = %q, want %q", in, got, want)
		}
	}
	// The store's journal is where the layout says.
	w := layout.New("d/w.hcl", "w", "")
	if w.Journal() != w.StateFile()+state.JournalSuffix {
		t.Errorf("Journal %q is not the state file plus %q", w.Journal(), state.JournalSuffix)
	}
}

func TestMakeWorkDir(t *testing.T) {
	dir := t.TempDir()
	w := layout.New(filepath.Join(dir, "wave.hcl"), "w", "")
	if err := os.MkdirAll(w.WorkDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(w.GitIgnore(), []byte("something else\n"), 0o644)
	if err := w.MakeWorkDir(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(w.GitIgnore()); string(b) != "*\n" {
		t.Errorf(".gitignore = %q, want %q", b, "*\n")
	}
	if err := w.MakeWorkDir(); err != nil {
		t.Fatalf("second MakeWorkDir: %v", err)
	}
}
