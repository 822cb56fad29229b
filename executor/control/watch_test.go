package control

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestWatchSeesRequests: a watch started before the channel's folder
// exists tells of the first Send (which makes the folder), of a later one,
// and of one after the folder was removed and made again; Close closes C.
func TestWatchSeesRequests(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	ch := Channel{Dir: filepath.Join(t.TempDir(), "wave.state.json.requests")}
	w, err := ch.Watch()
	if err != nil {
		t.Fatal(err)
	}
	told := func(what string) {
		t.Helper()
		select {
		case _, ok := <-w.C:
			if !ok {
				t.Fatalf("%s: the watch broke", what)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: not told", what)
		}
		for len(w.C) > 0 { // coalesced changes of the same moment
			<-w.C
		}
	}
	if _, err := ch.Send(Request{Kind: KindStop, PID: 1}); err != nil {
		t.Fatal(err)
	}
	told("the first Send")
	if _, err := ch.Send(Request{Kind: KindStop, PID: 2}); err != nil {
		t.Fatal(err)
	}
	told("a second Send")
	if err := os.RemoveAll(ch.Dir); err != nil {
		t.Fatal(err)
	}
	told("the folder removed")
	if _, err := ch.Send(Request{Kind: KindStop, PID: 3}); err != nil {
		t.Fatal(err)
	}
	told("a Send after the folder was made again")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	for {
		select {
		case _, ok := <-w.C:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("C not closed after Close")
		}
	}
}
