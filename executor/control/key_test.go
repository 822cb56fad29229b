package control

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUnsignedRequestRefused: a channel with the apply's keys refuses a
// request written without a signature, with another key's, or altered
// after signing (ErrUnsigned, in bad); a signed one is taken.
func TestUnsignedRequestRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wave.state.json.requests")
	key, other := []byte("k1"), []byte("k2")
	// What a step writes: a request without a signature, another with a
	// key of its own, and one signed then altered.
	if _, err := (Channel{Dir: dir}).Send(Request{Kind: KindStop}); err != nil {
		t.Fatal(err)
	}
	if _, err := (Channel{Dir: dir, Keys: [][]byte{other}}).Send(Request{Kind: KindStop}); err != nil {
		t.Fatal(err)
	}
	altered, err := (Channel{Dir: dir, Keys: [][]byte{key}}).Send(Request{Kind: KindDrop, Lots: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	altered.Lots = []string{"b"}
	if err := os.Remove(filepath.Join(dir, mustOne(t, dir, altered.ID))); err != nil {
		t.Fatal(err)
	}
	if err := (Channel{Dir: dir}).writeRaw(altered); err != nil {
		t.Fatal(err)
	}
	good, err := (Channel{Dir: dir, Keys: [][]byte{key}}).Send(Request{Kind: KindAnswer, Lot: "a", Text: "yes"})
	if err != nil {
		t.Fatal(err)
	}
	reqs, bad, err := Channel{Dir: dir, Keys: [][]byte{other, key}[1:]}.Pending()
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[0].ID != good.ID {
		t.Errorf("taken %+v, want only the signed answer", reqs)
	}
	if len(bad) != 3 {
		t.Errorf("refused %v, want 3", bad)
	}
	for name, why := range bad {
		if !errors.Is(why, ErrUnsigned) {
			t.Errorf("%s refused for %v, want ErrUnsigned", name, why)
		}
	}
	// Without keys (the commands' side at rest) every request is read.
	if reqs, _, _ := (Channel{Dir: dir}).Pending(); len(reqs) != 4 {
		t.Errorf("at rest: %d requests, want 4", len(reqs))
	}
}

// mustOne is the file name of request id in dir.
func mustOne(t *testing.T, dir, id string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*-"+id+reqSuffix))
	if len(m) != 1 {
		t.Fatalf("request %s: %v", id, m)
	}
	return filepath.Base(m[0])
}

// writeRaw writes r as it is (its signature kept), as a forger would.
func (c Channel) writeRaw(r Request) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return c.write(requestName(r), data)
}

// TestKeyFile: MakeKey writes a 0600 key in a 0700 folder and returns the
// key a killed apply left; ReadKey refuses a key others may read;
// RemoveKey removes only its own key.
func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "keys", "steer-x")
	k1, left, err := MakeKey(path)
	if err != nil || left != nil || len(k1) != 2*keyBytes {
		t.Fatalf("MakeKey = %q, %q, %v", k1, left, err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want %v", p, st.Mode().Perm(), err, want)
		}
	}
	k2, left, err := MakeKey(path)
	if err != nil || string(left) != string(k1) || string(k2) == string(k1) {
		t.Fatalf("MakeKey again = %q, left %q, %v", k2, left, err)
	}
	if err := RemoveKey(path, k1); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadKey(path); err != nil || string(got) != string(k2) {
		t.Fatalf("RemoveKey of an old key removed the new one: %q, %v", got, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKey(path); !errors.Is(err, ErrForeign) {
		t.Errorf("ReadKey of a 0644 key: %v, want ErrForeign", err)
	}
	_ = os.Chmod(path, 0o600)
	if err := RemoveKey(path, k2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the key is left: %v", err)
	}
}

// TestClientSigns: a client sending to a live apply signs with the key
// file's key, waiting for a key the apply has not made yet.
func TestClientSigns(t *testing.T) {
	c := newClient(t)
	c.Key = filepath.Join(filepath.Dir(c.Lock), "keys", "steer-x")
	holdLock(t, c, ApplyHolder("wave.hcl", time.Now()))
	out := sendAsync(c, context.Background(), Request{Kind: KindStop}, 10*time.Second)
	time.Sleep(20 * time.Millisecond) // not a condition: the key comes late or not
	key, _, err := MakeKey(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	ch := c.Channel
	ch.Keys = [][]byte{key}
	r := pendingOn(t, ch)
	if err := ch.Ack(r, Ack{Note: "stopping"}); err != nil {
		t.Fatal(err)
	}
	if s := <-out; s.err != nil || !s.d.Live {
		t.Fatalf("Send = %+v, %v", s.d, s.err)
	}
}

// pendingOn waits for the one request ch takes.
func pendingOn(t *testing.T, ch Channel) Request {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		reqs, bad, err := ch.Pending()
		if err != nil || len(bad) > 0 {
			t.Fatalf("Pending: %v, %v", bad, err)
		}
		if len(reqs) == 1 {
			return reqs[0]
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no request was sent")
	return Request{}
}
