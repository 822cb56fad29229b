package control

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWatchSurvivesWatchLimit: when the folder is made after the watch
// started and inotify refuses a watch on it (the user's inotify watches
// are exhausted: fs.inotify.max_user_watches is shared by every process
// of the user), the watch must break (C closed: the apply polls) rather
// than go on watching only the parent, which never tells of a request
// in the folder. The test runs itself in a user namespace whose watch
// limit is 1 (the parent's watch).
func TestWatchSurvivesWatchLimit(t *testing.T) {
	if os.Getenv("CADENCE_TEST_WATCH_LIMIT") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWatchSurvivesWatchLimit$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CADENCE_TEST_WATCH_LIMIT=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			if _, ok := err.(*exec.ExitError); !ok {
				t.Skipf("no user namespace here: %v", err)
			}
			t.Fatalf("%v\n%s", err, out)
		}
		t.Logf("%s", out)
		return
	}
	if err := os.WriteFile("/proc/sys/user/max_inotify_watches", []byte("1"), 0); err != nil {
		t.Skipf("cannot lower the watch limit: %v", err)
	}
	ch := Channel{Dir: filepath.Join(t.TempDir(), "wave.state.json.requests")}
	w, err := ch.Watch()
	if err != nil {
		t.Skipf("the watch did not start (the caller polls): %v", err)
	}
	defer w.Close()
	if _, err := ch.Send(Request{Kind: KindStop, PID: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C:
	case <-time.After(5 * time.Second):
		t.Fatal("the first Send (which made the folder) was not told")
	}
	time.Sleep(50 * time.Millisecond)
	for len(w.C) > 0 {
		<-w.C
	}
	if _, err := ch.Send(Request{Kind: KindStop, PID: 2}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C: // told, or closed: the caller polls from now on
	case <-time.After(5 * time.Second):
		t.Fatal("a second request in the folder was neither told nor was the watch broken within 5 s: inotify refused the folder's watch (ENOSPC) and the apply never sees a request again")
	}
}
