package control

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestWatchSeesHardLinkedRequest: a request published into the channel's
// folder with link(2) (written elsewhere, then linked in: maildir's way,
// `ln staged/x.req.json requests/`), which Pending accepts, wakes the
// watch like a renamed one; otherwise it waits, unseen, for the next
// change of the folder.
func TestWatchSeesHardLinkedRequest(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	root := t.TempDir()
	ch := Channel{Dir: filepath.Join(root, "wave.state.json.requests")}
	if err := os.Mkdir(ch.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	staged := Channel{Dir: filepath.Join(root, "staged")}
	r, err := staged.Send(Request{Kind: KindStop, PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	w, err := ch.Watch()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	name := requestName(r)
	if err := os.Link(filepath.Join(staged.Dir, name), filepath.Join(ch.Dir, name)); err != nil {
		t.Fatal(err)
	}
	if reqs, bad, err := ch.Pending(); err != nil || len(bad) > 0 || len(reqs) != 1 {
		t.Fatalf("Pending: %v, %v, %v; want the linked request", reqs, bad, err)
	}
	select {
	case _, ok := <-w.C:
		if !ok {
			t.Fatal("the watch broke")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a request linked into the folder did not wake the watch within 5 s (IN_CREATE is not watched): the apply does not see it until something else changes there")
	}
}
