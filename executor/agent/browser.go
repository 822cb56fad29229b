package agent

// Browser asks an adapter for a browser the session looks at a running
// application with (the UX review step): a browser server the agent CLI
// starts for the session (Claude Code: the Playwright MCP server), headless,
// limited to the application's origin. The caller (the step runner) owns
// the application's life and the folders; the adapter owns how its CLI
// gets the browser, and the evidence that it did (BrowserEvidence).
type Browser struct {
	// URL is the application's address (scheme, host, port and path):
	// its origin is the only one the browser may open; the session's
	// brief asks it to start there.
	URL string
	// Paths are the application's pages the brief names to visit first
	// (each a path on URL's origin, "/settings"); none: URL only.
	Paths []string
	// ShotsDir is the folder, empty and the caller's, where the browser
	// saves the session's screenshots; the caller bounds what it keeps
	// of them (count and bytes) after the session.
	ShotsDir string
	// Scratch is an empty folder of the caller's for the session's working
	// directory and the browser's profile and temporary files (the
	// worktree is then an added directory, so that nothing the browser
	// writes lands in it); the caller removes it after the session.
	Scratch string
	// Proxy, when set, is the address of an HTTP proxy that passes URL's
	// origin only (internal/originproxy, run by the caller): the browser
	// sends every request through it, loopback ones too, so that neither
	// a redirect nor a WebSocket leaves the origin.
	Proxy string
}

// BrowserEvidence is what the adapter saw of the browser in the session:
// the UX verdict is only as good as this. An agent CLI ends with the
// model's report even when its browser server failed to start, so the
// caller records the UX step as not verified unless Connected and at
// least one screenshot came back to the model.
type BrowserEvidence struct {
	// Connected says the CLI reported the browser server connected.
	Connected bool
	// Screenshots is how many screenshots reached the model as images.
	Screenshots int
	// Cause says why the browser could not be used ("" when it could):
	// the server's status, a missing browser binary, a CLI without
	// browser support.
	Cause string
}

// Verified reports whether the session really looked at the application.
func (e *BrowserEvidence) Verified() bool {
	return e != nil && e.Connected && e.Screenshots > 0
}
