package fakeapi

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// PromptURL, anywhere in a tool_use block's input, is replaced when the
// turn is played by the first local application URL (http or https, on
// 127.0.0.1 or localhost, with its port and path) in the request's
// messages, normally the one the brief names: a script written before
// the application's port is known drives the browser to it. With no such
// URL it stays as it is.
const PromptURL = "[[prompt-url]]"

// The Playwright MCP server's tools as the Claude Code CLI names them.
const (
	BrowserNavigate   = "mcp__playwright__browser_navigate"
	BrowserScreenshot = "mcp__playwright__browser_take_screenshot"
)

// UXReview is the script of a UX review session: it opens the application
// (PromptURL), takes a screenshot (without a filename: it comes back to
// the model as an image, Request.ToolResults' Images), then reports with
// the review schema's shape: verdict, and the findings given (none: a
// conforming review). A finding is {"severity": ..., "text": ...}.
func UXReview(verdict string, findings ...map[string]any) Script {
	if findings == nil {
		findings = []map[string]any{}
	}
	return Script{
		ToolUse(BrowserNavigate, map[string]string{"url": PromptURL}),
		ToolUse(BrowserScreenshot, map[string]any{}),
		StructuredOutput(map[string]any{"verdict": verdict, "findings": findings}),
	}
}

var localURLRE = regexp.MustCompile(`https?://(?:127\.0\.0\.1|localhost)(?::[0-9]+)?(?:/[^\s"'\\<>)\]]*)?`)

// promptURL is the first local application URL in body's messages
// (PromptURL), or "".
func promptURL(body []byte) string {
	var b struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(body, &b) != nil {
		return ""
	}
	// A sentence's last stop is not part of the address.
	return strings.TrimRight(string(localURLRE.Find(b.Messages)), ".,;:!?")
}

// withPromptURL is input with PromptURL replaced by url (input itself
// when either is empty or PromptURL is not in it).
func withPromptURL(input json.RawMessage, url string) json.RawMessage {
	if url == "" || !bytes.Contains(input, []byte(PromptURL)) {
		return input
	}
	q, _ := json.Marshal(url)
	return bytes.ReplaceAll(input, []byte(PromptURL), q[1:len(q)-1])
}

// BrowserServerInstallDir is where CI installs the Playwright MCP server
// (.ci/test), relative to the repository root; BrowserServerVersion the
// version it pins.
const (
	BrowserServerInstallDir = ".cache/playwright-mcp"
	BrowserServerVersion    = "0.0.83"
)

// FindBrowser returns the Playwright MCP server's executable
// (<repo root>/.cache/playwright-mcp/node_modules/.bin/playwright-mcp) and
// chromium's (/usr/bin/chromium) for the browser tests. When either is
// missing the test is skipped with the reason, or fails when CI is set
// (CI must run them).
func FindBrowser(t testing.TB) (server, chromium string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("fakeapi: %v", err)
	}
	var missing []string
	if root, ok := repoRoot(wd); ok {
		server = filepath.Join(root, BrowserServerInstallDir, "node_modules", ".bin", "playwright-mcp")
	}
	if server == "" || !isExecutable(server) {
		missing = append(missing, "the Playwright MCP server (npm install --prefix "+BrowserServerInstallDir+" @playwright/mcp@"+BrowserServerVersion+")")
	}
	chromium = "/usr/bin/chromium"
	if !isExecutable(chromium) {
		missing = append(missing, "chromium (apt-get install --no-install-recommends chromium)")
	}
	if len(missing) == 0 {
		return server, chromium
	}
	why := "fakeapi: no browser for the browser tests: " + strings.Join(missing, " and ") + " missing; .ci/test installs them"
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip("SKIP browser test: " + why)
	return "", ""
}
