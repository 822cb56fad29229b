package state

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStoreJournalAndReplay(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.state.json")
	s, err := OpenStore(p)
	if err != nil {
		t.Fatal(err)
	}
	s.UpdateWave(func(st *State) { st.Wave, st.Lineage, st.Status = "w", "lin", WaveRunning })
	s.UpdateLot("a", func(l *Lot) { l.Status = LotRunning })
	s.UpdateLot("a", func(l *Lot) {
		l.Steps = append(l.Steps, Step{Kind: StepRun, Status: StepOK, Started: time.Unix(1, 0).UTC()})
		l.Status = LotDone
	})
	s.UpdateLot("b", func(l *Lot) { l.Status = LotRunning })
	// No Close: as if cadence were killed. The state file is valid JSON and
	// Read replays the journal.
	st, _, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Wave != "w" || st.Lots["a"].Status != LotDone || len(st.Lots["a"].Steps) != 1 || st.Lots["b"].Status != LotRunning || st.Serial != 4 {
		t.Fatalf("replayed %+v a=%+v", st, st.Lots["a"])
	}
	// A torn last record (killed mid-append) is ignored.
	f, _ := os.OpenFile(p+JournalSuffix, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"serial":5,"lot":"b","value":{"status":"do`)
	f.Close()
	st, _, err = Read(p)
	if err != nil || st.Lots["b"].Status != LotRunning {
		t.Fatalf("torn record: %v %+v", err, st)
	}
	// Reopening folds the journal in; Close removes it.
	s2, err := OpenStore(p)
	if err != nil {
		t.Fatal(err)
	}
	s2.UpdateLot("b", func(l *Lot) { l.Status = LotDone })
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p + JournalSuffix); !os.IsNotExist(err) {
		t.Errorf("journal left after Close: %v", err)
	}
	st, _, _ = Read(p)
	if st.Lots["b"].Status != LotDone || st.Lots["a"].Status != LotDone || st.Serial != 5 {
		t.Errorf("after close: %+v", st)
	}
}

func TestStoreSkipsRecordsAlreadyInSnapshot(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.state.json")
	Write(p, &State{FormatVersion: FormatVersion, Serial: 10, Lots: map[string]*Lot{"a": {Status: LotDone}}})
	os.WriteFile(p+JournalSuffix, []byte(`{"serial":9,"lot":"a","value":{"status":"running"}}`+"\n"+`{"serial":11,"lot":"b","value":{"status":"queued"}}`+"\n"), 0o644)
	st, _, err := Read(p)
	if err != nil || st.Lots["a"].Status != LotDone || st.Lots["b"] == nil || st.Serial != 11 {
		t.Fatalf("%v %+v", err, st)
	}
}

func TestStoreCompacts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.state.json")
	s, _ := OpenStore(p)
	for i := 0; i < 3000; i++ {
		id := fmt.Sprintf("L%d", i%300)
		s.UpdateLot(id, func(l *Lot) { l.Warnings = append(l.Warnings[:0], fmt.Sprint("transition ", i)) })
	}
	fi, _ := os.Stat(p + JournalSuffix)
	if fi.Size() > minCompact+4096 {
		t.Errorf("journal grew to %d bytes without compaction", fi.Size())
	}
	st, _, _ := Read(p)
	if len(st.Lots) != 300 || st.Lots["L299"].Warnings[0] != "transition 2999" {
		t.Errorf("after compaction: %d lots, %v", len(st.Lots), st.Lots["L299"])
	}
	s.Close()
}

// benchTransitions runs n lots through four transitions each, as apply does.
func benchTransitions(b *testing.B, n int) {
	for i := 0; i < b.N; i++ {
		p := filepath.Join(b.TempDir(), "w.state.json")
		s, err := OpenStore(p)
		if err != nil {
			b.Fatal(err)
		}
		for l := 0; l < n; l++ {
			id := fmt.Sprintf("L%05d", l)
			s.UpdateLot(id, func(x *Lot) { x.Status = LotRunning })
			s.UpdateLot(id, func(x *Lot) { x.Steps = append(x.Steps, Step{Kind: StepRun, Status: StepRunning, PID: 42}) })
			s.UpdateLot(id, func(x *Lot) { x.Steps[0].Status = StepOK })
			s.UpdateLot(id, func(x *Lot) { x.Status = LotDone })
		}
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n*4), "µs/transition")
}

// BenchmarkStore500 and 5000: the cost per transition must not grow with the
// number of lots (linear total).
func BenchmarkStore500(b *testing.B)  { benchTransitions(b, 500) }
func BenchmarkStore5000(b *testing.B) { benchTransitions(b, 5000) }
