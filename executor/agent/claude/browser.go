package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/executor/agent"
)

// A session with a browser (agent.Session.Browser: the UX review step)
// gets the Playwright MCP server (@playwright/mcp 0.0.83), which the CLI
// starts at the session's start, outside its sandbox (the sandbox confines
// Bash only), with the session's environment and the server's own TMPDIR:
//
//	playwright-mcp --headless --isolated --browser chromium
//	  --executable-path CHROMIUM --output-dir SHOTS --allowed-origins ORIGIN
//	  --config SCRATCH/cadence-playwright.json   (chromium's own flags)
//
// given to the CLI as --mcp-config SCRATCH/cadence-mcp.json
// --strict-mcp-config (no other server). The session's working folder is
// the Scratch folder and the worktree an --add-dir, so that a file the
// server names relative to its workspace (a screenshot with a filename)
// lands in the scratch, never in the worktree. The browser's tools that
// run code or hand it files are denied (browserDenied); the others are
// allowed (browserAllowed). The evidence (agent.BrowserEvidence) comes
// from the stream: the init line's status of the server, and the tool
// results that carried an image (browserWatch). What the CLI starts
// (the server, chromium and chromium's helpers, which do not carry the
// session's mark) ends with the session's process tree (internal/proc's
// tree kill under the supervisor). docs/agents.md, The browser of a UX
// session, says it for users.

// browserServer is the MCP server's name in the session: its tools are
// mcp__playwright__<tool>.
const browserServer = "playwright"

// The session's files in the Scratch folder (each under 4 KiB).
const (
	mcpConfigName     = "cadence-mcp.json"
	browserConfigName = "cadence-playwright.json"
)

// browserAllowed are the Playwright MCP server's tools (its tools/list,
// 0.0.83) a UX session may call: looking, reading the page and using it
// like a user.
var browserAllowed = []string{
	"browser_navigate", "browser_navigate_back", "browser_take_screenshot", "browser_snapshot", "browser_find",
	"browser_click", "browser_hover", "browser_type", "browser_press_key", "browser_select_option", "browser_fill_form",
	"browser_drag", "browser_handle_dialog", "browser_emulate_media", "browser_resize", "browser_tabs",
	"browser_wait_for", "browser_console_messages", "browser_network_requests", "browser_network_request",
	"browser_close",
}

// browserDenied are its tools that run code outside the sandbox
// (browser_run_code_unsafe runs JavaScript in the server's node process;
// browser_evaluate runs it in the page) or hand the page the machine's
// files (browser_file_upload, browser_drop): denied, whatever the agent
// allows.
var browserDenied = []string{"browser_run_code_unsafe", "browser_evaluate", "browser_file_upload", "browser_drop"}

// chromiumArgs are chromium's flags in a UX session, beyond Playwright's
// own: no network of its own (this kind of machine refuses it, and a
// session's browser has no business with Google's hosts), no GPU.
var chromiumArgs = []string{"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--no-first-run", "--disable-gpu", "--disable-quic"}

func mcpTool(t string) string { return "mcp__" + browserServer + "__" + t }

func mcpTools(ts []string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = mcpTool(t)
	}
	return out
}

// WithBrowser sets where the browser pieces of UX sessions are (internal/cli
// from the environment); it returns a.
func (a *Adapter) WithBrowser(b agent.BrowserSetup) *Adapter {
	a.browser = b
	return a
}

var _ agent.Browsing = (*Adapter)(nil)

// BrowserMissing implements agent.Browsing: the server and chromium found
// with env's PATH, else what is missing and how to install it.
func (a *Adapter) BrowserMissing(_ context.Context, env []string) string {
	_, _, missing := a.browser.Resolve(envValue(env, "PATH"))
	return missing
}

