package archtest

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSupervisorImportsOnlyProc fails when cmd/cadence-supervisor, the
// program cadence starts for each step, depends on a cadence package other
// than internal/proc: each would add its initialisers to every step's start
// (docs/running.md, "Signals").
func TestSupervisorImportsOnlyProc(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"cmd/cadence-supervisor").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, pkg := range strings.Fields(string(out)) {
		n++
		if strings.HasPrefix(pkg, module) && pkg != module+"internal/proc" && pkg != module+"cmd/cadence-supervisor" {
			t.Errorf("cmd/cadence-supervisor depends on %s", pkg)
		}
		if pkg == "os/user" || pkg == "net" || pkg == "runtime/cgo" {
			t.Errorf("cmd/cadence-supervisor depends on %s", pkg)
		}
	}
	if n < 10 {
		t.Fatalf("go list listed only %d packages", n)
	}
}

// TestBinariesStatic builds cadence and cadence-supervisor as
// docs/development.md says (CGO_ENABLED=0) and fails when either is not a
// static executable: one with an ELF interpreter or a needed shared
// library, or not built with CGO_ENABLED=0.
func TestBinariesStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks Linux ELF binaries")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", dir+"/", "../../cmd/cadence", "../../cmd/cadence-supervisor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	for _, name := range []string{"cadence", "cadence-supervisor"} {
		if why := notStatic(filepath.Join(dir, name)); why != "" {
			t.Errorf("%s: %s", name, why)
		}
	}
}

// notStatic says why the executable at path is not static, or "".
func notStatic(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "has an ELF interpreter (dynamically linked)"
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		return "needs shared libraries " + strings.Join(libs, ", ")
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" && s.Value != "0" {
			return "built with CGO_ENABLED=" + s.Value
		}
	}
	return ""
}

// TestNotStatic checks the detector on the dynamically linked build that
// cgo gives (skipped where there is no C compiler).
func TestNotStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks Linux ELF binaries")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler for a cgo build")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"os/user\"\n\nfunc main() { _, _ = user.Current() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "dyn"), src)
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "GO111MODULE=off")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	if notStatic(filepath.Join(dir, "dyn")) == "" {
		t.Error("a cgo build of os/user passed for static")
	}
}
