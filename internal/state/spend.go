package state

import "sort"

// VendorSpend is what the sessions of one vendor (an agent kind) spent in a
// wave: its session steps, their usage in cadence's terms (Usage.Counted
// is what budgets count, whatever the vendor) and their cost in millionths
// of a dollar, CostEstimated when some of it was computed at list prices.
type VendorSpend struct {
	Vendor        string
	Sessions      int
	Usage         Usage
	CostMicros    int64
	CostEstimated bool
}

// SpendByVendor sums the session steps of lots per vendor (StepVendor: a
// step whose state records none counts as UnrecordedVendor), sorted by
// vendor; nil when no session ran.
func SpendByVendor(lots map[string]*Lot) []VendorSpend {
	by := map[string]*VendorSpend{}
	for _, l := range lots {
		if l == nil {
			continue
		}
		for _, s := range l.Steps {
			v := StepVendor(s)
			if v == "" {
				continue
			}
			vs := by[v]
			if vs == nil {
				vs = &VendorSpend{Vendor: v}
				by[v] = vs
			}
			vs.Sessions++
			vs.Usage = vs.Usage.Add(s.Usage)
			vs.CostMicros += s.CostMicros
			vs.CostEstimated = vs.CostEstimated || s.CostEstimated
		}
	}
	out := make([]VendorSpend, 0, len(by))
	for _, vs := range by {
		out = append(out, *vs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Vendor < out[j].Vendor })
	if len(out) == 0 {
		return nil
	}
	return out
}
