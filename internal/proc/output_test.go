package proc

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestLeftoverHoldingOutput: a command that exits and leaves a background
// process holding its output pipe ends when it exits, not when the
// background process (or the context) does; its output arrives whole.
func TestLeftoverHoldingOutput(t *testing.T) {
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := run(ctx, Cmd{Path: "/bin/sh", Args: []string{"-c", "sleep 60 & echo hi; echo oops >&2"}, Stdout: &out, Stderr: &errOut})
	if err != nil || res.ExitCode != 0 || res.Stopped {
		t.Fatalf("res %+v err %v", res, err)
	}
	if out.String() != "hi\n" || errOut.String() != "oops\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errOut.String())
	}
	if res.Duration > 30*time.Second {
		t.Errorf("waited %v for the leftover", res.Duration)
	}
}

// TestSameWriter: one writer for stdout and stderr gets both, in order
// (the race detector checks it is never written concurrently).
func TestSameWriter(t *testing.T) {
	var out bytes.Buffer
	res, err := run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "echo a; echo b >&2; echo c"}, Stdout: &out, Stderr: &out})
	if err != nil || res.ExitCode != 0 || out.String() != "a\nb\nc\n" {
		t.Fatalf("res %+v err %v out %q", res, err, out.String())
	}
}

// TestStdin: a reader is the process's standard input.
func TestStdin(t *testing.T) { bothWays(t, testStdin) }

func testStdin(t *testing.T) {
	var out bytes.Buffer
	_, err := run(context.Background(), Cmd{Path: "/bin/cat", Stdin: strings.NewReader("fed\n"), Stdout: &out})
	if err != nil || out.String() != "fed\n" {
		t.Fatalf("err %v out %q", err, out.String())
	}
}

// TestLogStartAndEnd: at debug level, a start line with the command line
// and folder, and an end line with the exit and duration.
func TestLogStartAndEnd(t *testing.T) {
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Name: "t", Level: hclog.Debug, Output: &buf})
	dir := t.TempDir()
	if _, err := run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "exit 4"}, Dir: dir, Log: log}); err != nil {
		t.Fatal(err)
	}
	_, _ = run(context.Background(), Cmd{Path: "/no/such/binary", Log: log})
	got := buf.String()
	for _, want := range []string{
		`[DEBUG] t: start: argv="/bin/sh -c \"exit 4\"" dir=` + dir + " pid=",
		`[DEBUG] t: end: argv="/bin/sh -c \"exit 4\"" dir=` + dir + " pid=",
		"exit=4 duration=",
		`[DEBUG] t: start failed: argv=/no/such/binary`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	buf.Reset()
	log.SetLevel(hclog.Info)
	_, _ = run(context.Background(), Cmd{Path: "/bin/true", Log: log})
	if buf.Len() != 0 {
		t.Errorf("logged above debug: %s", buf.String())
	}
}

func TestArgv(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, c := range []struct {
		cmd  Cmd
		want string
	}{
		{Cmd{Path: "git", Args: []string{"rev-parse", "--verify", "refs/heads/main^{commit}"}}, "git rev-parse --verify refs/heads/main^{commit}"},
		{Cmd{Path: "/bin/sh", Args: []string{"-c", "go test ./..."}}, `/bin/sh -c "go test ./..."`},
		{Cmd{Path: "x", Args: []string{""}}, `x ""`},
		{Cmd{Path: "x", Args: []string{long}}, "x " + strings.Repeat("x", 200) + "…(300 bytes)"},
	} {
		if got := argv(c.cmd); got != c.want {
			t.Errorf("argv(%v) = %q, want %q", c.cmd.Args, got, c.want)
		}
	}
}
