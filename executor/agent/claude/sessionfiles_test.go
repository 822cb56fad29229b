//go:build linux

package claude

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/boundedlog"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// fakeCLI writes an executable shell script standing in for the CLI: it
// reads the prompt, then runs body.
func fakeCLI(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\ncat >/dev/null\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// runFake runs one unsandboxed implement session of the script cli with
// its files at prefix, bounded by limit.
func runFake(t *testing.T, cli, prefix string, limit int64) agent.Outcome {
	t.Helper()
	dir := t.TempDir()
	s := agent.Session{Wave: "w", Lot: "a", Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema(), Model: "claude-x",
		Agent: &spec.Agent{Name: "claude", Kind: Kind, Command: cli, NoSandbox: true},
		Dir:   dir, Brief: "do it", SessionID: "0b6f3f9e-1111-4c2a-9f00-" + strings.Repeat("0", 12),
		LogPrefix: prefix, LogLimit: limit}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return New().Run(ctx, s, agent.Host{Command: cli, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}})
}

// A turn of 1 KiB repeated: 12288 lines are 12 MiB of stream, the usage of
// one model turn (the CLI repeats a turn's usage on each of its lines).
const (
	bigTurn   = `{"type":"assistant","message":{"id":"msg_1","model":"claude-x","usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20},"content":[{"type":"text","text":"`
	bigResult = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done","structured_output":{"status":"done","summary":"the work is done"},"total_cost_usd":0.25,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20}}`
)

// TestSessionFilesAreBounded: a session whose stream is 12 MiB (and whose
// stderr is 3 MB) leaves files of about the lot's log_limit, head and tail
// around the dropped-bytes line, the result line in the tail; the live
// watcher still saw every line (usage, result, report), and the outcome
// says how much was cut.
func TestSessionFilesAreBounded(t *testing.T) {
	line := bigTurn + strings.Repeat("x", 1024-len(bigTurn)-6) + `"}]}}`
	cli := fakeCLI(t, "yes '"+line+"' | head -n 12288\nyes 'noise on stderr' | head -c 3000000 >&2\nprintf '%s\\n' '"+bigResult+"'\n")
	prefix := filepath.Join(t.TempDir(), "1-implement")
	const limit = 256 << 10
	out := runFake(t, cli, prefix, limit)
	if out.Status != state.StepOK || out.Report == nil || out.Report.Summary != "the work is done" {
		t.Fatalf("outcome %s (%s), report %+v; want ok with the report", out.Status, out.Cause, out.Report)
	}
	if want := (state.Usage{Input: 100, Output: 20}); out.Usage != want || out.CostMicros != 250000 {
		t.Errorf("usage %+v, cost %d; want %+v, 250000", out.Usage, out.CostMicros, want)
	}
	stream, _ := os.ReadFile(prefix + ".json")
	stderr, _ := os.ReadFile(prefix + ".err")
	for name, b := range map[string][]byte{".json": stream, ".err": stderr} {
		if n := len(b); n > limit+len(boundedlog.Marker(1<<40)) || n < limit {
			t.Errorf("%s is %d bytes, want about the limit %d", name, n, limit)
		}
		if !strings.Contains(string(b), "cadence dropped") {
			t.Errorf("%s does not say what was dropped", name)
		}
	}
	if !strings.HasSuffix(string(stream), bigResult+"\n") {
		t.Errorf("the stream file does not end with the result line: …%s", stream[max(0, len(stream)-200):])
	}
	if want := int64(12288*1024+len(bigResult)+1) - limit + int64(3000000-limit); out.OutputCut != want {
		t.Errorf("OutputCut = %d, want %d", out.OutputCut, want)
	}
}

// TestSessionFileWriteErrorEndsTheSession: a stream file that cannot be
// written (its path leads to /dev/full: ENOSPC on every write) ends the
// session at once, with its process tree, and says so: status
// interrupted, WriteErr the file's full-disk error. The script would
// print for 10 s, then leave a file saying it got to its end.
func TestSessionFileWriteErrorEndsTheSession(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	for _, ext := range []string{".json", ".err"} {
		t.Run(ext, func(t *testing.T) {
			done := filepath.Join(t.TempDir(), "reached-the-end")
			cli := fakeCLI(t, "i=0\nwhile [ $i -lt 500 ]; do echo '{\"type\":\"system\"}'; echo 'noise' >&2; sleep 0.02; i=$((i+1)); done\ntouch "+done+"\n")
			prefix := filepath.Join(t.TempDir(), "1-implement")
			if err := os.Symlink("/dev/full", prefix+ext); err != nil {
				t.Fatal(err)
			}
			out := runFake(t, cli, prefix, 64<<10)
			var pe *fs.PathError
			if out.Status != state.StepInterrupted || !errors.Is(out.WriteErr, syscall.ENOSPC) || !errors.As(out.WriteErr, &pe) || pe.Path != prefix+ext {
				t.Fatalf("outcome %s (%s), WriteErr %v; want interrupted with ENOSPC on %s", out.Status, out.Cause, out.WriteErr, prefix+ext)
			}
			if _, err := os.Stat(done); err == nil {
				t.Error("the session ran to its end after its file could not be written")
			}
		})
	}
}
