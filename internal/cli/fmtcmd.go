package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/rogpeppe/go-internal/diff"
)

func runFmt(e *env, args []string) int {
	fs := newFlags(e, "fmt", "[FILE|DIR...]", "Rewrite wave files (HCL native syntax) in canonical format. A folder means its\n*.hcl files. Files with syntax errors are reported and left untouched.")
	check := fs.Bool("check", false, "change nothing; exit 1 and list the files that are not canonical")
	showDiff := fs.Bool("diff", false, "print the changes as a unified diff")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if len(pos) == 0 {
		pos = []string{"wave.hcl"}
	}
	var files []string
	for _, p := range pos {
		st, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(e.stderr, "cadence fmt: %v\n", err)
			return ExitError
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(p, "*.hcl"))
		sort.Strings(matches)
		files = append(files, matches...)
	}
	status := ExitOK
	for _, name := range files {
		if strings.HasSuffix(name, ".json") {
			fmt.Fprintf(e.stderr, "cadence fmt: %s: JSON syntax is not formatted (use a JSON formatter)\n", name)
			status = ExitError
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(e.stderr, "cadence fmt: %v\n", err)
			status = ExitError
			continue
		}
		f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		if diags.HasErrors() {
			e.writeDiags(e.stderr, diags, func() map[string]*hcl.File { return map[string]*hcl.File{name: f} }, false)
			fmt.Fprintf(e.stderr, "cadence fmt: %s has syntax errors; left unchanged\n", name)
			status = ExitError
			continue
		}
		out := hclwrite.Format(src)
		if bytes.Equal(out, src) {
			continue
		}
		if *showDiff {
			e.stdout.Write(diff.Diff(name, src, name+" (formatted)", out))
		}
		if *check {
			fmt.Fprintln(e.stdout, name)
			status = ExitError
			continue
		}
		if err := writeKeepMode(name, out); err != nil {
			fmt.Fprintf(e.stderr, "cadence fmt: %v\n", err)
			status = ExitError
			continue
		}
		if !*showDiff {
			fmt.Fprintln(e.stdout, name)
		}
	}
	return status
}

// writeKeepMode replaces a file's content, keeping its permissions.
func writeKeepMode(name string, data []byte) error {
	st, err := os.Stat(name)
	if err != nil {
		return err
	}
	tmp := name + ".cadence-fmt"
	if err := os.WriteFile(tmp, data, st.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
