package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// BrowserSetup is where this machine's browser pieces are, for the
// adapters that give a session a browser (Session.Browser): the browser
// server and the browser it drives. internal/cli fills it from
// CADENCE_PLAYWRIGHT_MCP and CADENCE_CHROMIUM (docs/agents.md, The
// browser of a UX session); an empty field is looked up on the session's
// PATH by its default name.
type BrowserSetup struct {
	// Server is the Playwright MCP server's executable (@playwright/mcp's
	// playwright-mcp, a node script): a path, or a name on PATH;
	// "" means DefaultBrowserServer.
	Server string
	// Chromium is the browser's executable: a path, or a name on PATH;
	// "" means DefaultChromium.
	Chromium string
}

// DefaultBrowserServer and DefaultChromium are the names looked up on PATH
// when BrowserSetup leaves them empty: what `npm install -g
// @playwright/mcp` and Debian's chromium package install.
const (
	DefaultBrowserServer = "playwright-mcp"
	DefaultChromium      = "chromium"
)

// BrowserInstall says how to get the browser pieces, for the messages that
// say one is missing.
const BrowserInstall = "install them: apt-get install --no-install-recommends chromium; npm install -g @playwright/mcp@0.0.83 (or set CADENCE_PLAYWRIGHT_MCP to its playwright-mcp and CADENCE_CHROMIUM to the browser)"

// Resolve finds b's executables with pathList (a PATH value): the absolute
// paths of the server and the browser, and why either cannot be used
// ("" when both can).
func (b BrowserSetup) Resolve(pathList string) (server, chromium, missing string) {
	find := func(p, def string) string {
		if p == "" {
			p = def
		}
		if !strings.ContainsRune(p, '/') {
			return LookPath(p, pathList)
		}
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
		return ""
	}
	server, chromium = find(b.Server, DefaultBrowserServer), find(b.Chromium, DefaultChromium)
	var gone []string
	if server == "" {
		gone = append(gone, "the Playwright MCP server ("+or(b.Server, DefaultBrowserServer+" on PATH")+")")
	}
	if chromium == "" {
		gone = append(gone, "the browser ("+or(b.Chromium, DefaultChromium+" on PATH")+")")
	}
	if len(gone) > 0 {
		missing = strings.Join(gone, " and ") + " not found; " + BrowserInstall
	}
	return server, chromium, missing
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// Browsing is an Adapter that can give a session a browser
// (Session.Browser).
type Browsing interface {
	// BrowserMissing says why sessions started with env (their PATH finds
	// the browser's programs) would get no browser on this machine, with
	// how to install what is missing; "" when they would get one. It
	// starts no process.
	BrowserMissing(ctx context.Context, env []string) string
}

// BrowserMissing returns why a session of a's kind would get no browser
// with env on this machine ("" when it would): the adapter's answer when
// it is a Browsing, else that the kind has none (NoBrowserCause). The
// planner warns with it of the lots that need a browser.
func BrowserMissing(ctx context.Context, a Adapter, kind string, env []string) string {
	if b, ok := a.(Browsing); ok {
		return b.BrowserMissing(ctx, env)
	}
	return NoBrowserCause(kind)
}

// NoBrowserCause is the BrowserEvidence.Cause of a session of an agent
// kind that has no browser in cadence.
func NoBrowserCause(kind string) string {
	return fmt.Sprintf("the %s agent has no browser in cadence", kind)
}
