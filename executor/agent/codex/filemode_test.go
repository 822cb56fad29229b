//go:build linux

package codex

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// TestSessionFilesPrivate: every file the Codex adapter writes beside the
// step's logs (the stream, stderr, the strict report schema) is 0600
// whatever the umask, as docs/running.md promises for everything under
// the wave's work folder .cadence/.
func TestSessionFilesPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	fake := filepath.Join(dir, "codex")
	script := "#!/bin/sh\ncat >/dev/null\necho '{\"type\":\"thread.started\",\"thread_id\":\"t1\"}'\n" +
		"echo '{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"{\\\"status\\\":\\\"done\\\",\\\"summary\\\":\\\"ok\\\"}\"}}'\n" +
		"echo '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}'\n"
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, ".cadence", "w", "a")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings()
	ag := &spec.Agent{Name: Kind, Kind: Kind, Command: fake, Settings: s, NoSandbox: true}
	sess := agent.Session{Wave: "w", Lot: "a", Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema(),
		Agent: ag, Dir: dir, Brief: "x", SessionID: "s1", LogPrefix: filepath.Join(logs, "1-implement"), LogLimit: 1 << 20}
	out := New().Run(context.Background(), sess, agent.Host{Command: fake, Grace: time.Second})
	t.Logf("outcome: %s %s", out.Status, out.Cause)
	filepath.Walk(logs, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is mode %v under the wave's .cadence folder, want 0600", p, fi.Mode().Perm())
		}
		return nil
	})
}
