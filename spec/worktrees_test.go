package spec

import (
	"path/filepath"
	"testing"
)

// The wave's worktrees attribute is a folder resolved against the wave
// file's folder; without it the executor uses the cadence home's.
func TestWaveWorktrees(t *testing.T) {
	for _, c := range []struct{ attr, want string }{
		{"", ""},
		{`worktrees = "../wt"`, "../wt"},
		{`worktrees = "/abs/wt"`, "/abs/wt"},
	} {
		dir := t.TempDir()
		cfg, diags := NewLoader().LoadBytes([]byte("wave \"w\" {\n"+c.attr+"\n}\n"), filepath.Join(dir, "wave.hcl"), Options{})
		if diags.HasErrors() {
			t.Fatalf("%s: %s", c.attr, diags.Error())
		}
		want := c.want
		if want != "" && !filepath.IsAbs(want) {
			want = filepath.Join(dir, want)
		}
		if cfg.Wave.Worktrees != want {
			t.Errorf("%s: Worktrees = %q, want %q", c.attr, cfg.Wave.Worktrees, want)
		}
	}
}
