package cli

import "github.com/cadence-run/cadence/internal/state"

// verdicts are the lot's last code review verdict ("conform", "not
// conform", "" before one) and, for a visible lot, its last UX review's
// ("conform", "not conform", "not verified", "" before one), as status
// and the run's summary show them side by side (docs/ux.md).
func verdicts(l *state.Lot) (code, ux string) {
	for _, s := range l.Steps {
		switch {
		case s.Kind == state.StepUX && s.Status == state.StepOK && s.NotVerified != "":
			ux = "not verified"
		case s.Conform == nil:
		case s.Kind == state.StepUX:
			ux = map[bool]string{true: "conform", false: "not conform"}[*s.Conform]
		default:
			code = map[bool]string{true: "conform", false: "not conform"}[*s.Conform]
		}
	}
	return code, ux
}

// verdictText is both verdicts in one cell: "conform", "conform, ux not
// verified", "ux not conform".
func verdictText(l *state.Lot) string {
	code, ux := verdicts(l)
	switch {
	case ux == "":
		return code
	case code == "":
		return "ux " + ux
	}
	return code + ", ux " + ux
}
