package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestVarFilesChanged(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	saved := []string{filepath.Join(dir, "a.hcl")}
	tests := []struct {
		given []string
		want  string
	}{
		{nil, ""},
		{[]string{"a.hcl"}, ""},
		{[]string{filepath.Join(dir, "a.hcl")}, ""},
		{[]string{"b.hcl"}, "-var-file changed (" + saved[0] + " → " + filepath.Join(dir, "b.hcl") + ")"},
	}
	for _, tt := range tests {
		if got := varFilesChanged(saved, tt.given); got != tt.want {
			t.Errorf("varFilesChanged(%q) = %q, want %q", tt.given, got, tt.want)
		}
	}
}

// TestTemplatesDigest: the digest covers the *.tmpl files' names and bytes,
// and nothing else in the folder.
func TestTemplatesDigest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if templatesDigest("") != "" {
		t.Error("no folder: want no digest")
	}
	empty := templatesDigest(dir)
	write("notes.txt", "ignored")
	if templatesDigest(dir) != empty {
		t.Error("a non-template file changed the digest")
	}
	write("implement.tmpl", "a")
	one := templatesDigest(dir)
	if one == empty {
		t.Error("a new template did not change the digest")
	}
	write("implement.tmpl", "b")
	if templatesDigest(dir) == one {
		t.Error("an edited template did not change the digest")
	}
	write("implement.tmpl", "a")
	if templatesDigest(dir) != one {
		t.Error("the same templates gave another digest")
	}
}
