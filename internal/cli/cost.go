package cli

import "github.com/cadence-run/cadence/spec"

// costText renders a cost in millionths of a dollar: "$0.0016", or
// "~$0.0016 (estimated)" when some of it was computed at list prices (a
// session stopped before the CLI reported its cost: state.Step and
// state.Consumed CostEstimated).
func costText(micros int64, estimated bool) string {
	s := spec.USD(micros).String()
	if estimated {
		s = "~" + s + " (estimated)"
	}
	return s
}
