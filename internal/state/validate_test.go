package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A state file Read must refuse, with a clear error naming the file,
// whatever it holds; none may panic.
func TestReadRefusesBadStates(t *testing.T) {
	const head = `{"format_version":1,"lineage":"l","serial":1,"wave":"w","wave_digest":"","status":"done","consumed":{"counted":0,"cache_read":0,"cost_micro_usd":0},"updated":"2024-01-01T00:00:00Z",`
	for _, c := range []struct{ name, body, want string }{
		{"null lot", `"lots":{"a":null}}`, `lot "a" is null`},
		{"empty lot id", `"lots":{"":{"status":"done"}}}`, "empty id"},
		{"unknown lot status", `"lots":{"a":{"status":"exploded"}}}`, `status "exploded" is not a lot status`},
		{"missing lot status", `"lots":{"a":{}}}`, `status "" is not a lot status`},
		{"unknown step kind", `"lots":{"a":{"status":"queued","steps":[{"kind":"dance","status":"ok","started":"2024-01-01T00:00:00Z","usage":{"input":0,"cache_write":0,"cache_read":0,"output":0},"cost_micro_usd":0}]}}}`, `kind "dance"`},
		{"unknown step status", `"lots":{"a":{"status":"queued","steps":[{"kind":"run","status":"meh","started":"2024-01-01T00:00:00Z","usage":{"input":0,"cache_write":0,"cache_read":0,"output":0},"cost_micro_usd":0}]}}}`, `status "meh"`},
		{"bad severity", `"lots":{"a":{"status":"queued","findings":[{"severity":"huge","text":"x"}]}}}`, `severity "huge"`},
		{"negative usage", `"lots":{"a":{"status":"queued","steps":[{"kind":"run","status":"ok","started":"2024-01-01T00:00:00Z","usage":{"input":-1,"cache_write":0,"cache_read":0,"output":0},"cost_micro_usd":0}]}}}`, "negative"},
		{"negative dollar budget", `"budget_micro_usd":-5,"lots":{}}`, "budget_micro_usd"},
		{"integrating to no object id", `"lots":{"a":{"status":"running","integrating":{"repos":[{"repo":"app","base":"main","old":"0123456789abcdef0123456789abcdef01234567","new":"zzzz"}]}}}}`, `full object ids`},
		{"integrating without repos", `"lots":{"a":{"status":"running","integrating":{"repos":[]}}}}`, `integrating names no repository`},
		{"integrating without old", `"lots":{"a":{"status":"running","integrating":{"repos":[{"repo":"app","base":"main","old":"","new":"b"}]}}}}`, `needs repo, base, old and new`},
		{"also_commits without a repo name", `"lots":{"a":{"status":"queued","steps":[{"kind":"implement","status":"ok","started":"2024-01-01T00:00:00Z","usage":{"input":0,"cache_write":0,"cache_read":0,"output":0},"cost_micro_usd":0,"also_commits":{"":["x"]}}]}}}`, "empty repository name"},
		{"bad setup status", `"lots":{"a":{"status":"running","setup":{"status":"quota","started":"2024-01-01T00:00:00Z"}}}}`, `setup status "quota"`},
		{"unknown field", `"lots":{},"colour":"blue"}`, `unknown field "colour"`},
		{"lots not an object", `"lots":[1]}`, `"lots" must be an object`},
		{"lots null", `"lots":null}`, `"lots" must be an object`},
		{"lots missing", `"budget":0}`, `"lots" must be an object`},
		{"trailing data", `"lots":{}} {}`, "not valid JSON"},
		{"bad wave status", `"lots":{}}`, ""},
	} {
		p := filepath.Join(t.TempDir(), "w.state.json")
		body := head + c.body
		if c.name == "bad wave status" {
			body = strings.Replace(body, `"status":"done"`, `"status":"weird"`, 1)
			c.want = `status "weird" is not a wave status`
		}
		os.WriteFile(p, []byte(body), 0o644)
		_, _, err := Read(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: Read = %v, want an error naming %s and saying %q", c.name, err, p, c.want)
		}
	}
}

// A journal record with a null lot value or a bad lot is refused too.
func TestReadRefusesBadJournal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.state.json")
	os.WriteFile(p+JournalSuffix, []byte(`{"serial":1,"lot":"a","value":{"status":"bogus"}}`+"\n"), 0o644)
	if _, _, err := Read(p); err == nil || !strings.Contains(err.Error(), `"bogus"`) || !strings.Contains(err.Error(), p) {
		t.Errorf("bad journal lot: %v", err)
	}
}

func TestValidateAcceptsEveryStatus(t *testing.T) {
	s := &State{FormatVersion: FormatVersion, Lots: map[string]*Lot{}}
	for _, ws := range waveStatuses {
		s.Status = ws
		if err := Validate(s); err != nil {
			t.Errorf("wave status %q: %v", ws, err)
		}
	}
	for i, ls := range lotStatuses {
		s.Lots[string(rune('a'+i))] = &Lot{Status: ls, Steps: []Step{{Kind: kinds[i%len(kinds)].Kind, Status: stepStatuses[i%len(stepStatuses)]}}}
	}
	if err := Validate(s); err != nil {
		t.Errorf("every lot status: %v", err)
	}
}

