package proc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMarkedAncestor: a process that cleared its environment of a step's
// marks is still found below the marked process it descends from.
func TestMarkedAncestor(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sh", "-c", "env -u CADENCE_LOT sleep 30 & echo $!; wait")
	cmd.Env = append(os.Environ(), "CADENCE_LOT=b")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exec.Command("kill", strconv.Itoa(child)).Run() }()
	// env execs sleep: wait (bounded) until the child's environment is sleep's.
	for deadline := time.Now().Add(5 * time.Second); envHasKey(child, []string{"CADENCE_LOT"}) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	pid, ok := MarkedAncestor(child, []string{"CADENCE_WAVE_ID", "CADENCE_LOT"})
	if !ok || pid != cmd.Process.Pid {
		t.Fatalf("MarkedAncestor(%d) = %d, %v; want the marked shell %d", child, pid, ok, cmd.Process.Pid)
	}
	if pid, ok := MarkedAncestor(os.Getpid(), []string{"CADENCE_TEST_NO_SUCH_MARK"}); ok {
		t.Errorf("found process %d marked with a mark nobody carries", pid)
	}
}
