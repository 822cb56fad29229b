package layout_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
		{"Requests", w.Requests(), "waves/big.state.json.requests"},
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
		{"WorktreesDir", w.WorktreesDir(), "/home/u/.cadence/worktrees"},
		{"WorktreesDir attribute", w.WithWorktrees("/wt").WorktreesDir(), "/wt"},
		{"WorktreesDir no home", layout.New("w.hcl", "w", "").WorktreesDir(), filepath.Join(os.TempDir(), "cadence", "worktrees")},
		{"AlsoWorktree", layout.AlsoWorktree("/wt/app-x/w-y/a", "lib"), "/wt/app-x/w-y/a@lib"},
		{"OldWorktreeRoot", w.OldWorktreeRoot(), filepath.Join(wd, "waves/.cadence/worktrees/w")},
		{"SlotsDir", w.SlotsDir(), "/home/u/.cadence/slots"},
		{"KeysDir", w.KeysDir(), "/home/u/.cadence/keys"},
		{"SteerKey", w.SteerKey(), "/home/u/.cadence/keys/steer-" + w.StateKey()},
		{"RegistryDir", w.RegistryDir(), "/home/u/.cadence/waves"},
		{"RepoLock", layout.RepoLock("/r/.git"), "/r/.git/cadence/repo.lock"},
		{"IntegrateLock", layout.IntegrateLock("/r/.git"), "/r/.git/cadence/integrate.lock"},
		{"Abs", w.Abs().StateFile(), filepath.Join(wd, "waves/big.state.json")},
		{"Abs home", layout.New("w.hcl", "w", "ch").Abs().SlotsDir(), filepath.Join(wd, "ch/slots")},
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

// A lot's worktree is outside the wave file's folder, under the worktrees
// folder, in a folder named after the repository and one named after the
// wave, each with a key of its path: two clones, or two waves of one name
// in two folders, never share one. No test asserts on a key's value.
func TestWorktree(t *testing.T) {
	w := layout.New("/src/app/wave.hcl", "w", "/home/u/.cadence")
	got := w.Worktree("app", "/src/app", "a")
	shape := regexp.MustCompile(`^/home/u/\.cadence/worktrees/app-[0-9a-f]{8}/w-[0-9a-f]{8}/a$`)
	if !shape.MatchString(got) {
		t.Fatalf("Worktree = %q, want the shape %s", got, shape)
	}
	if again := layout.New("/src/app/wave.hcl", "w", "/home/u/.cadence").Worktree("app", "/src/app/", "a"); again != got {
		t.Errorf("the same wave and repository gave %q, then %q", got, again)
	}
	if d := filepath.Dir(got); d != w.WaveWorktrees("app", "/src/app") {
		t.Errorf("WaveWorktrees = %q, want the worktree's folder %q", w.WaveWorktrees("app", "/src/app"), d)
	}
	for name, other := range map[string]string{
		"another clone":                 w.Worktree("app", "/src/app2", "a"),
		"a wave of that name elsewhere": layout.New("/src/other/wave.hcl", "w", "/home/u/.cadence").Worktree("app", "/src/app", "a"),
		"another wave file beside it":   layout.New("/src/app/wave2.hcl", "w", "/home/u/.cadence").Worktree("app", "/src/app", "a"),
		"another lot":                   w.Worktree("app", "/src/app", "b"),
	} {
		if other == got {
			t.Errorf("%s shares the worktree %s", name, got)
		}
	}
	attr := w.WithWorktrees("/scratch/wt").Worktree("app", "/src/app", "a")
	if !strings.HasPrefix(attr, "/scratch/wt/app-") || filepath.Base(attr) != "a" {
		t.Errorf("with a worktrees attribute: %q", attr)
	}
	// A relative home and wave file give an absolute worktree path (git
	// runs it from the repository's folder).
	if rel := layout.New("wave.hcl", "w", "ch").Worktree("app", "app", "a"); !filepath.IsAbs(rel) {
		t.Errorf("relative layout: worktree %q is not absolute", rel)
	}
}

