package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestCompletion drives shell completion through its protocol, as bash's
// `complete -C` runs it: COMP_LINE is the line, COMP_POINT the cursor, and
// the candidates come one per line on stdout. Commands, each command's
// flags, flag values, wave files and lot ids (of wave.hcl, of the file on
// the line, of the folder of -chdir).
func TestCompletion(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"wave.hcl":            "wave \"w\" {}\nlot \"alpha\" {\n  run = \"true\"\n}\nlot \"beta\" {\n  run = var.x\n}\n",
		"other.hcl.json":      `{"wave": {"o": {}}, "lot": {"json_lot": {"run": "true"}}}`,
		"notes.txt":           "not a wave file",
		"saved.plan":          "{}",
		"sub/wave.hcl":        "wave \"s\" {}\nlot \"in_sub\" {\n  run = \"true\"\n}\n",
		"sub/deeper/x.hcl":    "",
		"broken/wave.hcl":     "lot \"ok\" {\n  run = \"true\"\n}\nlot {{{\n",
		"sub/deeper/note.txt": "",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(dir)

	for _, tc := range []struct {
		line string
		// point is COMP_POINT (-1: the end of the line)
		point int
		want  []string
		// some: want is a subset of what is offered, not all of it
		some bool
	}{
		{line: "cadence ap", point: -1, want: []string{"apply"}},
		{line: "cadence ", point: -1, want: commandNames()},
		{line: "cadence -", point: -1, want: []string{"-chdir", "-help", "-log-level", "-no-color", "-version"}},
		{line: "cadence apply -lock", point: -1, want: []string{"-lock", "-lock-timeout"}},
		{line: "cadence apply -", point: -1, want: []string{"-auto-approve", "-lock-timeout", "-target", "-json", "-var-file"}, some: true},
		{line: "cadence status -w", point: -1, want: []string{"-watch"}},
		{line: "cadence plan -format ", point: -1, want: []string{"dot", "json", "markdown", "mermaid", "text"}},
		{line: "cadence graph -format m", point: -1, want: []string{"mermaid"}},
		{line: "cadence plan -log-level d", point: -1, want: []string{"debug"}},
		// wave files (and folders, to go down into) for FILE
		{line: "cadence plan ", point: -1, want: []string{"./", "broken/", "other.hcl.json", "sub/", "wave.hcl"}},
		{line: "cadence plan o", point: -1, want: []string{"other.hcl.json"}},
		{line: "cadence plan sub/", point: -1, want: []string{"sub/", "sub/deeper/", "sub/wave.hcl"}},
		{line: "cadence apply s", point: -1, want: []string{"saved.plan", "sub/", "sub/deeper/", "sub/wave.hcl"}},
		{line: "cadence show s", point: -1, want: []string{"saved.plan", "sub/"}},
		// plan takes several files and folders, validate one
		{line: "cadence plan wave.hcl ", point: -1, want: []string{"./", "broken/", "other.hcl.json", "sub/", "wave.hcl"}},
		{line: "cadence validate wave.hcl ", point: -1, want: nil},
		// lot ids: of wave.hcl, of the file given first, after -target
		{line: "cadence logs ", point: -1, want: []string{"./", "alpha", "beta", "broken/", "other.hcl.json", "sub/", "wave.hcl"}},
		{line: "cadence logs al", point: -1, want: []string{"alpha"}},
		{line: "cadence logs other.hcl.json ", point: -1, want: []string{"json_lot"}},
		{line: "cadence answer -json wave.hcl b", point: -1, want: []string{"beta"}},
		{line: "cadence answer alpha ", point: -1, want: nil},
		{line: "cadence logs alpha ", point: -1, want: nil},
		{line: "cadence plan -target ", point: -1, want: []string{"alpha", "beta"}},
		{line: "cadence apply -var-file x.hcl -replace ", point: -1, want: []string{"alpha", "beta"}},
		{line: "cadence plan other.hcl.json -target ", point: -1, want: []string{"json_lot"}},
		{line: "cadence -chdir sub plan -target ", point: -1, want: []string{"in_sub"}},
		{line: "cadence -chdir=sub logs ", point: -1, want: []string{"./", "deeper/", "in_sub", "wave.hcl"}},
		{line: "cadence -chdir broken logs ", point: -1, want: []string{"./", "ok", "wave.hcl"}},
		// the cursor in the middle of the line
		{line: "cadence ap -auto-approve", point: len("cadence ap"), want: []string{"apply"}},
		{line: "cadence help st", point: -1, want: []string{"status", "stop"}},
		{line: "cadence completion ", point: -1, want: []string{"bash", "fish", "zsh"}},
	} {
		t.Run(tc.line, func(t *testing.T) {
			point := tc.point
			if point < 0 {
				point = len(tc.line)
			}
			t.Setenv("COMP_LINE", tc.line)
			t.Setenv("COMP_POINT", strconv.Itoa(point))
			var stdout, stderr bytes.Buffer
			// bash passes the command, the word and the word before.
			if code := Main([]string{"cadence", "x", "y"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			got := strings.Fields(stdout.String())
			sort.Strings(got)
			want := slices.Clone(tc.want)
			sort.Strings(want)
			if tc.some {
				for _, w := range want {
					if !slices.Contains(got, w) {
						t.Errorf("%q not offered: %v", w, got)
					}
				}
				return
			}
			if !slices.Equal(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
		t.Chdir(dir) // a -chdir of the line changed the folder
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("completion wrote into HOME: %v", entries)
	}
}

// TestCompletionScripts: completion SHELL prints the startup lines, with
// this binary's path, and writes nothing.
func TestCompletionScripts(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	bin, _ := os.Executable()
	for shell, want := range map[string]string{
		"bash": "complete -C " + bin + " cadence\n",
		"zsh":  "autoload -U +X bashcompinit && bashcompinit\ncomplete -o nospace -C " + bin + " cadence\n",
		"fish": "set -lx COMP_LINE (commandline -cp)",
	} {
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"completion", shell}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", shell, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("%s:\n%s\nwant %q", shell, stdout.String(), want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"completion", "tcsh"}, strings.NewReader(""), &stdout, &stderr); ExitCode(code) != ExitUsage || !strings.Contains(stderr.String(), `no shell "tcsh"`) {
		t.Errorf("tcsh: exit %d: %s", code, stderr.String())
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("completion wrote into HOME: %v", entries)
	}
	if got := shellQuote("/opt/my tools/cadence"); got != `'/opt/my tools/cadence'` {
		t.Errorf("quoted path: %s", got)
	}
}
