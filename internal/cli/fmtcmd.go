package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/rogpeppe/go-internal/diff"
)

func runFmt(e *env, args []string) ExitCode {
	fs := newFlags(e, "fmt", "[FILE|DIR...]", "Rewrite wave files (HCL native syntax) in canonical format. A folder (the current one\nwhen none is named) means its *.hcl files that are wave files (-recursive: and its\nsubfolders'); a file named is formatted whatever it holds. Files with syntax errors\nare reported and left untouched.")
	check := fs.Bool("check", false, "change nothing; exit 1 and list the files that are not canonical")
	showDiff := fs.Bool("diff", false, "print the changes as a unified diff")
	recursive := fs.Bool("recursive", false, "also format the wave files in subfolders (not those whose name starts with a dot)")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if len(pos) == 0 {
		pos = []string{"."}
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
		found, err := fmtFolder(p, *recursive)
		if err != nil {
			fmt.Fprintf(e.stderr, "cadence fmt: %v\n", err)
			return ExitError
		}
		files = append(files, found...)
	}
	status := ExitOK
	out := fmtOutput{FormatVersion: outputFormatVersion, Check: *check, Files: []fmtFile{}}
	for _, name := range files {
		res := fmtFile{Path: name}
		fail := func(err string) {
			res.Error, status = err, ExitError
			out.Files = append(out.Files, res)
		}
		if strings.HasSuffix(name, ".json") {
			if !fs.json {
				fmt.Fprintf(e.stderr, "cadence fmt: %s: JSON syntax is not formatted (use a JSON formatter)\n", name)
			}
			fail("JSON syntax is not formatted (use a JSON formatter)")
			continue
		}
		src, err := spec.ReadWaveFile(name) // bounded: no FIFO, device or link out of the tree
		if err != nil {
			if !fs.json {
				fmt.Fprintf(e.stderr, "cadence fmt: %v\n", err)
			}
			fail(err.Error())
			continue
		}
		f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		if diags.HasErrors() {
			// the diagnostics go to the standard error, -json or not
			e.writeDiags(e.stderr, diags, func() map[string]*hcl.File { return map[string]*hcl.File{name: f} }, false)
			if !fs.json {
				fmt.Fprintf(e.stderr, "cadence fmt: %s has syntax errors; left unchanged\n", name)
			}
			fail("syntax errors; left unchanged")
			continue
		}
		formatted := hclwrite.Format(src)
		if bytes.Equal(formatted, src) {
			out.Files = append(out.Files, res)
			continue
		}
		res.Changed = true
		if *showDiff {
			d := diff.Diff(name, src, name+" (formatted)", formatted)
			if fs.json {
				res.Diff = string(d)
			} else {
				e.stdout.Write(d)
			}
		}
		if *check {
			if !fs.json {
				fmt.Fprintln(e.stdout, name)
			}
			status = ExitError
			out.Files = append(out.Files, res)
			continue
		}
		if err := writeKeepMode(name, formatted); err != nil {
			if !fs.json {
				fmt.Fprintf(e.stderr, "cadence fmt: %v\n", err)
			}
			fail(err.Error())
			continue
		}
		res.Written = true
		out.Files = append(out.Files, res)
		if !*showDiff && !fs.json {
			fmt.Fprintln(e.stdout, name)
		}
	}
	if fs.json {
		if err := writeJSON(e.stdout, out); err != nil {
			fmt.Fprintf(e.stderr, "cadence fmt: %v\n", err)
			return ExitError
		}
	}
	return status
}

// fmtOutput is cadence fmt -json: every file fmt looked at.
type fmtOutput struct {
	FormatVersion int `json:"format_version"`
	// Check is -check: nothing was written.
	Check bool      `json:"check"`
	Files []fmtFile `json:"files"`
}

// fmtFile is one file of fmt -json.
type fmtFile struct {
	Path string `json:"path"`
	// Changed says the file was not in canonical format: fmt rewrote it,
	// or would (-check); Written that it was rewritten.
	Changed bool `json:"changed"`
	Written bool `json:"written"`
	// Diff is the unified diff of the change (-diff; "" otherwise).
	Diff string `json:"diff,omitempty"`
	// Error says why the file was left unchanged: syntax errors (given as
	// diagnostics on the standard error), JSON syntax, an I/O error.
	Error string `json:"error,omitempty"`
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

// fmtFolder returns the wave files (isWaveFile: a top-level wave or lot
// block, or a file that does not parse) among the *.hcl files of dir, and,
// when recursive, of its subfolders but those whose name starts with a dot
// (.git, .cadence, .terraform), in lexical order. Other HCL files (a
// Terraform lock file, a Nomad job) are not cadence's to rewrite.
func fmtFolder(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && (!recursive || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".hcl") {
			return nil
		}
		src, err := spec.ReadWaveFile(path)
		if err != nil {
			files = append(files, path) // reported when it is formatted
			return nil
		}
		if ok, _ := isWaveFile(path, src); ok {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}
