package diskspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 38 << 20: "38 MiB", 5 << 40: "5 TiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFreeOfAMissingPathIsItsParents(t *testing.T) {
	dir := t.TempDir()
	free, mount, err := Free(filepath.Join(dir, "not", "yet"))
	if err != nil || mount == "" || !strings.HasPrefix(dir, mount) {
		t.Fatalf("Free = %d, %q, %v; want the mount of %s", free, mount, err, dir)
	}
}

func TestFullNamesThePathTheErrorAndTheFreeSpace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "0-run.log")
	err := fmt.Errorf("write step log: %w", &fs.PathError{Op: "write", Path: p, Err: syscall.ENOSPC})
	fe := Full(err, "elsewhere")
	if fe == nil || fe.Path != p || fe.Mount == "" {
		t.Fatalf("Full = %+v", fe)
	}
	want := "disk full: " + p + ": no space left on device ("
	if !strings.HasPrefix(fe.Error(), want) || !strings.HasSuffix(fe.Error(), " free on "+fe.Mount+")") {
		t.Errorf("Error() = %q, want %q… free on %s)", fe.Error(), want, fe.Mount)
	}
	if !errors.Is(fe, syscall.ENOSPC) {
		t.Error("a FullError does not unwrap to ENOSPC")
	}
	if Full(os.ErrPermission, p) != nil {
		t.Error("a permission error is not a full disk")
	}
	if got := Full(syscall.EDQUOT, p); got == nil || got.Path != p {
		t.Errorf("Full(EDQUOT) = %+v, want one at %s", got, p)
	}
}

func TestCheckWarnsAndRefusesOncePerFileSystem(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	free, _, err := Free(a)
	if err != nil {
		t.Fatal(err)
	}
	places := []Place{{"the wave's folder", a}, {"CADENCE_HOME", b}}
	if w, r := Check(places, 1, 1); len(w)+len(r) != 0 {
		t.Fatalf("1 byte thresholds: warns %v, refused %v", w, r)
	}
	w, r := Check(places, free+(1<<40), 1)
	if len(w) != 1 || len(r) != 0 || len(w[0].Names) != 2 {
		t.Fatalf("warn above free: warns %v, refused %v; want one warning naming both places", w, r)
	}
	_, r = Check(places, 0, free+(1<<40))
	if len(r) != 1 || !strings.Contains(r[0].String(), "the wave's folder, CADENCE_HOME") {
		t.Fatalf("floor above free: refused %v", r)
	}
	if w, r := Check(places, 0, 0); len(w)+len(r) != 0 {
		t.Fatalf("0 thresholds check nothing: warns %v, refused %v", w, r)
	}
}
