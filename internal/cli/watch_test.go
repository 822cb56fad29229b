package cli

import (
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cadence-run/cadence/executor/slots"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/testutil"
)

// testEnv is an env with the given variables (CADENCE_HOME among them),
// buffers for its streams, and tty saying whether stdout is a terminal.
func testEnv(vars map[string]string, tty bool) (*env, *testutil.SyncBuffer, *testutil.SyncBuffer) {
	stdout, stderr := &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	e := &env{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr,
		getenv: func(k string) string { return vars[k] }, log: hclog.NewNullLogger(),
		tty: func(w io.Writer) bool { return tty && w == stdout }}
	return e, stdout, stderr
}

// watchLive runs status -watch while a fake wave is registered live,
// ends the wave on an event (its registration closed once the watch has
// shown it) and returns what the watch wrote and its exit code.
func watchLive(t *testing.T, tty bool, args ...string) (string, ExitCode) {
	home := t.TempDir()
	e, stdout, stderr := testEnv(map[string]string{"CADENCE_HOME": home}, tty)
	reg, err := slots.Register(layout.New("", "", home).RegistryDir(),
		slots.WaveEntry{Wave: "fakewave", File: filepath.Join(home, "wave.hcl"), MaxSessions: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	code := make(chan ExitCode, 1)
	go func() { code <- runStatus(e, append([]string{"-watch", "-interval", "5ms"}, args...)) }()
	testutil.WaitFor(t, "the live wave shown", func() bool { return strings.Contains(stdout.String(), "fakewave") })
	select {
	case c := <-code:
		t.Fatalf("watch ended (%d) while a wave is live:\n%s%s", c, stdout, stderr)
	default:
	}
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-code:
		return stdout.String(), c
	case <-time.After(time.Minute):
		t.Fatal("watch did not end after the wave ended")
	}
	return "", -1
}

// TestStatusWatchEndsWithTheWave: without a terminal, status -watch prints
// a block when the status changes (not at every look), until no wave is
// live; then the final status, and exit 0.
func TestStatusWatchEndsWithTheWave(t *testing.T) {
	out, code := watchLive(t, false, "-all")
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	blocks := strings.Split(out, "== status at ")
	if len(blocks) != 3 || blocks[0] != "" {
		t.Fatalf("want two blocks (live, then ended), got %d:\n%s", len(blocks)-1, out)
	}
	if !strings.Contains(blocks[1], "  fakewave  pid ") || !strings.Contains(blocks[1], "cap 3") {
		t.Errorf("first block does not show the live wave:\n%s", blocks[1])
	}
	if !strings.Contains(blocks[2], "Live waves on this machine") || !strings.Contains(blocks[2], "  none\n") {
		t.Errorf("final block does not show no live wave:\n%s", blocks[2])
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("escape sequences without a terminal:\n%q", out)
	}
}

// TestStatusWatchRedrawsATerminal: on a terminal the screen is cleared and
// redrawn; the last drawing says no wave is live.
func TestStatusWatchRedrawsATerminal(t *testing.T) {
	out, code := watchLive(t, true, "-all")
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	draws := strings.Split(out, "\x1b[H\x1b[2J")
	if len(draws) != 3 {
		t.Fatalf("want two drawings, got %d:\n%q", len(draws)-1, out)
	}
	if !strings.Contains(draws[1], "until no wave is live (Ctrl-C stops)") || !strings.Contains(draws[1], "fakewave") {
		t.Errorf("first drawing:\n%s", draws[1])
	}
	if !strings.Contains(draws[2], "no wave is live on this machine") || strings.Contains(draws[2], "fakewave") {
		t.Errorf("last drawing:\n%s", draws[2])
	}
}

// TestStatusWatchInterrupt: SIGINT ends the watch with 0 while a wave is
// still live.
func TestStatusWatchInterrupt(t *testing.T) {
	home := t.TempDir()
	e, stdout, _ := testEnv(map[string]string{"CADENCE_HOME": home}, false)
	reg, err := slots.Register(layout.New("", "", home).RegistryDir(), slots.WaveEntry{Wave: "fakewave"})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	code := make(chan ExitCode, 1)
	go func() { code <- runStatus(e, []string{"-watch", "-all", "-interval", "5ms"}) }()
	// The signal handler is in place before the first block is printed.
	testutil.WaitFor(t, "the first block", func() bool { return strings.Contains(stdout.String(), "fakewave") })
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-code:
		if c != ExitOK {
			t.Fatalf("exit %d after SIGINT", c)
		}
	case <-time.After(time.Minute):
		t.Fatal("watch did not end on SIGINT")
	}
}
