package slots

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a helper process: its value names
// the role, the arguments follow in os.Args.
const helperEnv = "CADENCE_SLOTS_TEST_HELPER"

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		if err := runHelper(role, os.Args[1:]); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runHelper(role string, args []string) error {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	switch role {
	case "churn": // dir size goroutines rounds outfile
		return helperChurn(args[0], atoi(args[1]), atoi(args[2]), atoi(args[3]), args[4])
	case "hold": // dir size count wave: hold count slots until stdin closes
		p, err := Open(args[0], atoi(args[1]))
		if err != nil {
			return err
		}
		var idx []string
		for range atoi(args[2]) {
			s, err := p.Acquire(context.Background(), Holder{Wave: args[3], Lot: "lot", Step: "work"})
			if err != nil {
				return err
			}
			idx = append(idx, strconv.Itoa(s.Index()))
		}
		fmt.Println("held", strings.Join(idx, " "))
		_, _ = io.Copy(io.Discard, os.Stdin)
		return p.Close()
	case "register": // dir wave
		r, err := Register(args[0], WaveEntry{Wave: args[1], MaxSessions: 2, Status: "running"})
		if err != nil {
			return err
		}
		fmt.Println("registered")
		_, _ = io.Copy(io.Discard, os.Stdin)
		return r.Close()
	case "handoff": // dir
		return helperHandoff(args[0])
	}
	return fmt.Errorf("unknown role %q", role)
}

// helperChurn acquires and releases slots rounds times in each of goroutines
// goroutines, and writes one "start end" line (UnixNano, taken inside the
// hold) per session to outfile.
func helperChurn(dir string, size, goroutines, rounds int, outfile string) error {
	p, err := Open(dir, size)
	if err != nil {
		return err
	}
	defer p.Close()
	var (
		mu    sync.Mutex
		lines []string
		wg    sync.WaitGroup
		errs  = make(chan error, goroutines)
	)
	for range goroutines {
		wg.Go(func() {
			for range rounds {
				s, err := p.Acquire(context.Background(), Holder{Wave: "churn"})
				if err != nil {
					errs <- err
					return
				}
				start := time.Now().UnixNano()
				time.Sleep(time.Duration(100+rand.IntN(400)) * time.Microsecond)
				end := time.Now().UnixNano()
				if err := s.Release(); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				lines = append(lines, fmt.Sprintf("%d %d %d", start, end, s.Index()))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return os.WriteFile(outfile, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// helperHandoff is side A of the handoff measurement, driven by lines on
// stdin: "go" takes the only slot and answers "held"; "wait" (B is about to
// block in Acquire) waits a little, releases and answers "released <ns>".
func helperHandoff(dir string) error {
	p, err := Open(dir, 1)
	if err != nil {
		return err
	}
	defer p.Close()
	in := bufio.NewScanner(os.Stdin)
	var s *Slot
	for in.Scan() {
		switch in.Text() {
		case "go":
			if s, err = p.Acquire(context.Background(), Holder{Wave: "A"}); err != nil {
				return err
			}
			fmt.Println("held")
		case "wait":
			time.Sleep(3 * time.Millisecond)
			t := time.Now().UnixNano()
			if err := s.Release(); err != nil {
				return err
			}
			fmt.Println("released", t)
		}
	}
	return nil
}

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// startHelper starts the test binary as a helper in role with args; it is
// killed at the end of the test.
func startHelper(t testing.TB, role string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	// GORACE: a -race binary otherwise sleeps 1s at exit.
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &child{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
}

func (c *child) line(t testing.TB) string {
	t.Helper()
	if !c.out.Scan() {
		t.Fatalf("helper output ended: %v", c.out.Err())
	}
	return c.out.Text()
}

func (c *child) send(t testing.TB, s string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, s+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (c *child) pid() int { return c.cmd.Process.Pid }
