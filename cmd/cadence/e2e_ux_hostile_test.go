//go:build unix

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// freePortURL is a free port of 127.0.0.1 and its URL.
func freePortURL(t *testing.T) (int, string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port, fmt.Sprintf("http://127.0.0.1:%d/", port)
}

// nodeApp is a node app on port that exits by itself after a minute (so
// that a test that finds it left running leaves nothing behind for long).
func nodeApp(port int) string {
	return fmt.Sprintf(`node -e 'setTimeout(() => process.exit(0), 60000); require("http").createServer((q, s) => s.end("<h1>app</h1>")).listen(%d, "127.0.0.1")'`, port)
}

// TestUXAppDaemonDoesNotOutliveStep: an application command that
// daemonizes (setsid -f: a new session, its parent gone) is stopped with
// the UX step all the same (docs/ux.md: "the application is stopped with
// its whole process tree when the session ends"): its port is free after
// apply.
func TestUXAppDaemonDoesNotOutliveStep(t *testing.T) {
	port, url := freePortURL(t)
	cmd := "setsid -f " + nodeApp(port) + "; exec sleep 600"
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0":        {review("conform")},
		"a-review0":    {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: fmt.Sprintf("  ux {\n    command = %q\n    url = %q\n    timeout = \"30s\"\n  }", cmd, url)})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP=/nonexistent/server", "CADENCE_CHROMIUM=/nonexistent/chromium")
	r := e.apply()
	r.wantCode(t, 0)
	a := e.lot(e.state(), "a")
	if ux := stepsOf(a, state.StepUX); len(ux) != 1 || ux[0].NotVerified == "" {
		t.Fatalf("steps %s", steps(a))
	}
	if !testutil.Eventually(5*time.Second, func() bool { return !answers(url) }) {
		t.Errorf("the daemonized app still answers at %s after apply", url)
	}
	e.noneLeft()
}

// TestUXAppCannotWriteLeadRepository: the application's command runs in
// the step sandbox with only the lot's worktree writable (docs/ux.md):
// it can write neither the lead's checkout, nor a branch of the
// repository (main, the base: "never written to their base behind
// review"), nor a hook of the repository's git folder, which the lead's
// own git commands would run outside any sandbox.
func TestUXAppCannotWriteLeadRepository(t *testing.T) {
	port, url := freePortURL(t)
	attack := `C=$(git rev-parse --path-format=absolute --git-common-dir); ` +
		`echo evil >> "$C/../README.md" && echo wrote-checkout; ` +
		`git update-ref refs/heads/main $(git commit-tree "HEAD^{tree}" -p main -m evil-on-main) && echo wrote-main; ` +
		`printf '#!/bin/sh\necho pwned\n' > "$C/hooks/post-merge" && chmod +x "$C/hooks/post-merge" && echo wrote-hook; `
	cmd := attack + "exec " + nodeApp(port)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0":        {review("conform")},
		"a-review0":    {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: fmt.Sprintf("  ux {\n    command = %q\n    url = %q\n    timeout = \"30s\"\n  }", cmd, url)})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP=/nonexistent/server", "CADENCE_CHROMIUM=/nonexistent/chromium")
	r := e.apply()
	t.Logf("apply: %s", r.out)
	a := e.lot(e.state(), "a")
	t.Logf("steps %s, status %s", steps(a), a.Status)
	if log := e.git(e.repo, "log", "--format=%s", "main"); strings.Contains(log, "evil-on-main") {
		t.Errorf("the app's command wrote a commit onto main:\n%s", log)
	}
	if b, _ := os.ReadFile(filepath.Join(e.repo, "README.md")); strings.Contains(string(b), "evil") {
		t.Errorf("the app's command wrote the lead's checkout: README.md %q", b)
	}
	if _, err := os.Stat(filepath.Join(e.repo, ".git", "hooks", "post-merge")); err == nil {
		t.Errorf("the app's command wrote a hook into the repository's git folder")
	}
	if !testutil.Eventually(5*time.Second, func() bool { return !answers(url) }) {
		t.Errorf("the app still answers at %s after apply", url)
	}
	e.noneLeft()
}

