//go:build linux

package claude

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// uxApp is a running application for the browser tests: one page.
func uxApp(t *testing.T) *httptest.Server {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>cadence app</title><h1 style="color:#c00">Hello from the app</h1>`)
	}))
	t.Cleanup(app.Close)
	return app
}

// uxSession is a UX review session of a worktree with one commit, its
// browser on app, scripted on srv by sc.
func uxSession(t *testing.T, srv *fakeapi.Server, cli, appURL string, sc fakeapi.Script) agent.Session {
	dir := gittest.NewRepo(t, map[string]string{"index.html": "<h1>Hello</h1>\n"})
	id := "4a7e8f0c-2b1d-4c3e-9f5a-" + strconv.FormatInt(time.Now().UnixNano()%1e12, 10) + "0"
	id = id[:36]
	srv.SetScript(id, sc)
	scratch := t.TempDir()
	return agent.Session{Wave: "w", Lot: "ui", Step: state.StepReview, ReportSchema: state.StepReview.ReportSchema(), ReadOnly: true,
		Agent: conformanceAgent(cli), Model: "claude-sonnet-4-5", SessionID: id, Dir: dir, Timeout: 3 * time.Minute,
		LogPrefix: filepath.Join(t.TempDir(), "ux"),
		Brief:     "[[fake:" + id + "]] Review the running application at " + appURL + " in the browser.",
		Browser:   &agent.Browser{URL: appURL, ShotsDir: filepath.Join(scratch, "shots"), Scratch: scratch}}
}

// browserProcs follows the processes below a session's CLI while it runs
// (a /proc walk every 100 ms): chromium's helpers re-parent when the
// browser dies, so what is left is checked against what was seen.
type browserProcs struct {
	mu   sync.Mutex
	seen map[int]procID // pid → identity
	stop chan struct{}
	done chan struct{}
}

// procID tells a process from a later one with its pid: its start time
// (field 22 of /proc/PID/stat) and its command line.
type procID struct {
	start string
	cmd   string
}

func watchTree(pid int) *browserProcs {
	w := &browserProcs{seen: map[int]procID{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 3000; i++ { // at most 5 minutes
			w.walk(pid)
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// walk adds the descendants of root alive now.
func (w *browserProcs) walk(root int) {
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	ids := map[int]procID{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, id, ok := statOf(pid); ok {
			parent[pid], ids[pid] = ppid, id
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for pid, id := range ids {
		for p, n := pid, 0; p > 1 && n < 64; p, n = parent[p], n+1 {
			if p == root || w.seen[p] != (procID{}) && p != pid {
				w.seen[pid] = id
				break
			}
		}
	}
}

// statOf is pid's parent and identity, from /proc.
func statOf(pid int) (ppid int, id procID, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, id, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, id, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, id, false
	}
	ppid, _ = strconv.Atoi(f[1])
	cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if len(cmd) > 200 {
		cmd = cmd[:200]
	}
	return ppid, procID{start: f[19], cmd: strings.ReplaceAll(string(cmd), "\x00", " ")}, true
}

// left stops the watch and returns the processes it saw that still run
// (same pid and start time), after waiting up to wait for them to go.
func (w *browserProcs) left(wait time.Duration) (all []string, alive []string) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	deadline := time.Now().Add(wait)
	for {
		all, alive = nil, nil
		for pid, id := range w.seen {
			all = append(all, id.cmd)
			if _, now, ok := statOf(pid); ok && now.start == id.start {
				alive = append(alive, strconv.Itoa(pid)+" "+id.cmd)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return all, alive
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hasChromium(cmds []string) bool {
	for _, c := range cmds {
		if strings.Contains(c, "chrom") {
			return true
		}
	}
	return false
}

// runWatched runs s and returns its outcome and the processes of its tree
// that are still running after it (none expected).
func runWatched(t *testing.T, ctx context.Context, a *Adapter, s agent.Session, h agent.Host) (agent.Outcome, []string, []string) {
	var w *browserProcs
	var once sync.Once
	started := make(chan struct{})
	s.Started = func(pid int) { once.Do(func() { w = watchTree(pid); close(started) }) }
	out := a.Run(ctx, s, h)
	select {
	case <-started:
	default:
		t.Fatalf("the session never started: %+v", out)
	}
	all, alive := w.left(5 * time.Second)
	return out, all, alive
}

// TestBrowserSession: a UX review session with the real CLI, the real
// Playwright MCP server and chromium, through the fake API, on an httptest
// application: the server connects, the screenshot comes back to the API
// as an image and to cadence as evidence, the report is the review's, the
// worktree stays clean, and nothing of the browser outlives the session.
func TestBrowserSession(t *testing.T) {
	cli := fakeapi.FindCLI(t)
	server, chromium := fakeapi.FindBrowser(t)
	srv := fakeapi.Start(t, nil)
	app := uxApp(t)
	a := New().WithBrowser(agent.BrowserSetup{Server: server, Chromium: chromium})
	s := uxSession(t, srv, cli, app.URL+"/", fakeapi.UXReview("the page shows its heading",
		map[string]any{"severity": "minor", "text": "the heading is red on white"}))
	out, all, alive := runWatched(t, context.Background(), a, s, agent.Host{Command: cli, Env: fakeapi.CLIEnv(t, srv)})
	if out.Status != state.StepOK {
		t.Fatalf("status %s: %s", out.Status, out.Cause)
	}
	if !out.Browser.Verified() || out.Browser.Screenshots != 1 || out.Browser.Cause != "" {
		t.Errorf("evidence %+v, want connected with 1 screenshot", out.Browser)
	}
	if out.Report == nil || len(out.Report.Findings) != 1 || out.Report.Findings[0].Text != "the heading is red on white" {
		t.Errorf("report %+v", out.Report)
	}
	images := 0
	for _, r := range srv.RequestsForSession(s.SessionID) {
		for _, tr := range r.ToolResults() {
			if tr.IsError {
				t.Errorf("a tool failed: %s", tr.Text)
			}
			images = max(images, tr.Images)
		}
	}
	if images != 1 {
		t.Errorf("the screenshot reached the API as %d image blocks, want 1", images)
	}
	if st := gittest.Git(t, s.Dir, "status", "--porcelain", "--ignored"); st != "" {
		t.Errorf("the worktree changed:\n%s", st)
	}
	if shots, _ := filepath.Glob(filepath.Join(s.Browser.ShotsDir, "*.png")); len(shots) != 1 {
		t.Errorf("screenshots saved: %q", shots)
	}
	if !hasChromium(all) {
		t.Errorf("no chromium seen in the session's tree: %q", all)
	}
	if len(alive) > 0 {
		t.Errorf("left running after the session:\n%s", strings.Join(alive, "\n"))
	}
}

// TestBrowserMissingPieces: a session whose browser cannot be had still
// ends with its report (ok), and its evidence is not verified, with the
// cause: chromium not found (the session runs without a browser), or a
// server that exits at once (the CLI reports it failed, not connected).
func TestBrowserMissingPieces(t *testing.T) {
	cli := fakeapi.FindCLI(t)
	server, chromium := fakeapi.FindBrowser(t)
	srv := fakeapi.Start(t, nil)
	app := uxApp(t)
	dead := filepath.Join(fakeBin(t, map[string]string{"dead-mcp": "echo no server here >&2; exit 1"}), "dead-mcp")
	for _, tc := range []struct {
		name  string
		setup agent.BrowserSetup
		cause string
	}{
		{"no chromium", agent.BrowserSetup{Server: server, Chromium: "/nonexistent/chromium"}, "the browser (/nonexistent/chromium) not found; install them"},
		{"server fails", agent.BrowserSetup{Server: dead, Chromium: chromium}, "the browser server (Playwright MCP) did not connect: failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New().WithBrowser(tc.setup)
			s := uxSession(t, srv, cli, app.URL+"/", fakeapi.UXReview("looked", map[string]any{"severity": "minor", "text": "pale"}))
			out, _, alive := runWatched(t, context.Background(), a, s, agent.Host{Command: cli, Env: fakeapi.CLIEnv(t, srv)})
			if out.Status != state.StepOK || out.Report == nil {
				t.Fatalf("status %s (%s), report %+v: the CLI ends with the report", out.Status, out.Cause, out.Report)
			}
			if out.Browser == nil || out.Browser.Verified() || !strings.Contains(out.Browser.Cause, tc.cause) {
				t.Errorf("evidence %+v, want not verified: %s", out.Browser, tc.cause)
			}
			if st := gittest.Git(t, s.Dir, "status", "--porcelain", "--ignored"); st != "" {
				t.Errorf("the worktree changed:\n%s", st)
			}
			if len(alive) > 0 {
				t.Errorf("left running:\n%s", strings.Join(alive, "\n"))
			}
		})
	}
}

// TestBrowserSessionTimeout: a UX session that hangs after its screenshot
// is ended at its timeout with its whole tree: no chromium left.
func TestBrowserSessionTimeout(t *testing.T) {
	cli := fakeapi.FindCLI(t)
	server, chromium := fakeapi.FindBrowser(t)
	srv := fakeapi.Start(t, nil)
	app := uxApp(t)
	a := New().WithBrowser(agent.BrowserSetup{Server: server, Chromium: chromium})
	sc := fakeapi.UXReview("never")[:2]
	s := uxSession(t, srv, cli, app.URL+"/", append(sc, fakeapi.Hang()))
	s.Timeout = 20 * time.Second
	out, all, alive := runWatched(t, context.Background(), a, s, agent.Host{Command: cli, Env: fakeapi.CLIEnv(t, srv), Grace: 2 * time.Second})
	if out.Status == state.StepOK {
		t.Fatalf("a hanging session ended ok")
	}
	if !hasChromium(all) {
		t.Errorf("no chromium seen in the session's tree: %q", all)
	}
	if len(alive) > 0 {
		t.Errorf("left running after the timeout:\n%s", strings.Join(alive, "\n"))
	}
}

// TestBrowserSessionCost measures a UX session against the same review
// without a browser (CADENCE_MEASURE=1 only; docs/ux.md, Install and cost):
// wall time and the peak of the summed RSS of the session's tree.
func TestBrowserSessionCost(t *testing.T) {
	if os.Getenv("CADENCE_MEASURE") != "1" {
		t.Skip("a measurement: CADENCE_MEASURE=1")
	}
	cli := fakeapi.FindCLI(t)
	server, chromium := fakeapi.FindBrowser(t)
	srv := fakeapi.Start(t, nil)
	app := uxApp(t)
	for _, browser := range []bool{false, true, false, true} {
		a := New().WithBrowser(agent.BrowserSetup{Server: server, Chromium: chromium})
		sc := fakeapi.UXReview("ok")
		if !browser {
			sc = sc[2:]
		}
		s := uxSession(t, srv, cli, app.URL+"/", sc)
		if !browser {
			s.Browser = nil
		}
		var peak int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		s.Started = func(pid int) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					w := &browserProcs{seen: map[int]procID{}}
					w.walk(pid)
					var sum int64
					for p := range w.seen {
						sum += rssKB(p)
					}
					peak = max(peak, sum+rssKB(pid))
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
			}()
		}
		start := time.Now()
		out := a.Run(context.Background(), s, agent.Host{Command: cli, Env: fakeapi.CLIEnv(t, srv)})
		el := time.Since(start)
		close(stop)
		wg.Wait()
		var nav, shot time.Duration
		reqs := srv.RequestsForSession(s.SessionID)
		if browser && len(reqs) >= 3 {
			nav = reqs[1].Time.Sub(reqs[0].Time.Add(reqs[0].Duration))
			shot = reqs[2].Time.Sub(reqs[1].Time.Add(reqs[1].Duration))
		}
		t.Logf("browser=%v status=%s verified=%v wall=%s peakRSS=%d MiB navigate=%s screenshot=%s", browser, out.Status, out.Browser.Verified(), el.Round(10*time.Millisecond), peak/1024, nav.Round(10*time.Millisecond), shot.Round(10*time.Millisecond))
	}
}

func rssKB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
