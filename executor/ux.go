package executor

import (
	"context"

	"github.com/cadence-run/cadence/internal/state"
)

// uxPrefix begins the text of a UX review's finding among the lot's
// findings, so that the fix pass and the lead tell it from a code
// review's.
const uxPrefix = "UX: "

// uxReview runs the UX review of a visible lot (docs/ux.md): a read-only
// session that looks at the running application. Not verified (the app
// did not start, no browser, no screenshot) is a warning of the lot and
// the lot goes on to the code review; otherwise its findings are the
// lot's UX findings (the next UX review's brief), and the lot's findings
// for the fix pass when one blocks; minor ones join the code review's.
func (lr *lotRun) uxReview(ctx context.Context, pos state.Position) (state.Outcome, error) {
	lr.ux = nil
	out, o, err := lr.readOnlySession(ctx, state.StepUX, pos.Pass)
	if o.Kind != state.OutcomeOK || err != nil {
		return o, err
	}
	if lr.ux != nil && lr.ux.NotVerified != "" {
		return okOutcome, lr.warn("UX not verified: " + lr.ux.NotVerified + "; the lot goes on to the code review")
	}
	if out.Report == nil {
		return state.Outcome{Kind: state.OutcomeNoReport}, lr.warn("UX not verified: the UX review gave no report; the lot goes on to the code review")
	}
	fs := out.Report.Findings
	err = lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		l.UXFindings = fs
		l.Findings = uxTagged(fs)
	})
	if err != nil {
		return state.Outcome{}, err
	}
	switch {
	case !state.Conform(fs):
		return state.Outcome{Kind: state.OutcomeNotConform, Detail: summarize(fs)}, nil
	case state.HasMinor(fs):
		return state.Outcome{Kind: state.OutcomeMinors}, nil
	}
	return okOutcome, nil
}

// uxMinors are the minor findings of the UX review that ran just before
// the code review (tagged), for the code review's minor pass; none when
// the lot has no UX review or its last one was not verified.
func (lr *lotRun) uxMinors() []state.Finding {
	if !lr.facts.UX {
		return nil
	}
	var minors []state.Finding
	lr.r.o.Store.View(func(st *state.State) {
		l := st.Lots[lr.id]
		if l == nil {
			return
		}
		for i := len(l.Steps) - 1; i >= 0; i-- {
			if s := l.Steps[i]; s.Kind == state.StepUX {
				if s.Status != state.StepOK || s.NotVerified != "" || s.Conform == nil {
					return
				}
				break
			}
		}
		for _, f := range l.UXFindings {
			if f.Severity == state.SeverityMinor {
				minors = append(minors, f)
			}
		}
	})
	return uxTagged(minors)
}

// uxTagged is fs with each text marked as a UX review's.
func uxTagged(fs []state.Finding) []state.Finding {
	out := make([]state.Finding, 0, len(fs))
	for _, f := range fs {
		f.Text = uxPrefix + f.Text
		out = append(out, f)
	}
	return out
}
