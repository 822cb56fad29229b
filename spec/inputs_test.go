package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFilesRead: the files file() and templatefile() read (a template's own
// file() included) and the var files are recorded by absolute path with the
// digest of their bytes.
func TestFilesRead(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"cmd.sh":    "echo hi\n",
		"brief.tpl": `Do ${file("part.txt")}.`,
		"part.txt":  "this",
		"vars.hcl":  `n = "1"` + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := `wave "w" {}
variable "n" {}
repo "r" {
  path = "."
}
lot "a" {
  repo  = repo.r
  brief = templatefile("brief.tpl", {})
}
lot "b" {
  repo = repo.r
  run  = file("cmd.sh")
}
`
	t.Chdir(dir) // relative names are recorded absolute
	cfg, diags := NewLoader().LoadBytes([]byte(src), "wave.hcl", Options{VarFiles: []string{"vars.hcl"}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	abs := func(name string) string { p, _ := filepath.Abs(filepath.Join(dir, name)); return p }
	want := map[string]string{
		abs("cmd.sh"):    digest([]byte(files["cmd.sh"])),
		abs("brief.tpl"): digest([]byte(files["brief.tpl"])),
		abs("part.txt"):  digest([]byte(files["part.txt"])),
	}
	if !reflect.DeepEqual(cfg.FilesRead, want) {
		t.Errorf("FilesRead = %v, want %v", cfg.FilesRead, want)
	}
	wantVars := map[string]string{abs("vars.hcl"): digest([]byte(files["vars.hcl"]))}
	if !reflect.DeepEqual(cfg.VarFilesRead, wantVars) {
		t.Errorf("VarFilesRead = %v, want %v", cfg.VarFilesRead, wantVars)
	}
	if d := digest(nil); d != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("digest format = %q", d)
	}
}

// An unquoted word in a var file (region = eu) is refused with a hint to
// quote it, and without echoing the value (a var file may hold secrets).
func TestVarFileBareWord(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "vars.hcl")
	if err := os.WriteFile(vf, []byte("region = euwest\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "wave \"w\" {}\nvariable \"region\" {}\n"
	_, diags := NewLoader().LoadBytes([]byte(src), filepath.Join(dir, "wave.hcl"), Options{VarFiles: []string{vf}})
	got := diags.Error()
	if !strings.Contains(got, "quote it") || !strings.Contains(got, `region = "…"`) || strings.Contains(got, "euwest") {
		t.Errorf("diagnostics %q: want a hint to quote the value, without the value", got)
	}
	if strings.Contains(got, "No value for required variable") {
		t.Errorf("follow-on error: %s", got)
	}
}
