package state

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestStoreWritesLogged: at debug level every state write is logged on the
// cadence.state sub-logger with its serial and size.
func TestStoreWritesLogged(t *testing.T) {
	var buf bytes.Buffer
	prev := hclog.L() // (SetDefault returns nil before the first L)
	hclog.SetDefault(hclog.New(&hclog.LoggerOptions{Name: "cadence", Level: hclog.Debug, Output: &buf}))
	defer hclog.SetDefault(prev)
	path := filepath.Join(t.TempDir(), "w.state.json")
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateLot("a", func(l *Lot) { l.Status = LotRunning }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	for _, want := range []string{
		"[DEBUG] cadence.state: write snapshot: path=" + path + " serial=0 bytes=",
		"[DEBUG] cadence.state: write journal: path=" + path + " serial=1 bytes=",
		"[DEBUG] cadence.state: write snapshot: path=" + path + " serial=1 bytes=",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(log, "duration=") {
		t.Errorf("no duration:\n%s", log)
	}
}
