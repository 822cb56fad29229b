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

// TestPinnedVersions: the cadence and agent versions are optional fields of
// format 1: a state written before them reads, and they survive a write,
// a read and the journal.
func TestPinnedVersions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.state.json")
	old := `{"format_version":1,"lineage":"l","serial":1,"wave":"w","wave_digest":"","status":"done","consumed":{"counted":0,"cache_read":0,"cost_micro_usd":0},"updated":"2026-01-01T00:00:00Z","lots":{"a":{"status":"done"}}}`
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _, err := Read(p)
	if err != nil {
		t.Fatalf("a state without the versions: %v", err)
	}
	if st.CadenceVersion != "" || st.AgentVersion != "" {
		t.Errorf("versions of an old state: %q %q", st.CadenceVersion, st.AgentVersion)
	}
	st.CadenceVersion, st.AgentVersion = "v1.2.3", "2.1.3 (Claude Code)"
	if err := Write(p, st); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), `"cadence_version": "v1.2.3"`) || !strings.Contains(string(b), `"agent_version": "2.1.3 (Claude Code)"`) {
		t.Errorf("written state:\n%s", b)
	}
	s, err := OpenStore(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateWave(func(st *State) { st.CadenceVersion = "v1.2.4" }); err != nil {
		t.Fatal(err)
	}
	// Read while the journal holds the change (a killed apply).
	got, _, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.CadenceVersion != "v1.2.4" || got.AgentVersion != "2.1.3 (Claude Code)" {
		t.Errorf("after the journal: %q %q", got.CadenceVersion, got.AgentVersion)
	}
	s.Close()
}

// TestOtherFormatNamesItsCadence: a state of another format is refused
// with the cadence that wrote it when the file says, else with the format
// this cadence reads.
func TestOtherFormatNamesItsCadence(t *testing.T) {
	for in, want := range map[string]string{
		`{"format_version":2,"cadence_version":"v2.0.0","lots":{}}`: `format_version 2; this cadence reads format_version 1 only: the file was written by cadence "v2.0.0", which reads it`,
		`{"format_version":2,"lots":{}}`:                            `format_version 2; this cadence reads format_version 1 only: the file was written by a newer cadence, which reads it`,
		`{"format_version":0,"cadence_version":5}`:                  `format_version 0; this cadence reads format_version 1 only`,
	} {
		_, err := Decode([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("Decode(%s) = %v, want %s", in, err, want)
		}
	}
}

func TestClipVersion(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	for in, want := range map[string]string{
		" 2.1.3 (Claude Code)\n":     "2.1.3 (Claude Code)",
		"2.1.3\nmore lines\n":        "2.1.3",
		long:                         strings.Repeat("é", 128),
		"x" + long[:MaxVersionBytes]: "x" + strings.Repeat("é", 127),
	} {
		got := ClipVersion(in)
		if got != want || len(got) > MaxVersionBytes {
			t.Errorf("ClipVersion(%.20q…) = %.20q… (%d bytes), want %.20q…", in, got, len(got), want)
		}
	}
	st := &State{Lots: map[string]*Lot{}, AgentVersion: strings.Repeat("x", MaxVersionBytes+1)}
	if err := Validate(st); err == nil || !strings.Contains(err.Error(), "at most 256 bytes") {
		t.Errorf("a long agent_version: %v", err)
	}
}
