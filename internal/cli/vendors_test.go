package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
)

// TestVendorLines: status and apply's end show the spend per vendor when
// the sessions ran on more than one, each vendor's counted tokens (input
// without cache reads + cache writes + output), cache reads and cost; one
// vendor (an older state's steps count as claude's) shows nothing more.
func TestVendorLines(t *testing.T) {
	lots := map[string]*state.Lot{"a": {Status: state.LotDone, Steps: []state.Step{
		{Kind: state.StepImplement, Usage: state.Usage{Input: 1000, CacheWrite: 200, CacheRead: 5000, Output: 300}, CostMicros: 12000},
		{Kind: state.StepTest},
		{Kind: state.StepReview, Agent: "rev", Vendor: "codex", Usage: state.Usage{Input: 400, CacheRead: 2000, Output: 100}, CostMicros: 3000, CostEstimated: true},
	}}}
	var b bytes.Buffer
	vendorLines(&b, lots)
	got := b.String()
	for _, want := range []string{"Spend per vendor:\n", "claude  1 session  1.5k counted tokens  (+5k cache reads)  $0.012\n",
		"codex   1 session  500 counted tokens   (+2k cache reads)  ~$0.003 (estimated)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("vendor lines:\n%s\nlack %q", got, want)
		}
	}
	js := jsonVendors(lots)
	if len(js) != 2 || js[0].Vendor != "claude" || js[0].Counted != 1500 || js[1].Vendor != "codex" || js[1].Counted != 500 || !js[1].CostEstimated {
		t.Errorf("spend_by_vendor %+v", js)
	}
	b.Reset()
	lots["a"].Steps = lots["a"].Steps[:2]
	if vendorLines(&b, lots); b.Len() != 0 {
		t.Errorf("one vendor: %q", b.String())
	}
	if js := jsonVendors(map[string]*state.Lot{}); js == nil || len(js) != 0 {
		t.Errorf("no sessions: %#v, want []", js)
	}
}
