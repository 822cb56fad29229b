package step

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// TestUXScratchDir: a UX session's scratch folder is named by a rule of
// the wave and the session: the same for the same pair, another for
// another wave or session, in tmp, and short enough for chromium's socket
// in it.
func TestUXScratchDir(t *testing.T) {
	const session = "0b4f7c2e-9a51-4d3e-8f00-5a1c2b3d4e5f"
	d := uxScratchDir("/tmp", "lineage-a", session)
	if d != uxScratchDir("/tmp", "lineage-a", session) {
		t.Fatalf("not the same folder twice for one session")
	}
	if filepath.Dir(d) != "/tmp" || !strings.HasPrefix(filepath.Base(d), uxScratchPrefix) {
		t.Errorf("scratch %s: not tmp/%s…", d, uxScratchPrefix)
	}
	if len(filepath.Base(d)) > 32 {
		t.Errorf("scratch name %q is %d bytes, want at most 32", filepath.Base(d), len(filepath.Base(d)))
	}
	for _, other := range []string{uxScratchDir("/tmp", "lineage-b", session), uxScratchDir("/tmp", "lineage-a", "1"+session[1:])} {
		if other == d {
			t.Errorf("another wave or session gets the same scratch %s", d)
		}
	}
}

// TestTidyUXScratch: the next apply removes the scratch folders its wave's
// killed UX sessions left, with what is in them, and nothing else: not
// another wave's, not a folder of another name, not a symbolic link of the
// wave's name nor what it points to, not a file.
func TestTidyUXScratch(t *testing.T) {
	tmp, outside := t.TempDir(), t.TempDir()
	mine1, mine2 := uxScratchDir(tmp, "wave-a", "s1"), uxScratchDir(tmp, "wave-a", "s2")
	theirs := uxScratchDir(tmp, "wave-b", "s1")
	for _, d := range []string{mine1, mine2, theirs, filepath.Join(tmp, "cadence-ux-123456"), filepath.Join(outside, "keep")} {
		if err := os.MkdirAll(filepath.Join(d, "tmp"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link, file := uxScratchDir(tmp, "wave-a", "s3"), uxScratchDir(tmp, "wave-a", "s4")
	if err := os.Symlink(filepath.Join(outside, "keep"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	removed, err := tidyUXScratch(tmp, "wave-a")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(removed, " ") != strings.Join(sorted(mine1, mine2), " ") {
		t.Errorf("removed %v, want %v", removed, sorted(mine1, mine2))
	}
	for _, gone := range []string{mine1, mine2} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", gone, err)
		}
	}
	for _, kept := range []string{theirs, filepath.Join(tmp, "cadence-ux-123456"), link, file, filepath.Join(outside, "keep", "tmp")} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s removed: %v", kept, err)
		}
	}
}

func sorted(a, b string) []string {
	if a > b {
		return []string{b, a}
	}
	return []string{a, b}
}

// dirRecounter is a Recounter that records the folder it was given.
type dirRecounter struct {
	steptestAgent
	dir *string
}

type steptestAgent struct{}

func (steptestAgent) Run(context.Context, agent.Session) agent.Outcome { return agent.Outcome{} }

func (r dirRecounter) Recount(_ *spec.Agent, _, dir, _ string) (agent.Spent, bool) {
	*r.dir = dir
	return agent.Spent{}, true
}

// TestRecountUXSession: the recount of a UX session killed with its
// cadence looks in the session's scratch folder (its working folder, under
// whose name the CLI keeps its transcript), a review's in the worktree.
func TestRecountUXSession(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "wave.hcl")
	if err := os.WriteFile(file, []byte("wave \"w\" {}\nlot \"a\" {\n  run = \"true\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := spec.NewLoader().LoadFile(file, spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var got string
	l := NewLocal(LocalOptions{Config: cfg, Agent: dirRecounter{dir: &got}})
	const session = "0b4f7c2e-9a51-4d3e-8f00-5a1c2b3d4e5f"
	for _, tc := range []struct {
		kind state.StepKind
		want string
	}{
		{state.StepUX, uxScratchDir(uxTempDir(), "lineage", session)},
		{state.StepReview, "/wt/a"},
	} {
		got = ""
		if _, ok, err := l.Recount(context.Background(), RecountRequest{Agent: spec.BuiltinAgent, SessionID: session, Dir: "/wt/a",
			Log: filepath.Join(dir, "1-x"), Kind: tc.kind, WaveID: "lineage"}); !ok || err != nil {
			t.Fatalf("%s: recount not asked (%v, %v)", tc.kind, ok, err)
		}
		if got != tc.want {
			t.Errorf("%s: recounted in %q, want %q", tc.kind, got, tc.want)
		}
	}
}
