package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPathFor(t *testing.T) {
	for in, want := range map[string]string{
		"wave.hcl":             "wave.state.json",
		"dir/auth.hcl":         "dir/auth.state.json",
		"dir/nightly.hcl.json": "dir/nightly.state.json",
		"x.json":               "x.state.json",
	} {
		if got := PathFor(in); got != want {
			t.Errorf("PathFor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.state.json")
	if _, _, err := Read(p); !errors.Is(err, ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	yes := true
	s := &State{FormatVersion: FormatVersion, Lineage: "l", Serial: 3, Wave: "w", Status: WaveRunning,
		Lots: map[string]*Lot{"a": {Status: LotRunning, Steps: []Step{
			{Kind: StepReview, Status: StepOK, Conform: &yes, Started: time.Unix(0, 0).UTC(), Usage: Usage{Input: 10, CacheWrite: 5, CacheRead: 100, Output: 2}},
		}}}}
	if err := Write(p, s); err != nil {
		t.Fatal(err)
	}
	got, digest, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(digest, "sha256:") || got.Serial != 3 || *got.Lots["a"].Steps[0].Conform != true {
		t.Errorf("got %+v digest %q", got, digest)
	}
	if u := got.Lots["a"].Usage(); u.Counted() != 17 || u.CacheRead != 100 {
		t.Errorf("usage %+v", u)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
	os.WriteFile(p, []byte(`{"format_version": 2}`), 0o644)
	if _, _, err := Read(p); err == nil || !strings.Contains(err.Error(), "format_version 2") {
		t.Errorf("other version: %v", err)
	}
	os.WriteFile(p, []byte(`not json`), 0o644)
	if _, _, err := Read(p); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("bad JSON: %v", err)
	}
}
