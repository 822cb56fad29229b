package control

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRoundTrip: a request sent is pending until acknowledged; the
// acknowledgement is read once; a withdrawn request is gone.
func TestRoundTrip(t *testing.T) {
	c := Channel{Dir: filepath.Join(t.TempDir(), "wave.state.json.requests")}
	a, err := c.Send(Request{Kind: KindDrop, Lots: []string{"L1"}, Now: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Send(Request{Kind: KindAnswer, Lot: "L2", Text: "yes"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(c.Dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("folder %v %v", st, err)
	}
	reqs, bad, err := c.Pending()
	if err != nil || len(bad) != 0 || len(reqs) != 2 || reqs[0].ID != a.ID || reqs[1].Text != "yes" || !reqs[0].Now {
		t.Fatalf("pending %+v %v %v", reqs, bad, err)
	}
	if _, ok, _ := c.ReadAck(a.ID); ok {
		t.Fatal("an ack before any was written")
	}
	if err := c.Ack(a, Ack{PID: 7, Results: []Result{{Lot: "L1", Taken: true, Reason: "r"}}}); err != nil {
		t.Fatal(err)
	}
	ack, ok, err := c.ReadAck(a.ID)
	if err != nil || !ok || ack.PID != 7 || ack.ID != a.ID || len(ack.Results) != 1 {
		t.Fatalf("ack %+v %v %v", ack, ok, err)
	}
	if _, ok, _ := c.ReadAck(a.ID); ok {
		t.Error("the ack was read twice")
	}
	if pending, err := c.Withdraw(a.ID); pending || err != nil {
		t.Errorf("withdraw of a taken request: %v %v", pending, err)
	}
	if pending, err := c.Withdraw(b.ID); !pending || err != nil {
		t.Errorf("withdraw of a pending request: %v %v", pending, err)
	}
	if reqs, _, _ := c.Pending(); len(reqs) != 0 {
		t.Errorf("left %+v", reqs)
	}
}

// TestBadRequests: damaged, mismatched and unknown requests are reported
// as bad, never taken; a folder others may write is refused.
func TestBadRequests(t *testing.T) {
	c := Channel{Dir: filepath.Join(t.TempDir(), "req")}
	if _, err := c.Send(Request{Kind: KindStop}); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"1-0123456789abcdef.req.json": `{`,
		"2-0123456789abcdef.req.json": `{"id":"fedcba9876543210","kind":"stop"}`,
		"3-0123456789abcdef.req.json": `{"id":"0123456789abcdef","kind":"rm -rf"}`,
	} {
		if err := os.WriteFile(filepath.Join(c.Dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(c.Dir, "4-0123456789abcdef.req.json")); err != nil {
		t.Fatal(err)
	}
	reqs, bad, err := c.Pending()
	if err != nil || len(reqs) != 1 || reqs[0].Kind != KindStop || len(bad) != 4 {
		t.Fatalf("reqs %+v bad %v err %v", reqs, bad, err)
	}
	for name := range bad {
		if err := c.AckBad(name); err != nil {
			t.Fatal(err)
		}
	}
	if _, bad, _ := c.Pending(); len(bad) != 0 {
		t.Errorf("bad left: %v", bad)
	}
	if err := os.Chmod(c.Dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Pending(); err == nil || !strings.Contains(err.Error(), "may be written by others") {
		t.Errorf("a folder others may write: %v", err)
	}
	if _, err := c.Send(Request{Kind: KindStop}); err == nil {
		t.Error("sent into a folder others may write")
	}
}

// TestTidy removes old acknowledgements and temporary files only.
func TestTidy(t *testing.T) {
	c := Channel{Dir: t.TempDir()}
	r, _ := c.Send(Request{Kind: KindStop})
	old := filepath.Join(c.Dir, "0123456789abcdef.ack.json")
	os.WriteFile(old, []byte(`{}`), 0o600)
	past := time.Now().Add(-48 * time.Hour)
	os.Chtimes(old, past, past)
	c.Tidy(24*time.Hour, time.Now())
	if _, err := os.Stat(old); err == nil {
		t.Error("an old ack was kept")
	}
	if reqs, _, _ := c.Pending(); len(reqs) != 1 || reqs[0].ID != r.ID {
		t.Errorf("a request was tidied: %+v", reqs)
	}
}
