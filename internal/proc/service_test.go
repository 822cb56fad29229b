package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/httpready"
)

// freeURL is a URL on 127.0.0.1 at a port nothing listens on (it was
// free a moment ago).
func freeURL(t *testing.T) (string, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return fmt.Sprintf("http://127.0.0.1:%d/", port), port
}

// TestServiceReady: a service whose URL answers (a server already up,
// the process a sleeper) is ready; Stop ends the process.
func TestServiceReady(t *testing.T) { bothWays(t, testServiceReady) }

func testServiceReady(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	defer srv.Close()
	pidFile := filepath.Join(t.TempDir(), "app.pid")
	s := StartService(context.Background(), Cmd{Supervisor: testSupervisor.Load(), Path: "/bin/sh", Args: []string{"-c", "echo $$ > " + pidFile + "; exec sleep 60"}},
		Ready{Answers: httpready.Answers, URL: srv.URL, Timeout: 30 * time.Second})
	if err := s.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := waitFile(t, pidFile)
	s.Stop()
	if stat, ok := gone(pid); !ok {
		t.Errorf("the service %d survived Stop: %s", pid, stat)
	}
}

// TestServiceNeverReady: a service that runs but never answers is not
// ready after its timeout; the error says so and quotes its output.
func TestServiceNeverReady(t *testing.T) {
	url, _ := freeURL(t)
	s := StartService(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "echo booting; exec sleep 60"}},
		Ready{Answers: httpready.Answers, URL: url, Timeout: 500 * time.Millisecond, Interval: 50 * time.Millisecond})
	defer s.Stop()
	err := s.WaitReady(context.Background())
	var ne *NotReadyError
	if !errors.As(err, &ne) || ne.Exited {
		t.Fatalf("err = %v, want a NotReadyError for the timeout", err)
	}
	if !strings.Contains(err.Error(), "did not answer") || !strings.Contains(err.Error(), "booting") {
		t.Errorf("err = %q, want the timeout and the last output", err)
	}
}

// TestServiceExitsEarly: a service that exits before it answers is not
// ready at once (long before its timeout), with its exit and its last
// output in the error.
func TestServiceExitsEarly(t *testing.T) { bothWays(t, testServiceExitsEarly) }

func testServiceExitsEarly(t *testing.T) {
	url, _ := freeURL(t)
	s := StartService(context.Background(), Cmd{Supervisor: testSupervisor.Load(), Path: "/bin/sh", Args: []string{"-c", "echo listen EADDRINUSE >&2; exit 3"}},
		Ready{Answers: httpready.Answers, URL: url, Timeout: time.Minute})
	defer s.Stop()
	start := time.Now()
	err := s.WaitReady(context.Background())
	var ne *NotReadyError
	if !errors.As(err, &ne) || !ne.Exited {
		t.Fatalf("err = %v, want a NotReadyError for the exit", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v: it waited for the timeout", took)
	}
	for _, want := range []string{"exited", "exit 3", "listen EADDRINUSE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want %q in it", err, want)
		}
	}
}

// TestServiceStopTakesTree: Stop ends the service's whole tree: a child
// it forked into the background and a daemon that left its group
// (supervised).
func TestServiceStopTakesTree(t *testing.T) {
	if !supervisable {
		t.Skip("no supervisor on this system")
	}
	useSupervisor(t)
	dir := t.TempDir()
	url, _ := freeURL(t)
	s := StartService(context.Background(), Cmd{Supervisor: testSupervisor.Load(), Path: "/bin/sh", Args: []string{"-c", treeScript}, Dir: dir},
		Ready{Answers: httpready.Answers, URL: url, Timeout: time.Minute})
	pids := map[string]int{}
	for _, f := range []string{"bg", "daemon", "daemon-child"} {
		pids[f] = waitFile(t, filepath.Join(dir, f+".pid"))
	}
	s.Stop()
	allGone(t, pids)
	if err := s.WaitReady(context.Background()); err == nil {
		t.Error("a stopped service that never answered is ready")
	}
}

// TestServiceOutputBounded: the output the service keeps for its error
// is its last lines, at most serviceTailBytes, however much it wrote.
func TestServiceOutputBounded(t *testing.T) {
	url, _ := freeURL(t)
	s := StartService(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "i=0; while [ $i -lt 5000 ]; do echo line $i; i=$((i+1)); done; echo the-end; exit 1"}},
		Ready{Answers: httpready.Answers, URL: url, Timeout: time.Minute})
	defer s.Stop()
	err := s.WaitReady(context.Background())
	var ne *NotReadyError
	if !errors.As(err, &ne) {
		t.Fatal(err)
	}
	if len(ne.Output) > serviceTailBytes || !strings.HasSuffix(strings.TrimSpace(ne.Output), "the-end") {
		t.Errorf("output kept: %d bytes ending %q", len(ne.Output), ne.Output[max(0, len(ne.Output)-40):])
	}
}

// TestServiceCadenceKilledTakesTree: kill -9 of a cadence (the test
// binary as service-cadence) that runs a supervised service: no process
// of the service's tree is left, its setsid daemon included.
func TestServiceCadenceKilledTakesTree(t *testing.T) {
	if !supervisable {
		t.Skip("no supervisor on this system")
	}
	dir := t.TempDir()
	cad, pids := startTreeCadence(t, "service-cadence", dir)
	if err := cad.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cad.Wait()
	allGone(t, pids)
}

// TestWaitAnswer: an application cadence did not start answers, or not
// within the timeout.
func TestWaitAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }))
	defer srv.Close()
	if err := WaitAnswer(context.Background(), Ready{Answers: httpready.Answers, URL: srv.URL, Timeout: 10 * time.Second}); err != nil {
		t.Errorf("a 404 is an answer: %v", err)
	}
	url, _ := freeURL(t)
	var ne *NotReadyError
	if err := WaitAnswer(context.Background(), Ready{Answers: httpready.Answers, URL: url, Timeout: 300 * time.Millisecond}); !errors.As(err, &ne) {
		t.Errorf("nothing listens, yet %v", err)
	}
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer failing.Close()
	if err := WaitAnswer(context.Background(), Ready{Answers: httpready.Answers, URL: failing.URL, Timeout: 300 * time.Millisecond}); err == nil {
		t.Error("a 503 is an answer")
	}
}
