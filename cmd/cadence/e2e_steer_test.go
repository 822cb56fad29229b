//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// (l) `cadence answer` while the wave runs: the live apply takes the
// answer, and the lot that asked replays its implement step in a fresh
// session with the answer in its brief and is done in the same run (a
// command lot that waits for a file keeps the run alive meanwhile).
func e2eAnswerLive(t *testing.T) {
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0":   {fakeapi.StructuredOutput(map[string]any{"status": "blocked", "summary": "need a decision", "questions": []string{"Which store?"}})},
		"a-implement0~2": implementScript(),
		"a-review0":      {review("conform")},
	}, waveOpts{More: fmt.Sprintf(`
lot "keep" {
  run     = "while [ ! -f %s ]; do sleep 0.05; done"
  # the release file is in the test's folder, which the step sandbox's
  # private /tmp does not show
  sandbox = false
}
`, release)})
	p := e.start(e.applyArgs()...)
	lotIs := func(id string, want state.LotStatus) func() bool {
		return func() bool {
			st, _, err := state.Read(state.PathFor(e.wave))
			return err == nil && st.Lots[id] != nil && st.Lots[id].Status == want
		}
	}
	if !testutil.Eventually(2*time.Minute, lotIs("a", state.LotQuestion)) {
		p.signal(9)
		t.Fatalf("lot a never asked:\n%s", p.wait().out)
	}
	ans := e.cadence("answer", e.wave, "a", "Use Redis")
	ans.wantCode(t, 0)
	ans.wantOut(t, `The running apply \(pid [0-9]+\) took the request`, `answer a: it goes on in this run`)
	if !testutil.Eventually(2*time.Minute, lotIs("a", state.LotDone)) {
		t.Errorf("lot a did not go on in the live run: %s", steps(e.lot(e.state(), "a")))
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 2 of 2 lots done`)
	second := e.turns("a-implement0~2")
	if len(second) == 0 || !second[0].Contains("Use Redis") || !second[0].Contains("Which store?") {
		t.Errorf("the replayed implement (%d requests) lacks the question and answer", len(second))
	}
}
