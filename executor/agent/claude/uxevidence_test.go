package claude

import (
	"testing"
)

// TestUXEvidenceIsABrowserScreenshot: a UX session whose browser server
// connected but that never used it, reading a PNG file of the worktree
// with the CLI's Read tool instead (its tool result is an image block), is
// not verified: only an image a browser tool returned is evidence that the
// session looked at the application (docs/ux.md, Evidence and "not
// verified").
func TestUXEvidenceIsABrowserScreenshot(t *testing.T) {
	w := newStreamWatch(nil, nil)
	for _, l := range []string{
		`{"type":"system","subtype":"init","mcp_servers":[{"name":"playwright","status":"connected"}]}`,
		`{"type":"assistant","message":{"id":"m1","model":"m","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/a/docs/old-screenshot.png"}}],"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]}}`,
	} {
		w.line([]byte(l))
	}
	if e := w.browserEvidence(); e.Verified() {
		t.Errorf("an image from the Read tool counts as a browser screenshot: evidence %+v", *e)
	}
}
