package slots

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestSlotWaitLogged: at debug level a wait for a slot is logged on the
// cadence.slots sub-logger: the slot it got and how long.
func TestSlotWaitLogged(t *testing.T) {
	var buf bytes.Buffer
	prev := hclog.L() // (SetDefault returns nil before the first L)
	hclog.SetDefault(hclog.New(&hclog.LoggerOptions{Name: "cadence", Level: hclog.Debug, Output: &buf}))
	defer hclog.SetDefault(prev)
	dir := t.TempDir()
	p, err := Open(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s, err := p.Acquire(context.Background(), Holder{Wave: "a"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		s2, err := p.Acquire(context.Background(), Holder{Wave: "c"})
		if err == nil {
			err = s2.Release()
		}
		got <- err
	}()
	for queued := 0; queued == 0; {
		time.Sleep(5 * time.Millisecond)
		p.mu.Lock()
		queued = len(p.waiters)
		p.mu.Unlock()
	}
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	if want := "[DEBUG] cadence.slots: slot taken after wait: pool=" + dir + " slot=0 waited="; !strings.Contains(log, want) {
		t.Errorf("log lacks %q:\n%s", want, log)
	}
}