// After a crash (journal left, never folded) Updated is the time of the
// last transition, never the zero time.
func TestReadUpdatedAfterCrash(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.state.json")
	s, err := OpenStore(p)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	if err := s.UpdateWave(func(st *State) { st.Wave, st.Status = "w", WaveRunning }); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateLot("a", func(l *Lot) { l.Status = LotRunning }); err != nil {
		t.Fatal(err)
	}
	// No Close: killed.
	st, _, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Updated.Before(before) {
		t.Errorf("Updated after a crash = %s, want the last transition's time", st.Updated)
	}
}

func TestWaveEnd(t *testing.T) {
	for _, c := range []struct {
		name string
		e    RunEnd
		want WaveStatus
	}{
		{"all done", RunEnd{Lots: map[LotStatus]int{LotDone: 3}, Total: 3}, WaveDone},
		{"all selected done, others not selected", RunEnd{Lots: map[LotStatus]int{LotDone: 2}, Total: 2, Outside: 18}, WavePartial},
		{"one handed back", RunEnd{Lots: map[LotStatus]int{LotDone: 2, LotHandedBack: 1}, Total: 3}, WaveNeedsLead},
		{"one failed, one blocked", RunEnd{Lots: map[LotStatus]int{LotFailed: 1, LotBlocked: 1}, Total: 2}, WaveNeedsLead},
		{"one waits for an answer", RunEnd{Lots: map[LotStatus]int{LotDone: 1, LotQuestion: 1}, Total: 2}, WaveNeedsLead},
		{"integration waits", RunEnd{Lots: map[LotStatus]int{LotInterrupted: 1}, Total: 1}, WaveNeedsLead},
		{"handed back under -target", RunEnd{Lots: map[LotStatus]int{LotHandedBack: 1}, Total: 1, Outside: 4}, WaveNeedsLead},
		{"signal", RunEnd{Interrupted: true, Lots: map[LotStatus]int{LotDone: 1}, Total: 1}, WaveInterrupted},
		{"budget", RunEnd{Suspended: WaveSuspendedBudget, Lots: map[LotStatus]int{LotSuspended: 1, LotFailed: 1}, Total: 2}, WaveSuspendedBudget},
		{"nothing in the plan", RunEnd{Lots: map[LotStatus]int{}}, WaveDone},
	} {
		if got := WaveEnd(c.e); got != c.want {
			t.Errorf("%s: WaveEnd = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestLeft(t *testing.T) {
	got := strings.Join(Left(map[LotStatus]int{LotDone: 4, LotHandedBack: 1, LotFailed: 1, LotQuestion: 1, LotInterrupted: 1}, 18), ", ")
	want := "3 need the lead (1 handed back, 1 failed, 1 waiting for an answer), 1 interrupted, 18 not selected by -target"
	if got != want {
		t.Errorf("Left = %q, want %q", got, want)
	}
	if l := Left(map[LotStatus]int{LotDone: 3}, 0); l != nil {
		t.Errorf("nothing left: %v", l)
	}
}

// FuzzRead: no state file, with or without a journal, makes Read panic;
// what it accepts passes Validate.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"format_version":1,"lots":{"a":null}}`), []byte(""))
	f.Add([]byte(`{"format_version":1,"status":"done","lots":{"a":{"status":"question","steps":[{"kind":"implement","status":"ok"}],"questions":[{"step":9,"text":"?"}]}}}`), []byte(`{"serial":2,"lot":"a","value":null}`+"\n"))
	f.Add([]byte(`{"format_version":1,"lots":{}}`), []byte(`{"serial":1,"wave":{"format_version":1,"lots":null}}`+"\n"+`{"serial":2,"lot":"b","value":{"status":"running"}}`+"\n"))
	f.Add([]byte(`{"format_version":1}`), []byte(`{"serial":1,"value":{"status":"done"}}`+"\n"))
	f.Add([]byte(`{"format_version":1,"cadence_version":"v1.2.3","agent_version":"2.1.3 (Claude Code)","lots":{}}`), []byte(`{"serial":1,"wave":{"format_version":1,"cadence_version":"dev","lots":null}}`+"\n"))
	f.Add([]byte(`{"format_version":2,"cadence_version":"v2.0.0","lots":{}}`), []byte(""))
	f.Add([]byte(`{"format_version":1,"cadence_version":7,"lots":{}}`), []byte(""))
	f.Fuzz(func(t *testing.T, state, journal []byte) {
		p := filepath.Join(t.TempDir(), "w.state.json")
		os.WriteFile(p, state, 0o644)
		if len(journal) > 0 {
			os.WriteFile(p+JournalSuffix, journal, 0o644)
		}
		st, _, err := Read(p)
		if err != nil {
			return
		}
		if verr := Validate(st); verr != nil {
			t.Fatalf("Read accepted a state Validate refuses: %v", verr)
		}
		for _, l := range st.Lots {
			_ = l.Pending()
			_ = l.Usage()
		}
	})
}

// Running lots are said running, not "not run yet" (cadence status of a
// live wave).
func TestLeftRunning(t *testing.T) {
	got := strings.Join(Left(map[LotStatus]int{LotRunning: 3, LotQueued: 2}, 0), ", ")
	if want := "3 running, 2 not run yet"; got != want {
		t.Errorf("Left = %q, want %q", got, want)
	}
}
