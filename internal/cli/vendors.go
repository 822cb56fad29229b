package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// vendorLines prints the spend per vendor (state.SpendByVendor) under the
// budget line of status and apply's end, when the wave's sessions ran on
// more than one vendor: one row per vendor with its sessions, counted
// tokens (cadence's one measure across vendors: input without cache reads
// + cache writes + output), cache reads and cost. Nothing for one vendor:
// the budget line says it all.
func vendorLines(w io.Writer, lots map[string]*state.Lot) {
	spend := state.SpendByVendor(lots)
	if len(spend) < 2 {
		return
	}
	fmt.Fprintln(w, "Spend per vendor:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range spend {
		fmt.Fprintf(tw, "  %s\t%d %s\t%s counted tokens\t(+%s cache reads)\t%s\n", v.Vendor, v.Sessions,
			map[bool]string{true: "session", false: "sessions"}[v.Sessions == 1],
			spec.Tokens(v.Usage.Counted()), spec.Tokens(v.Usage.CacheRead), costText(v.CostMicros, v.CostEstimated))
	}
	tw.Flush()
}

// statusVendor is one entry of status -json's "spend_by_vendor".
type statusVendor struct {
	Vendor        string      `json:"vendor"`
	Sessions      int         `json:"sessions"`
	Usage         state.Usage `json:"usage"`
	Counted       int64       `json:"counted"`
	CostMicros    int64       `json:"cost_micro_usd"`
	CostEstimated bool        `json:"cost_estimated"`
}

// jsonVendors is status -json's "spend_by_vendor": every vendor whose
// sessions the state records, sorted by vendor ([] for none).
func jsonVendors(lots map[string]*state.Lot) []statusVendor {
	out := []statusVendor{}
	for _, v := range state.SpendByVendor(lots) {
		out = append(out, statusVendor{Vendor: v.Vendor, Sessions: v.Sessions, Usage: v.Usage, Counted: v.Usage.Counted(),
			CostMicros: v.CostMicros, CostEstimated: v.CostEstimated})
	}
	return out
}
