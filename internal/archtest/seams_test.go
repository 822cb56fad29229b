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

// leaves are packages that import no other cadence package: small helpers
// every layer may use.
var leaves = []string{"internal/ids"}

// TestLeafPackages fails when a leaf package imports a cadence package.
func TestLeafPackages(t *testing.T) {
	all := deps(t)
	for _, leaf := range leaves {
		ds, ok := all[leaf]
		if !ok {
			t.Errorf("%s: no such package", leaf)
		}
		if len(ds) > 0 {
			t.Errorf("%s imports %s: it must import no cadence package", leaf, strings.Join(ds, ", "))
		}
	}
}

// flockPackages are the import paths whose Flock function is flock(2).
var flockPackages = map[string]bool{"syscall": true, "golang.org/x/sys/unix": true}

// flockUses returns the file locking in a parsed file outside
// internal/flock, as "file:line: what": an import of github.com/gofrs/flock
// and calls of flock(2).
func flockUses(fset *token.FileSet, f *ast.File) []string {
	var out []string
	names := map[string]bool{} // local names of flockPackages
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if path == "github.com/gofrs/flock" {
			out = append(out, fset.Position(imp.Pos()).String()+": imports github.com/gofrs/flock")
		}
		if !flockPackages[path] {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = true
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Obj == nil && names[x.Name] && sel.Sel.Name == "Flock" {
			out = append(out, fset.Position(sel.Pos()).String()+": "+x.Name+".Flock")
		}
		return true
	})
	return out
}

// scanGoFiles parses every non-test Go file of the module outside the folders
// skip names (with their subfolders) and returns what check finds in them,
// as paths relative to the module's root.
func scanGoFiles(t *testing.T, skip []string, check func(*token.FileSet, *ast.File) []string) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	var found []string
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
			for _, s := range skip {
				if rel == s {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, u := range check(fset, f) {
			found = append(found, strings.TrimPrefix(u, root+"/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("found only %d Go files under %s", files, root)
	}
	sort.Strings(found)
	return found
}

// TestOnlyFlockLocks fails when non-test code outside internal/flock locks
// files itself: internal/flock is the one flock layer (named locks with a
// holder record, and flock.File for slot, registry and holds files).
func TestOnlyFlockLocks(t *testing.T) {
	for _, b := range scanGoFiles(t, []string{"internal/flock"}, flockUses) {
		t.Errorf("%s: only internal/flock locks files; use flock.Open or flock.TryAcquire", b)
	}
}

// TestFlockUses checks the detector on a sample: gofrs, aliases, x/sys/unix,
// and a Flock that is no flock(2).
func TestFlockUses(t *testing.T) {
	src := `package p

import (
	"syscall"
	sys "golang.org/x/sys/unix"
	gofrs "github.com/gofrs/flock"
	"example.com/other"
)

func f() {
	_ = syscall.Flock(0, syscall.LOCK_EX)
	_ = sys.Flock(0, sys.LOCK_SH)
	_ = other.Flock(0)
	_ = gofrs.New("x")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(flockUses(fset, f), "\n")
	want := strings.Join([]string{
		"p.go:6:2: imports github.com/gofrs/flock",
		"p.go:11:6: syscall.Flock",
		"p.go:12:6: sys.Flock",
	}, "\n")
	if got != want {
		t.Errorf("flockUses =\n%s\nwant\n%s", got, want)
	}
}

// testOnly are packages only tests import: no non-test package of the
// module depends on them.
var testOnly = []string{"internal/testutil"}

// TestTestOnlyPackages fails when non-test code imports a test-support
// package.
func TestTestOnlyPackages(t *testing.T) {
	all := deps(t)
	for _, only := range testOnly {
		if _, ok := all[only]; !ok {
			t.Errorf("%s: no such package", only)
		}
		for pkg, ds := range all {
			for _, d := range ds {
				if d == only && pkg != only {
					t.Errorf("%s imports %s (directly or not): only tests may", pkg, only)
				}
			}
		}
	}
}
