package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/slots"
)

// TestStatusHolds: status lists live and expired holds (flagged, with what
// to do) and leaves out those expired more than 24 h ago; status -json
// gives them with snake_case keys.
func TestStatusHolds(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "slots")
	now := time.Now()
	for _, h := range []struct {
		label string
		at    time.Time
		ttl   time.Duration
	}{
		{"live", now, time.Hour},
		{"expired", now.Add(-3 * time.Hour), time.Hour}, // expired 2 h ago: listed
		{"gone", now.Add(-30 * time.Hour), time.Hour},   // expired 29 h ago: dropped
	} {
		if _, _, err := slots.TakeHold(dir, h.label, h.ttl, h.at); err != nil {
			t.Fatal(err)
		}
	}
	e, stdout, stderr := testEnv(map[string]string{"CADENCE_HOME": home}, false)
	if code := runStatus(e, []string{"-all"}); code != ExitOK {
		t.Fatalf("status -all: %d %s", code, stderr)
	}
	out := stdout.String()
	for _, want := range []string{
		"Holds (cadence hold;",
		"  live     since ",
		"  expired  since ",
		"EXPIRED (takes no slot; cadence hold expired renews it, cadence release expired drops it)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "gone") {
		t.Errorf("status lists a hold expired more than 24 h ago:\n%s", out)
	}
	if strings.Count(out, "EXPIRED") != 1 {
		t.Errorf("status flags %d holds expired, want 1:\n%s", strings.Count(out, "EXPIRED"), out)
	}

	e, stdout, _ = testEnv(map[string]string{"CADENCE_HOME": home}, false)
	if code := runStatus(e, []string{"-all", "-json"}); code != ExitOK {
		t.Fatalf("status -all -json: %d", code)
	}
	var got struct {
		Holds []map[string]any `json:"holds"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Holds) != 2 || got.Holds[0]["label"] != "expired" || got.Holds[0]["expired"] != true ||
		got.Holds[1]["label"] != "live" || got.Holds[1]["expired"] != false {
		t.Fatalf("status -json holds: %v", got.Holds)
	}
	for _, k := range []string{"label", "since", "expires", "expired"} {
		if _, ok := got.Holds[0][k]; !ok {
			t.Errorf("status -json hold lacks %q: %v", k, got.Holds[0])
		}
	}
}

// TestMachineLiveHolds: the plan's machine facts count the live holds only.
func TestMachineLiveHolds(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "slots")
	e, _, _ := testEnv(map[string]string{"CADENCE_HOME": home}, false)
	if n := e.machine("w", "wave.hcl").LiveHolds(); n != 0 {
		t.Fatalf("no holds: %d", n)
	}
	now := time.Now()
	_, _, _ = slots.TakeHold(dir, "a", time.Hour, now)
	_, _, _ = slots.TakeHold(dir, "b", time.Hour, now.Add(-2*time.Hour))
	if n := e.machine("w", "wave.hcl").LiveHolds(); n != 1 {
		t.Fatalf("one live, one expired: %d", n)
	}
}
