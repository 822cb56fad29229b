package state

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chainWorld is a store killed mid-run: lots a and b, a done, b queued,
// the journal holding their records.
func chainWorld(t *testing.T) (path string, journal []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "w.state.json")
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.UpdateWave(func(st *State) { st.Wave, st.Lineage, st.Status = "w", "lin", WaveRunning }))
	must(s.UpdateLot("a", func(l *Lot) { l.Status, l.IntegratedSHA = LotDone, "aaaaaaaaaaaa" }))
	must(s.UpdateLot("b", func(l *Lot) { l.Status = LotQueued }))
	// No Close: cadence was killed.
	journal, err = os.ReadFile(path + JournalSuffix)
	if err != nil {
		t.Fatal(err)
	}
	return path, journal
}

// TestJournalForgedRecordRefused is the attack of a step that appends to
// the journal a copy of lot a's done record onto lot b, then kills
// cadence: the next load must refuse the journal, not replay the record.
func TestJournalForgedRecordRefused(t *testing.T) {
	path, journal := chainWorld(t)
	lines := bytes.Split(bytes.TrimSpace(journal), []byte("\n"))
	forged := bytes.Replace(lines[1], []byte(`"lot":"a"`), []byte(`"lot":"b"`), 1)
	forged = bytes.Replace(forged, []byte(`"serial":2`), []byte(`"serial":4`), 1)
	for name, j := range map[string][]byte{
		"appended":  append(append([]byte{}, journal...), append(forged, '\n')...),
		"edited":    bytes.Replace(journal, []byte(`"status":"queued"`), []byte(`"status":"done"`), 1),
		"reordered": append(bytes.Join([][]byte{lines[0], lines[2], lines[1]}, []byte("\n")), '\n'),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path+JournalSuffix, j, 0o600); err != nil {
				t.Fatal(err)
			}
			st, _, err := Read(path)
			if err == nil {
				t.Fatalf("the %s journal was replayed: lot b %s", name, st.Lots["b"].Status)
			}
			if !errors.Is(err, ErrJournalForged) || !strings.Contains(err.Error(), "move it away") {
				t.Errorf("error does not say what to do: %v", err)
			}
			if _, err := OpenStore(path); err == nil {
				t.Error("OpenStore took the journal")
			}
		})
	}
	// The journal as cadence wrote it still loads.
	if err := os.WriteFile(path+JournalSuffix, journal, 0o600); err != nil {
		t.Fatal(err)
	}
	st, _, err := Read(path)
	if err != nil || st.Lots["a"].Status != LotDone || st.Lots["b"].Status != LotQueued {
		t.Fatalf("the journal as written: %v", err)
	}
}

// TestJournalWithoutDigestsLoads checks that a state and journal written
// before records carried digests still load.
func TestJournalWithoutDigestsLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.state.json")
	if err := os.WriteFile(path, []byte(`{"format_version":1,"lineage":"lin","serial":1,"wave":"w","wave_digest":"","status":"running","consumed":{"counted":0,"cache_read":0,"cost_micro_usd":0},"updated":"2024-01-01T00:00:00Z","lots":{}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+JournalSuffix, []byte(`{"serial":2,"lot":"a","value":{"status":"done"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _, err := Read(path)
	if err != nil || st.Lots["a"] == nil || st.Lots["a"].Status != LotDone {
		t.Fatalf("old journal: %v", err)
	}
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateLot("b", func(l *Lot) { l.Status = LotRunning }); err != nil {
		t.Fatal(err)
	}
	// From now on the journal is chained: an unchained record is refused.
	f, err := os.OpenFile(path+JournalSuffix, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"serial":9,"lot":"b","value":{"status":"done"}}` + "\n")
	f.Close()
	if _, _, err := Read(path); !errors.Is(err, ErrJournalForged) {
		t.Fatalf("an unchained record after a chained state: %v", err)
	}
}
