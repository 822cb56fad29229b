//go:build unix

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// TestE2EUXReview: a visible lot with the real Claude CLI against the fake
// API, the real chromium and Playwright MCP server, an httptest app: the
// UX review's major finding (from its screenshot) goes to a fix pass, the
// UX review runs again after it and is conform, the code review follows,
// the lot is done; each UX review kept its screenshot under the lot's log
// folder, the fix brief names the UX finding, nothing is left running.
func TestE2EUXReview(t *testing.T) {
	server, chromium := fakeapi.FindBrowser(t)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>Greeter</title><h1>Greeter</h1>")
	}))
	defer app.Close()
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0":        fakeapi.UXReview("the Greet button is missing", map[string]any{"severity": "major", "text": "no Greet button on /"}),
		"a-fix1":       {commit("g.txt", "g"), writeDone("added the button")},
		"a-ux1":        fakeapi.UXReview("conform"),
		"a-review1":    {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: fmt.Sprintf("  ux {\n    url = %q\n    timeout = \"20s\"\n  }", app.URL+"/")})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP="+server, "CADENCE_CHROMIUM="+chromium)
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `a ux \(opus\) started`, `a fix \(pass 1\) \(sonnet\) started`, `Wave "w": 1 of 1 lots done`)
	a := e.lot(e.state(), "a")
	ux := stepsOf(a, state.StepUX)
	if len(ux) != 2 || len(stepsOf(a, state.StepFix)) != 1 || a.Status != state.LotDone {
		if len(ux) > 0 {
			b, _ := os.ReadFile(ux[0].Report)
			t.Logf("the first UX session's output: %s", b[max(0, len(b)-30000):])
		}
		t.Fatalf("steps %s, status %s", steps(a), a.Status)
	}
	for i, s := range ux {
		want := i == 1
		if s.NotVerified != "" || s.Conform == nil || *s.Conform != want {
			t.Errorf("ux step %d: not verified %q, conform %v, want %v", i, s.NotVerified, s.Conform, want)
		}
		if len(s.Screenshots) == 0 {
			t.Errorf("ux step %d kept no screenshot", i)
		}
		for _, p := range s.Screenshots {
			if _, err := os.Stat(p); err != nil || !strings.Contains(p, "-ux-shots") {
				t.Errorf("ux step %d: screenshot %s: %v", i, p, err)
			}
		}
	}
	fix := e.turns("a-fix1")
	if len(fix) == 0 || !strings.Contains(string(fix[0].Body), "UX: no Greet button on /") {
		t.Errorf("the fix brief does not name the UX finding")
	}
	e.cadence("logs", "-no-color", "a").wantOut(t, `screenshot .*-ux-shots/.*\.png`)
	e.noneLeft()
}

// TestE2EUXAppExits: a visible lot whose app exits before it answers:
// the UX review is not verified with the app's last output, no session
// runs for it, the lot goes on to the code review and is done, and
// nothing of the app is left.
func TestE2EUXAppExits(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-review0":    {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: "  ux {\n    command = \"echo port taken >&2; exit 4\"\n    url = \"http://127.0.0.1:1/\"\n  }"})
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `a ux ok: UX not verified: the app did not start: it exited \(exit 4\).*port taken`, `Wave "w": 1 of 1 lots done`)
	a := e.lot(e.state(), "a")
	if ux := stepsOf(a, state.StepUX); len(ux) != 1 || !strings.Contains(ux[0].NotVerified, "port taken") || ux[0].Conform != nil {
		t.Errorf("steps %s", steps(a))
	}
	if len(e.turns("a-ux0")) != 0 {
		t.Error("a UX session ran for an app that did not start")
	}
	e.noneLeft()
}

// uxAppWave is the repo attribute of a wave whose ux block starts a node
// app on a free port of 127.0.0.1, and that port's URL.
func uxAppWave(t *testing.T) (repo, url string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	url = fmt.Sprintf("http://127.0.0.1:%d/", port)
	app := fmt.Sprintf(`node -e 'require("http").createServer((q, s) => s.end("<h1>app</h1>")).listen(%d, "127.0.0.1")'`, port)
	return fmt.Sprintf("  ux {\n    command = %q\n    url = %q\n    timeout = \"30s\"\n  }", app, url), url
}

// answers reports whether url answers at once.
func answers(url string) bool {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// TestE2EUXStopped: cadence stopped (SIGINT, then kill -9 in a second
// run) while the UX session looks at the app cadence started: neither
// the app nor the browser nor the CLI is left, the app's port is free,
// the step is interrupted (resumable), never failed.
func TestE2EUXStopped(t *testing.T) {
	server, chromium := fakeapi.FindBrowser(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			repo, url := uxAppWave(t)
			e := newE2E(t, map[string]fakeapi.Script{
				"a-implement0": implementScript(),
				"a-ux0":        {fakeapi.ToolUse(fakeapi.BrowserNavigate, map[string]string{"url": fakeapi.PromptURL}), fakeapi.Hang()},
			}, waveOpts{Lot: "  visible = true", Repo: repo})
			e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP="+server, "CADENCE_CHROMIUM="+chromium)
			p, _ := e.startUntilTurn("a-ux0", 2)
			if !answers(url) {
				t.Errorf("the app does not answer during the UX session")
			}
			p.signal(sig)
			if sig == syscall.SIGKILL {
				<-p.done
			} else {
				p.wait()
			}
			e.noneLeft()
			if !testutil.Eventually(10*time.Second, func() bool { return !answers(url) }) {
				t.Errorf("the app still answers at %s after cadence's %s", url, sig)
			}
			if sig == syscall.SIGINT {
				a := e.lot(e.state(), "a")
				if ux := stepsOf(a, state.StepUX); len(ux) != 1 || ux[0].Status != state.StepInterrupted || a.Status != state.LotInterrupted {
					t.Errorf("steps %s, status %s", steps(a), a.Status)
				}
			}
		})
	}
}

// TestE2EUXNoBrowser: the machine's browser server is missing: the CLI
// still ends with the model's report, cadence records the UX review not
// verified (its verdict unused) and the lot goes on to the code review;
// the app cadence started is stopped.
func TestE2EUXNoBrowser(t *testing.T) {
	repo, url := uxAppWave(t)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-ux0":        {review("conform")},
		"a-review0":    {review("conform")},
	}, waveOpts{Lot: "  visible = true", Repo: repo})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP="+filepath.Join(e.dir, "no-such-server"), "CADENCE_CHROMIUM="+filepath.Join(e.dir, "no-such-chromium"))
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `a ux ok.*UX not verified`, `Wave "w": 1 of 1 lots done`)
	a := e.lot(e.state(), "a")
	if ux := stepsOf(a, state.StepUX); len(ux) != 1 || ux[0].NotVerified == "" || ux[0].Conform != nil || len(ux[0].Screenshots) != 0 {
		t.Errorf("steps %s", steps(a))
	}
	if answers(url) {
		t.Errorf("the app still answers at %s", url)
	}
	e.noneLeft()
}
