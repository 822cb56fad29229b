package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/planner/render"
)

func TestIsWaveFile(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"wave.hcl", `wave "w" {}`, true},
		{"lots.hcl", `lot "a" { run = "true" }`, true}, // a wave file missing its wave block: an error, not skipped
		{"broken.hcl", `wave "w" {`, true},             // not valid HCL: an error, not skipped
		{".terraform.lock.hcl", `provider "registry.terraform.io/hashicorp/aws" { version = "5.0.0" }`, false},
		{"job.nomad.hcl", "job \"web\" {\n  group \"g\" {}\n}", false},
		{"main.pkr.hcl", "variable \"x\" {}\nlocals { a = 1 }\nbuild { sources = [] }", false},
		{"wave.vars.hcl", `model = "opus"`, false},
		{"empty.hcl", ``, false},
		{"wave.hcl.json", `{"wave": {"w": {}}}`, true},
		{"lots.hcl.json", `{"lot": {"a": {"run": "true"}}}`, true},
		{"vars.hcl.json", `{"variable": {"x": {}}}`, false},
		{"broken.hcl.json", `{"wave": `, true},
	} {
		got, why := isWaveFile(c.name, []byte(c.src))
		if got != c.want {
			t.Errorf("isWaveFile(%s): got %v, want %v", c.name, got, c.want)
		}
		if !got && !strings.HasPrefix(why, "not a wave file (") {
			t.Errorf("isWaveFile(%s): reason %q", c.name, why)
		}
	}
}

func TestCodeFence(t *testing.T) {
	got := codeFence("a ``` b ```` c\n\x1b[31mred\tx\x07")
	want := "`````text\na ``` b ```` c\n␛[31mred\tx␇\n`````\n"
	if got != want {
		t.Errorf("codeFence: got %q, want %q", got, want)
	}
	if got := codeFence("plain"); got != "```text\nplain\n```\n" {
		t.Errorf("codeFence: got %q", got)
	}
	if got, want := mdText("x@y <b>|`\n\\|"), "x@&#8203;y &lt;b&gt;\\|\\`␊\\\\\\|"; got != want {
		t.Errorf("mdText: got %q, want %q", got, want)
	}
}

// TestPlanMarkdownOfAHugeCycleBounded: the Markdown of an invalid wave of
// one 20,000-lot cycle stays under render.MarkdownLimit.
func TestPlanMarkdownOfAHugeCycleBounded(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("wave \"w\" {}\n")
	const n = 20000
	for i := range n {
		fmt.Fprintf(&b, "lot \"l%d\" {\n  run = \"true\"\n  depends_on = [lot.l%d]\n}\n", i, (i+1)%n)
	}
	file := filepath.Join(dir, "wave.hcl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	e, stdout, _ := testEnv(map[string]string{"CADENCE_HOME": filepath.Join(dir, "home")}, false)
	if code := runPlan(e, []string{"-format", "markdown", file}); code != ExitError {
		t.Fatalf("exit %d, want %d", code, ExitError)
	}
	out := stdout.String()
	if len(out) >= render.MarkdownLimit {
		t.Errorf("%d bytes of Markdown, want under %d", len(out), render.MarkdownLimit)
	}
	if !strings.Contains(out, "and 19,980 more edges") {
		t.Errorf("no \"and 19,980 more edges\" in:\n%.2000s", out)
	}
}

// TestPlanMarkdownOfManyDiagnosticsBounded: the Markdown of an invalid
// wave whose 50 shown diagnostics are long (two-lot cycles of 200-byte lot
// ids) is cut at a line under render.MarkdownLimit, saying so.
func TestPlanMarkdownOfManyDiagnosticsBounded(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("wave \"w\" {}\n")
	long := strings.Repeat("x", 200)
	for i := range 60 {
		fmt.Fprintf(&b, "lot \"a%s%d\" {\n  run = \"true\"\n  depends_on = [lot.b%s%d]\n}\n", long, i, long, i)
		fmt.Fprintf(&b, "lot \"b%s%d\" {\n  run = \"true\"\n  depends_on = [lot.a%s%d]\n}\n", long, i, long, i)
	}
	file := filepath.Join(dir, "wave.hcl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	e, stdout, _ := testEnv(map[string]string{"CADENCE_HOME": filepath.Join(dir, "home")}, false)
	if code := runPlan(e, []string{"-format", "markdown", file}); code != ExitError {
		t.Fatalf("exit %d, want %d", code, ExitError)
	}
	out := stdout.String()
	if len(out) >= render.MarkdownLimit {
		t.Errorf("%d bytes of Markdown, want under %d", len(out), render.MarkdownLimit)
	}
	if !strings.Contains(out, "cut here") || !strings.HasSuffix(strings.TrimSpace(out), "`") {
		t.Errorf("no cut note, or no closing fence:\n%s", out[max(0, len(out)-500):])
	}
}

// TestPlanParsesEachFileOnce: plan reads and parses each named file once,
// to tell whether it is a wave file, and plans that parse: the files are
// gone from the disk after waveArgs, and both waves are still planned.
func TestPlanParsesEachFileOnce(t *testing.T) {
	dir := t.TempDir()
	waves := filepath.Join(dir, "waves")
	if err := os.Mkdir(waves, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"a.hcl":               "wave \"a\" {}\nlot \"one\" {\n  run = \"true\"\n}\n",
		"b.hcl":               "wave \"b\" {}\nlot \"two\" {\n  run = \"true\"\n}\n",
		".terraform.lock.hcl": `provider "p" { version = "1" }`,
	} {
		if err := os.WriteFile(filepath.Join(waves, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args, skips, err := waveArgs([]string{waves})
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 2 || len(skips) != 1 {
		t.Fatalf("waveArgs: %d files, %d skipped; want 2 and 1", len(args), len(skips))
	}
	for _, a := range args {
		if a.read == nil || a.read.file == nil {
			t.Fatalf("waveArgs kept no parse of %s", a.file)
		}
		if err := os.Remove(a.file); err != nil {
			t.Fatal(err)
		}
	}
	e, stdout, stderr := testEnv(map[string]string{"CADENCE_HOME": filepath.Join(dir, "home")}, false)
	f := newPlanFlags(e, "plan", "", "")
	f.offline = true
	if code := f.planMany(e, args, skips, "text", e.planRenderers()["text"], false, ""); code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, want := range []string{"one", "two"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no lot %s in the plans:\n%s", want, stdout)
		}
	}
}