// browserSession prepares s's browser with env: it writes the server's
// configuration into s.Browser.Scratch and returns the environment entries
// of nothing more (the server's own go in its configuration). With no
// browser possible (a piece missing, a bad URL, a file that cannot be
// written) it returns why; the session then runs without one.
func (a *Adapter) browserSession(s agent.Session, env []string) (cause string) {
	b := s.Browser
	server, chromium, missing := a.browser.Resolve(envValue(env, "PATH"))
	if missing != "" {
		return missing
	}
	origin, err := originOf(b.URL)
	if err != nil {
		return err.Error()
	}
	if b.Scratch == "" || b.ShotsDir == "" {
		return "no scratch or screenshots folder for the browser"
	}
	tmp := filepath.Join(b.Scratch, "tmp")
	for _, d := range []string{tmp, b.ShotsDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "the browser's folders: " + err.Error()
		}
	}
	args := []string{"--headless", "--isolated", "--browser", "chromium", "--executable-path", chromium,
		"--output-dir", b.ShotsDir, "--allowed-origins", origin, "--config", filepath.Join(b.Scratch, browserConfigName)}
	if os.Geteuid() == 0 {
		// chromium refuses to start as root with its own sandbox.
		args = append(args, "--no-sandbox")
	}
	// No downloads: the server would save a file the page names into the
	// screenshots folder, where it would pass for a screenshot.
	launch := chromiumArgs
	if b.Proxy != "" {
		launch = append(slices.Clone(chromiumArgs), "--proxy-server="+b.Proxy, "--proxy-bypass-list=<-loopback>")
	}
	pw, _ := json.Marshal(map[string]any{"browser": map[string]any{"launchOptions": map[string]any{"args": launch},
		"contextOptions": map[string]any{"acceptDownloads": false}}})
	mcp, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{browserServer: map[string]any{
		"type": "stdio", "command": server, "args": args,
		"env": map[string]string{"TMPDIR": tmp, "XDG_CONFIG_HOME": filepath.Join(tmp, "config"), "XDG_CACHE_HOME": filepath.Join(tmp, "cache")},
	}}})
	for name, doc := range map[string][]byte{browserConfigName: pw, mcpConfigName: mcp} {
		if err := os.WriteFile(filepath.Join(b.Scratch, name), doc, 0o600); err != nil {
			return "the browser's configuration: " + err.Error()
		}
	}
	return ""
}

// originOf is u's origin ("http://127.0.0.1:8080"), the only one the
// session's browser may open.
func originOf(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("the application's URL %q is not an http(s) URL", u)
	}
	return p.Scheme + "://" + p.Host, nil
}

// browserArgs are the flags of a session with a browser: the server's
// configuration (strict: no other server), its allowed and denied tools.
// They come after isolationArgs, whose --mcp-config the last one
// overrides.
func browserArgs(s agent.Session) (mcpConfig string, allowed, denied []string) {
	return filepath.Join(s.Browser.Scratch, mcpConfigName), mcpTools(browserAllowed), mcpTools(browserDenied)
}

// workDir is the session's working folder: the browser's Scratch for a
// session with a browser, else its worktree.
func workDir(s agent.Session) string {
	if s.Browser != nil && s.Browser.Scratch != "" {
		return s.Browser.Scratch
	}
	return s.Dir
}

// browserWatch is what the stream says of the browser: the server's status
// on the init line, the tool results that carried an image, and the first
// error a browser tool answered.
type browserWatch struct {
	status      string
	screenshots int
	firstErr    string
}

// evidence is the session's agent.BrowserEvidence.
func (w browserWatch) evidence() *agent.BrowserEvidence {
	e := &agent.BrowserEvidence{Connected: w.status == "connected", Screenshots: w.screenshots}
	switch {
	case w.status == "":
		e.Cause = "the CLI reported no browser server"
	case !e.Connected:
		e.Cause = "the browser server (Playwright MCP) did not connect: " + w.status
	case w.screenshots == 0 && w.firstErr != "":
		e.Cause = "the browser failed: " + w.firstErr
	case w.screenshots == 0:
		e.Cause = "no screenshot reached the model"
	}
	return e
}

// mcpServerJSON is one server of the init line's mcp_servers.
type mcpServerJSON struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// hasImage says whether a tool_result's content is a list with an image
// block.
func hasImage(content json.RawMessage) bool {
	var parts []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return false
	}
	for _, p := range parts {
		if p.Type == "image" {
			return true
		}
	}
	return false
}

// firstLineCut is s's first line, at most 300 bytes.
func firstLineCut(s string) string {
	s = firstLine(s)
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}

// sessionEvidence is the evidence of a session asked for a browser: cause
// when it got none, else what its stream (watch; nil: it never started)
// said.
func sessionEvidence(watch *streamWatch, cause string) *agent.BrowserEvidence {
	switch {
	case cause != "":
		return &agent.BrowserEvidence{Cause: cause}
	case watch == nil:
		return &agent.BrowserEvidence{Cause: "the session did not start"}
	}
	return watch.browserEvidence()
}
