package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// heredocs has a heredoc and an indented heredoc in a lot's run, a brief and
// a repo's test, and a variable whose default is a heredoc.
const heredocs = `variable "script" {
  default = <<EOF
echo from a variable
EOF
}
wave "w" {}
repo "api" {
  path = "."
  test = <<-EOT
    go vet ./...
    go test ./...
  EOT
}
lot "a" {
  run = <<EOF
ls wave.hcl
echo done
EOF
}
lot "b" {
  run = <<-EOF
    ls wave.hcl
    ${var.script}
  EOF
}
lot "c" {
  repo  = repo.api
  brief = <<-EOT
    Do the thing.

    Then the other.
  EOT
}
`

// TestCRLFDecodesLikeLF: a wave file with CRLF line ends decodes to the
// same Config as the LF one, heredocs without a "\r"; the chunked parser
// included.
func TestCRLFDecodesLikeLF(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		if chunked {
			withSmallPieces(t)
		}
		dir := t.TempDir()
		name := filepath.Join(dir, "wave.hcl")
		lf, diags := NewLoader().LoadBytes([]byte(heredocs), name, Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		cr, diags := NewLoader().LoadBytes([]byte(crlf(heredocs)), name, Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		if got, want := project(cr), project(lf); !reflect.DeepEqual(got, want) {
			t.Errorf("chunked %v: CRLF decodes to\n %+v\nLF to\n %+v", chunked, got, want)
		}
		if got := cr.Lot("a").Run; got != "ls wave.hcl\necho done\n" {
			t.Errorf("run a = %q", got)
		}
		if got := cr.Lot("b").Run; got != "ls wave.hcl\necho from a variable\n\n" {
			t.Errorf("run b = %q", got)
		}
		if got := cr.Repo("api").Test; got != "go vet ./...\ngo test ./...\n" {
			t.Errorf("test = %q", got)
		}
		if got := cr.Lot("c").Brief; got != "Do the thing.\n\nThen the other.\n" {
			t.Errorf("brief = %q", got)
		}
	}
}

// TestCRLFDesignExample: the design example saved with CRLF line ends
// decodes like the file on disk.
func TestCRLFDesignExample(t *testing.T) {
	src, err := os.ReadFile("testdata/design/wave.hcl")
	if err != nil {
		t.Fatal(err)
	}
	lf, diags := NewLoader().LoadBytes(src, "testdata/design/wave.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	cr, diags := NewLoader().LoadBytes([]byte(crlf(string(src))), "testdata/design/wave.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if !strings.Contains(crlf(string(src)), "\r\n") || !reflect.DeepEqual(project(cr), project(lf)) {
		t.Errorf("CRLF:\n %+v\nLF:\n %+v", project(cr), project(lf))
	}
}

// TestCRLFVarFile: heredocs in a -var-file with CRLF line ends lose their
// "\r" too.
func TestCRLFVarFile(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "vars.hcl")
	if err := os.WriteFile(vf, []byte(crlf("cmd = <<EOF\nmake all\nEOF\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "variable \"cmd\" {}\nwave \"w\" {}\nlot \"a\" {\n  run = var.cmd\n}\n"
	cfg, diags := NewLoader().LoadBytes([]byte(src), filepath.Join(dir, "wave.hcl"), Options{VarFiles: []string{vf}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := cfg.Lot("a").Run; got != "make all\n" {
		t.Errorf("run = %q", got)
	}
}

// TestCRLFDiagnostics: a diagnostic in a CRLF file points at the same line
// and columns as in the LF file, and its snippet (from Loader.Files) holds
// the right text.
func TestCRLFDiagnostics(t *testing.T) {
	src := "wave \"w\" {}\n\nlot \"a\" {\n  run = \"true\"\n  modle = \"opus\"\n}\n"
	name := filepath.Join(t.TempDir(), "wave.hcl")
	_, lfDiags := NewLoader().LoadBytes([]byte(src), name, Options{})
	l := NewLoader()
	_, crDiags := l.LoadBytes([]byte(crlf(src)), name, Options{})
	if len(lfDiags) != 1 || len(crDiags) != 1 {
		t.Fatalf("LF %v, CRLF %v", lfDiags, crDiags)
	}
	lr, cr := lfDiags[0].Subject, crDiags[0].Subject
	if lr.Start.Line != cr.Start.Line || lr.Start.Column != cr.Start.Column || lr.End.Line != cr.End.Line || lr.End.Column != cr.End.Column {
		t.Errorf("LF %v, CRLF %v", lr, cr)
	}
	f := l.Files()[name]
	if got := string(cr.SliceBytes(f.Bytes)); got != "modle" {
		t.Errorf("the range covers %q in the loader's source", got)
	}
	var out strings.Builder
	w := hcl.NewDiagnosticTextWriter(&out, l.Files(), 80, false)
	if err := w.WriteDiagnostics(crDiags); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `5:   modle = "opus"`) || strings.Contains(out.String(), "\r") {
		t.Errorf("snippet:\n%s", out.String())
	}
}

// TestCommandLineEnds: a run or test read with file() from a CRLF file runs
// like the LF one; a brief read from a CRLF file is kept byte for byte.
func TestCommandLineEnds(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"x.sh": crlf("ls wave.hcl\necho ok\n"), "brief.md": crlf("Line one.\nLine two.\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := "wave \"w\" {}\nrepo \"api\" {\n  path = \".\"\n  test = file(\"x.sh\")\n}\n" +
		"lot \"a\" {\n  run = file(\"x.sh\")\n}\nlot \"b\" {\n  repo = repo.api\n  brief = file(\"brief.md\")\n}\n"
	cfg, diags := NewLoader().LoadBytes([]byte(src), filepath.Join(dir, "wave.hcl"), Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := cfg.Lot("a").Run; got != "ls wave.hcl\necho ok\n" {
		t.Errorf("run = %q", got)
	}
	if got := cfg.Repo("api").Test; got != "ls wave.hcl\necho ok\n" {
		t.Errorf("test = %q", got)
	}
	if got := cfg.Lot("b").Brief; got != "Line one.\r\nLine two.\r\n" {
		t.Errorf("brief = %q", got)
	}
}

// TestLongCommandWarning: a run or test too long for one argument of
// /bin/sh -c is a warning on its value; one byte shorter is not.
func TestLongCommandWarning(t *testing.T) {
	dir := t.TempDir()
	for name, n := range map[string]int{"ok.sh": MaxArgBytes - 1, "long.sh": MaxArgBytes} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(":"+strings.Repeat(" ", n-1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := "wave \"w\" {}\nrepo \"api\" {\n  path = \".\"\n  test = file(\"long.sh\")\n}\n" +
		"lot \"ok\" {\n  run = file(\"ok.sh\")\n}\nlot \"gen\" {\n  run = file(\"long.sh\")\n}\n"
	_, diags := NewLoader().LoadBytes([]byte(src), filepath.Join(dir, "wave.hcl"), Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(diags) != 2 {
		t.Fatalf("want 2 warnings, got %v", diags)
	}
	for i, want := range []struct {
		detail string
		line   int
	}{{`Repo "api"'s test command is 131072 bytes`, 4}, {`Lot "gen"'s run command is 131072 bytes`, 10}} {
		d := diags[i]
		if d.Severity != hcl.DiagWarning || d.Summary != "Command too long to run" || !strings.Contains(d.Detail, want.detail) ||
			!strings.Contains(d.Detail, "Put the command in a script file") || d.Subject == nil || d.Subject.Start.Line != want.line {
			t.Errorf("diagnostic %d: %+v, want %q at line %d", i, d, want.detail, want.line)
		}
	}
	if CommandTooLong(strings.Repeat("x", MaxArgBytes-1)) || !CommandTooLong(strings.Repeat("x", MaxArgBytes)) {
		t.Error("CommandTooLong: wrong boundary")
	}
}