// HoldsWorktree recognises the wave's worktrees, its neighbour worktrees
// and those of the old layout, and nothing of another wave.
func TestHoldsWorktree(t *testing.T) {
	w := layout.New("/src/app/wave.hcl", "w", "/home/u/.cadence")
	own := w.Worktree("app", "/src/app", "a")
	for _, c := range []struct {
		path string
		want bool
	}{
		{own, true},
		{layout.AlsoWorktree(own, "lib"), true},
		{w.Worktree("lib", "/src/lib", "b"), true},
		{"/src/app/.cadence/worktrees/w/a", true},
		{"/src/app/.cadence/worktrees/v/a", false},
		{layout.New("/src/other/wave.hcl", "w", "/home/u/.cadence").Worktree("app", "/src/app", "a"), false},
		{layout.New("/src/app/wave.hcl", "v", "/home/u/.cadence").Worktree("app", "/src/app", "a"), false},
		{filepath.Dir(own), false},
		{"/elsewhere/a", false},
	} {
		if got := w.HoldsWorktree(c.path); got != c.want {
			t.Errorf("HoldsWorktree(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestAutoVarFiles(t *testing.T) {
	for in, want := range map[string]string{
		"wave.hcl":       "wave.vars.hcl wave.vars.json",
		"dir/w.hcl.json": "dir/w.vars.hcl dir/w.vars.json",
		"/abs/x.hcl":     "/abs/x.vars.hcl /abs/x.vars.json",
	} {
		if got := strings.Join(layout.AutoVarFiles(in), " "); got != want {
			t.Errorf("AutoVarFiles(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestIgnoreBeside checks that IgnoreBeside covers every path cadence
// writes beside a wave file (its name, matched as git matches a pattern
// without a slash), and that the examples' .gitignore files hold it.
func TestIgnoreBeside(t *testing.T) {
	matches := func(name string, dir bool) bool {
		for _, p := range layout.IgnoreBeside {
			if strings.HasSuffix(p, "/") {
				if !dir {
					continue
				}
				p = strings.TrimSuffix(p, "/")
			}
			if ok, err := filepath.Match(p, name); err != nil {
				t.Fatalf("pattern %q: %v", p, err)
			} else if ok {
				return true
			}
		}
		return false
	}
	for _, file := range []string{"wave.hcl", "waves/deploy.hcl", "x.hcl.json"} {
		w := layout.New(file, "w", "/home/u/.cadence")
		for _, p := range []string{w.StateFile(), w.Journal(), w.Lock(),
			// internal/state's atomic write: os.CreateTemp(dir, "."+base+".tmp-*")
			filepath.Join(w.Dir(), "."+filepath.Base(w.StateFile())+".tmp-123456")} {
			if !matches(filepath.Base(p), false) {
				t.Errorf("%s is not ignored by %q", p, layout.IgnoreBeside)
			}
		}
		for _, d := range []string{w.WorkDir(), w.Requests()} {
			if !matches(filepath.Base(d), true) {
				t.Errorf("%s is not ignored", d)
			}
		}
		for _, kept := range []string{file, "wave.vars.hcl", "wave.vars.json", ".gitignore", "briefs"} {
			if matches(filepath.Base(kept), false) {
				t.Errorf("%s, meant to be committed, is ignored", kept)
			}
		}
	}

	examples, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*", "wave.hcl*"))
	if len(examples) == 0 {
		t.Fatal("no examples found")
	}
	for _, wave := range examples {
		gi := filepath.Join(filepath.Dir(wave), ".gitignore")
		b, err := os.ReadFile(gi)
		if err != nil {
			t.Errorf("every example has a .gitignore: %v", err)
			continue
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			lines[strings.TrimSpace(l)] = true
		}
		for _, p := range layout.IgnoreBeside {
			if !lines[p] {
				t.Errorf("%s lacks the line %q", gi, p)
			}
		}
	}
}
