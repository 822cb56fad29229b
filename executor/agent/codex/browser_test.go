package codex

import (
	"context"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
)

// TestNoBrowser: a Codex session asked for a browser says it had none,
// whatever else happened to it (here: it could not start).
func TestNoBrowser(t *testing.T) {
	out := New().Run(context.Background(), agent.Session{Browser: &agent.Browser{URL: "http://127.0.0.1:1/"}}, agent.Host{})
	if out.Browser == nil || out.Browser.Verified() || out.Browser.Cause != "the codex agent has no browser in cadence" {
		t.Errorf("evidence %+v", out.Browser)
	}
	if out := New().Run(context.Background(), agent.Session{}, agent.Host{}); out.Browser != nil {
		t.Errorf("no browser asked: evidence %+v", out.Browser)
	}
	if got := agent.BrowserMissing(context.Background(), New(), Kind, nil); got != "the codex agent has no browser in cadence" {
		t.Errorf("BrowserMissing: %q", got)
	}
}
