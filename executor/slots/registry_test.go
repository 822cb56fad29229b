package slots

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

func TestRegistry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "waves")
	if live, err := Live(dir); err != nil || live != nil {
		t.Fatalf("missing dir: %v, %v", live, err)
	}
	r, err := Register(dir, WaveEntry{Wave: "auth", File: "auth.hcl", StateFile: "auth.state.json", MaxSessions: 3, Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Register(dir, WaveEntry{Wave: "again"}); err == nil {
		t.Fatal("second Register in one process succeeded")
	}
	live, err := Live(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].PID != os.Getpid() || live[0].Wave != "auth" || live[0].MaxSessions != 3 || live[0].Started.IsZero() {
		t.Fatalf("Live = %+v", live)
	}
	started := live[0].Started
	e := live[0]
	e.Status = "integrating"
	if err := r.Update(e); err != nil {
		t.Fatal(err)
	}
	live, _ = Live(dir)
	if len(live) != 1 || live[0].Status != "integrating" || !live[0].Started.Equal(started) {
		t.Fatalf("after Update: %+v", live)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := r.Update(e); err == nil {
		t.Fatal("Update after Close succeeded")
	}
	if live, _ = Live(dir); len(live) != 0 {
		t.Fatalf("after Close: %+v", live)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("files left: %v", names)
	}
	// Registering again after Close works.
	r, err = Register(dir, WaveEntry{Wave: "auth"})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

func TestRegistryIgnoresDeadProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "waves")
	dead := startHelper(t, "register", dir, "doomed")
	alive := startHelper(t, "register", dir, "alive")
	for _, c := range []*child{dead, alive} {
		if got := c.line(t); got != "registered" {
			t.Fatalf("helper: %q", got)
		}
	}
	mine, err := Register(dir, WaveEntry{Wave: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()

	live, err := Live(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := waves(live); !slices.Equal(got, []string{"alive", "doomed", "mine"}) {
		t.Fatalf("Live = %+v", live)
	}

	if err := dead.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = dead.cmd.Wait()
	if names := dirNames(t, dir); !slices.Contains(names, strconv.Itoa(dead.pid())+".json") {
		t.Fatalf("the killed process's entry should still be on disk: %v", names)
	}
	live, err = Live(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := waves(live); !slices.Equal(got, []string{"alive", "mine"}) {
		t.Fatalf("Live after SIGKILL = %+v", live)
	}
	for _, e := range live {
		if e.Wave == "alive" && e.PID != alive.pid() {
			t.Fatalf("pid %d, want %d", e.PID, alive.pid())
		}
	}
	for _, n := range dirNames(t, dir) {
		if n[:len(strconv.Itoa(dead.pid()))+1] == strconv.Itoa(dead.pid())+"." {
			t.Fatalf("dead entry not removed: %s", n)
		}
	}

	// A clean exit removes the entry.
	alive.stdin.Close()
	if err := alive.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if live, _ = Live(dir); !slices.Equal(waves(live), []string{"mine"}) {
		t.Fatalf("Live after exit = %+v", live)
	}
}

func waves(es []WaveEntry) []string {
	var ws []string
	for _, e := range es {
		ws = append(ws, e.Wave)
	}
	slices.Sort(ws)
	return ws
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