// TestUXBrowserStaysOnAppOrigin: the session's browser is "limited to the
// application's origin" (docs/ux.md). A hostile page of the app reaches
// another local service (here a recorder on another port of 127.0.0.1,
// standing for the fake API, an engine, another lot's app) neither by
// a redirect of a page the session opens, nor by a WebSocket its script
// opens, nor by an image or a fetch.
func TestUXBrowserStaysOnAppOrigin(t *testing.T) {
	server, chromium := fakeapi.FindBrowser(t)
	var mu sync.Mutex
	var hits []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.URL.Path)
		mu.Unlock()
		fmt.Fprint(w, "<h1>secret</h1>")
	}))
	defer other.Close()
	ws := "ws" + strings.TrimPrefix(other.URL, "http")
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, other.URL+"/redirect", http.StatusFound)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>app</title><h1>app</h1><img src="%s/img">
<script>fetch("%s/fetch").catch(() => {}); try { new WebSocket("%s/websocket") } catch (e) {}</script>`, other.URL, other.URL, ws)
	}))
	defer app.Close()
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0": {
			fakeapi.ToolUse(fakeapi.BrowserNavigate, map[string]string{"url": fakeapi.PromptURL}),
			fakeapi.ToolUse(fakeapi.BrowserNavigate, map[string]string{"url": fakeapi.PromptURL + "go"}),
			fakeapi.ToolUse(fakeapi.BrowserScreenshot, map[string]any{}),
			review("conform"),
		},
		"a-review0": {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: fmt.Sprintf("  ux {\n    url = %q\n    timeout = \"20s\"\n  }", app.URL+"/")})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP="+server, "CADENCE_CHROMIUM="+chromium)
	r := e.apply()
	r.wantCode(t, 0)
	mu.Lock()
	got := slices.Clone(hits)
	mu.Unlock()
	if len(got) > 0 {
		t.Errorf("the session's browser reached another origin (%s) from the app's pages: %q", other.URL, got)
	}
	e.noneLeft()
}

// TestUXSessionWritesNoFileOutsideShots: the session asks the browser
// server to save a screenshot, a page snapshot and the console messages
// under absolute paths outside its screenshots folder (here the scenario's
// folder, standing for the worktree or the lead's checkout): "writes are
// refused" (docs/ux.md), and none of the files appears.
func TestUXSessionWritesNoFileOutsideShots(t *testing.T) {
	server, chromium := fakeapi.FindBrowser(t)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>app</title><h1>app</h1><script>console.log('#!/bin/sh echo pwned')</script>")
	}))
	defer app.Close()
	out := t.TempDir()
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0": {
			fakeapi.ToolUse(fakeapi.BrowserNavigate, map[string]string{"url": fakeapi.PromptURL}),
			fakeapi.ToolUse(fakeapi.BrowserScreenshot, map[string]any{"filename": filepath.Join(out, "shot.png")}),
			fakeapi.ToolUse(fakeapi.BrowserScreenshot, map[string]any{"filename": "../../../../../../../../" + filepath.Join(out, "rel.png")}),
			fakeapi.ToolUse("mcp__playwright__browser_snapshot", map[string]any{"filename": filepath.Join(out, "snap.md")}),
			fakeapi.ToolUse("mcp__playwright__browser_console_messages", map[string]any{"filename": filepath.Join(out, "hook.sh")}),
			fakeapi.ToolUse(fakeapi.BrowserScreenshot, map[string]any{}),
			review("conform"),
		},
		"a-review0": {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: fmt.Sprintf("  ux {\n    url = %q\n    timeout = \"20s\"\n  }", app.URL+"/")})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP="+server, "CADENCE_CHROMIUM="+chromium)
	r := e.apply()
	r.wantCode(t, 0)
	if got, _ := os.ReadDir(out); len(got) > 0 {
		var names []string
		for _, f := range got {
			names = append(names, f.Name())
		}
		t.Errorf("the UX session's browser server wrote %q into %s", names, out)
	}
	e.noneLeft()
}

// TestUXReviewsTheAppItStarted: the port of the ux block's url is already
// taken by another server (another lot's app, a stale one): the lot's
// application exits at once (EADDRINUSE), so the UX review could not look
// at it and is not verified; it must not review the other server's pages
// and call the lot conform.
func TestUXReviewsTheAppItStarted(t *testing.T) {
	server, chromium := fakeapi.FindBrowser(t)
	stale := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>other</title><h1>another lot's app</h1>")
	}))
	defer stale.Close()
	port := stale.Listener.Addr().(*net.TCPAddr).Port
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0":        fakeapi.UXReview("conform"),
		"a-review0":    {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: fmt.Sprintf("  ux {\n    command = %q\n    url = %q\n    timeout = \"20s\"\n  }", nodeApp(port), stale.URL+"/")})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP="+server, "CADENCE_CHROMIUM="+chromium)
	r := e.apply()
	r.wantCode(t, 0)
	a := e.lot(e.state(), "a")
	ux := stepsOf(a, state.StepUX)
	if len(ux) != 1 {
		t.Fatalf("steps %s", steps(a))
	}
	if ux[0].NotVerified == "" || ux[0].Conform != nil {
		t.Errorf("the lot's app could not listen (its port taken), yet the UX review is verified (conform %v, screenshots %v): it looked at another server", ux[0].Conform, ux[0].Screenshots)
	}
	e.noneLeft()
}

// TestUXAppWriteNeverReachesBase: the application's command changes a
// committed file of the worktree (f.txt) when it starts: the UX review is
// not trusted (docs/ux.md: "nothing in the worktree may change") and the
// change never reaches main unreviewed.
func TestUXAppWriteNeverReachesBase(t *testing.T) {
	port, url := freePortURL(t)
	cmd := "echo hacked-by-app >> f.txt; exec " + nodeApp(port)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0":        {review("conform")},
		"a-review0":    {review("conform")},
		"a-fix1":       {writeDone("nothing to fix")},
	}, waveOpts{Lot: "  visible = true", Repo: fmt.Sprintf("  ux {\n    command = %q\n    url = %q\n    timeout = \"30s\"\n  }", cmd, url)})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP=/nonexistent/server", "CADENCE_CHROMIUM=/nonexistent/chromium")
	r := e.apply()
	a := e.lot(e.state(), "a")
	t.Logf("steps %s, status %s\n%s", steps(a), a.Status, r.out)
	if show := e.git(e.repo, "log", "-p", "main"); strings.Contains(show, "hacked-by-app") {
		t.Errorf("the app's write reached main")
	}
	if ux := stepsOf(a, state.StepUX); len(ux) == 0 || ux[0].Status == state.StepOK && a.Status == state.LotDone && len(a.Warnings) == 0 {
		t.Errorf("the app changed the worktree during the UX step, yet nothing says so")
	}
	e.noneLeft()
}

// TestUXAppDeafToTermFloodingIsStoppedAndBounded: an application that
// ignores SIGTERM and prints without end is stopped all the same when the
// step ends (its port free, nothing left), and its log is bounded.
func TestUXAppDeafToTermFloodingIsStoppedAndBounded(t *testing.T) {
	port, url := freePortURL(t)
	cmd := "trap '' TERM; (while :; do echo spam-spam-spam-spam-spam-spam; done) & exec " + nodeApp(port)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0":        {review("conform")},
		"a-review0":    {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: fmt.Sprintf("  ux {\n    command = %q\n    url = %q\n    timeout = \"30s\"\n  }", cmd, url)})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP=/nonexistent/server", "CADENCE_CHROMIUM=/nonexistent/chromium")
	start := time.Now()
	r := e.apply()
	r.wantCode(t, 0)
	t.Logf("apply took %s", time.Since(start))
	if !testutil.Eventually(5*time.Second, func() bool { return !answers(url) }) {
		t.Errorf("the app that ignores SIGTERM still answers at %s", url)
	}
	logs, _ := filepath.Glob(filepath.Join(e.dir, ".cadence", "*", "a", "*ux.app.log"))
	if len(logs) == 0 {
		t.Fatalf("no app log")
	}
	for _, l := range logs {
		if fi, err := os.Stat(l); err == nil && fi.Size() > 64<<20 {
			t.Errorf("the app log %s is %d bytes", l, fi.Size())
		}
	}
	e.noneLeft()
}

// TestUXKeptScreenshotsAreTheBrowsers: a page of the app offers a
// download named like a screenshot (the browser server saves downloads
// into the screenshots folder); what cadence keeps and records as the UX
// review's screenshots are PNG images the browser took, never a file the
// page chose.
func TestUXKeptScreenshotsAreTheBrowsers(t *testing.T) {
	server, chromium := fakeapi.FindBrowser(t)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/evidence.png" {
			w.Header().Set("Content-Disposition", `attachment; filename="evidence.png"`)
			fmt.Fprint(w, "not a screenshot: chosen by the page")
			return
		}
		fmt.Fprint(w, `<!doctype html><title>app</title><h1>app</h1><a id="d" href="/evidence.png" download="evidence.png">x</a><script>document.getElementById("d").click()</script>`)
	}))
	defer app.Close()
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0": {
			fakeapi.ToolUse(fakeapi.BrowserNavigate, map[string]string{"url": fakeapi.PromptURL}),
			fakeapi.ToolUse("mcp__playwright__browser_wait_for", map[string]any{"time": 2}),
			fakeapi.ToolUse(fakeapi.BrowserScreenshot, map[string]any{}),
			review("conform"),
		},
		"a-review0": {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: fmt.Sprintf("  ux {\n    url = %q\n    timeout = \"20s\"\n  }", app.URL+"/")})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP="+server, "CADENCE_CHROMIUM="+chromium)
	r := e.apply()
	r.wantCode(t, 0)
	a := e.lot(e.state(), "a")
	ux := stepsOf(a, state.StepUX)
	if len(ux) != 1 {
		t.Fatalf("steps %s", steps(a))
	}
	t.Logf("screenshots %q", ux[0].Screenshots)
	for _, p := range ux[0].Screenshots {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("kept screenshot %s is not a PNG image (%.40q, %v)", p, b, err)
		}
	}
	e.noneLeft()
}
