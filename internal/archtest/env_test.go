package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// envReaders are the functions that read the process environment, by
// import path. Only internal/cli calls them (and imports os/signal); every
// other package gets what it needs passed down (docs/architecture.md,
// "Import direction").
// os.UserHomeDir and os.TempDir are fine.
var envReaders = map[string]map[string]bool{
	"os":      {"Getenv": true, "LookupEnv": true, "Environ": true, "ExpandEnv": true},
	"syscall": {"Getenv": true, "Environ": true},
}

// envAllowed are the folders (with their subfolders) whose non-test code
// may read the environment: the CLI, and test support that runs as a fake
// agent or a test helper process, and the supervisor's own main, which
// hands its environment to the step (cmd/cadence-supervisor).
var envAllowed = []string{"internal/cli", "cmd/cadence-supervisor", "internal/fakeapi", "internal/testagent", "gitint/gittest", "bench"}

// envUses returns the environment reads and signal imports in a parsed
// file, as "file:line: what".
func envUses(fset *token.FileSet, f *ast.File) []string {
	var out []string
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if path == "os/signal" {
			out = append(out, fset.Position(imp.Pos()).String()+": imports os/signal")
		}
		if envReaders[path] == nil {
			continue
		}
		name := path
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || x.Obj != nil { // a local variable, not a package
			return true
		}
		if path, ok := names[x.Name]; ok && envReaders[path][sel.Sel.Name] {
			out = append(out, fset.Position(sel.Pos()).String()+": "+path+"."+sel.Sel.Name)
		}
		return true
	})
	return out
}

// TestEnvironmentOnlyInCLI fails when non-test code outside internal/cli
// (and the allowed test support) reads the environment or handles signals.
func TestEnvironmentOnlyInCLI(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	var bad []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || base == "vendor") {
				return filepath.SkipDir
			}
			for _, a := range envAllowed {
				if rel == a {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		for _, u := range envUses(fset, f) {
			bad = append(bad, strings.TrimPrefix(u, root+"/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("found only %d Go files under %s", files, root)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: only internal/cli reads the environment or signals; pass it down", b)
	}
}

// TestEnvUses checks the detector on a sample: aliases, syscall, os/signal,
// and a local variable named os that is not the package.
func TestEnvUses(t *testing.T) {
	src := `package p

import (
	"os"
	sys "syscall"
	"os/signal"
)

func f() {
	_ = os.Getenv("A")
	_, _ = os.LookupEnv("B")
	_ = os.Environ()
	_, _ = sys.Getenv("C")
	_, _ = os.UserHomeDir()
	_ = os.TempDir()
	signal.Ignore()
}

func g(os struct{ Getenv string }) string { return os.Getenv }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(envUses(fset, f), "\n")
	want := strings.Join([]string{
		"p.go:6:2: imports os/signal",
		"p.go:10:6: os.Getenv",
		"p.go:11:9: os.LookupEnv",
		"p.go:12:6: os.Environ",
		"p.go:13:9: syscall.Getenv",
	}, "\n")
	if got != want {
		t.Errorf("envUses =\n%s\nwant\n%s", got, want)
	}
}
