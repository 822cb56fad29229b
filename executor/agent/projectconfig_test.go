package agent

import (
	"slices"
	"testing"
)

// configured is an Adapter whose CLI loads the given project files.
type configured struct {
	recorder
	files []string
}

func (c *configured) ProjectConfig() []string { return c.files }

// TestConfigFiles: the files a registered adapter's CLI loads from a
// repository are found at its root and in any folder of it, a folder
// pattern covers what is under it; other files, and lookalikes, are not.
func TestConfigFiles(t *testing.T) {
	reg := NewRegistry(&configured{recorder: recorder{kind: "cfgkind"}, files: []string{".mcp.json", ".claude/settings.json", ".claude/hooks/"}}, &recorder{kind: "plain"})
	paths := []string{".mcp.json", "web/.mcp.json", "x.mcp.json", ".mcp.json.bak",
		".claude/settings.json", "sub/.claude/settings.json", ".claude/settings.json5", "claude/settings.json",
		".claude/hooks/pre.sh", "a/.claude/hooks/deep/x", ".claude/hooksx/y", ".claude/hooks",
		"CLAUDE.md", ".claude/CLAUDE.md", "README.md"}
	want := []string{".mcp.json", "web/.mcp.json", ".claude/settings.json", "sub/.claude/settings.json",
		".claude/hooks/pre.sh", "a/.claude/hooks/deep/x"}
	if got := reg.ConfigFiles(paths); !slices.Equal(got, want) {
		t.Errorf("ConfigFiles = %q, want %q", got, want)
	}
	if got := (&Router{Adapters: reg}).ConfigFiles(paths); !slices.Equal(got, want) {
		t.Errorf("Router.ConfigFiles = %q, want %q", got, want)
	}
	if got := (&Router{}).ConfigFiles([]string{"README.md"}); got != nil {
		t.Errorf("README.md is configuration: %q", got)
	}
}
