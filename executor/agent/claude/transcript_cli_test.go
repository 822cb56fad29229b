//go:build unix

package claude

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
)

// TestTranscriptPathRealCLI runs the real Claude Code CLI (fakeapi.FindCLI)
// against the fake API in folders whose paths the CLI sanitises, and checks
// that TranscriptPath names the transcript the CLI wrote.
func TestTranscriptPathRealCLI(t *testing.T) {
	bin := fakeapi.FindCLI(t)
	t.Parallel()
	srv := fakeapi.Start(t, map[string]fakeapi.Script{"x": {fakeapi.Text("hi")}})
	base := t.TempDir()
	os.MkdirAll(filepath.Join(base, "real.dir"), 0o755)
	os.Symlink(filepath.Join(base, "real.dir"), filepath.Join(base, "link"))
	for _, tc := range []struct {
		name, dir string
		env       []string
	}{
		{"underscore", "my_proj", nil},
		{"at", "me@host", nil},
		{"spaces", "with some spaces", nil},
		{"dots", ".hidden/v1.2.3", nil},
		{"non-ASCII", "café-ü/日本語", nil},
		{"decomposed", "cafe\u0301", nil},
		{"outside the BMP", "emoji😀x", nil},
		{"long", strings.Repeat("abcdefghij", 12) + "/" + strings.Repeat("klmnopqrst_", 10), nil},
		{"symlink", "link", nil},
		{"config dir", "cfg_@ x", []string{"CLAUDE_CONFIG_DIR=" + filepath.Join(base, "config dir")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(base, tc.dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			env := fakeapi.CLIEnv(t, srv, tc.env...)
			id := newTestUUID(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "-p", "[[fake:x]] hi", "--output-format", "json", "--session-id", id)
			cmd.Dir, cmd.Env = dir, env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("claude: %v\n%s", err, out)
			}
			p := TranscriptPath(env, dir, id)
			if _, err := os.Stat(p); err != nil {
				var found []string
				filepath.Walk(base, func(q string, _ os.FileInfo, _ error) error {
					if strings.HasSuffix(q, id+".jsonl") {
						found = append(found, q)
					}
					return nil
				})
				home, _ := envLookup(env, "HOME")
				filepath.Walk(home, func(q string, _ os.FileInfo, _ error) error {
					if strings.HasSuffix(q, id+".jsonl") {
						found = append(found, q)
					}
					return nil
				})
				t.Errorf("no transcript at %s; the CLI wrote %q", p, found)
			}
		})
	}
}

func newTestUUID(t *testing.T) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
