package executor

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
)

// This file checks a write step's report (schemas/implement.schema.json)
// against git and against itself: an agent's word is not taken
// for what git can tell, nor for more than it says.
//
//   - Questions: entries that are no question ("N/A", "none", "no
//     questions.", empty …) are dropped with a warning on the lot
//     (realQuestions); only the rest stop the lot.
//   - Status: a report whose own status says it did not finish ("partial",
//     "blocked") hands the lot back with that status and its summary.
//   - Commits: an implement or fix session that made no commit in any of
//     the lot's repositories hands the lot back ("implement without
//     commit"). An implement is let through when the lot already has work
//     (commits since its BaseSHA, or on a neighbour's branch beyond its
//     base): a replayed implement (an answered question, an interrupted
//     step) may find its work done by the earlier session. A precheck that
//     says the work is already there hands the lot back before implement
//     runs (state.Next), so no implement follows it. A fix gets no such
//     pass: the lot always has work then, and a fix that changed nothing
//     leaves the red gate or the findings as they were. A fix-minors
//     without commit goes on, with a warning: minor findings do not block,
//     and the re-review sees the tree the review found conform.

// nonQuestionRE matches the entries of a report's questions that say
// there is no question, after normQuestion: "none", "n/a", "nothing",
// "null", "not applicable", and "no"/"none"/"nothing" followed by the
// usual words of such a statement ("no questions at this time", "none
// needed", "no further clarifications required", "nothing to ask for
// now"). A statement with anything else ("no access to the database") is
// kept: it may be the blocker itself.
var nonQuestionRE = regexp.MustCompile(`^(?:n[./]?a|null|nil|not applicable|(?:no|none|nothing)(?: (?:further|open|other|additional|more|real|outstanding))?(?: (?:questions?|clarifications?|queries|blockers?|issues|decisions?))?(?: (?:to ask|needed|required|asked|identified|remaining|pending|outstanding))?(?: (?:at (?:this|the|present) ?(?:time|moment|point|stage)?|so far|for now|right now|from me|here|yet))?)$`)

// normQuestion is q lower-cased, without the spaces, quotes, brackets,
// bullets and punctuation around it, its inner spaces made single and none
// around a slash ("- None." → "none", "(N / A)" → "n/a", "-" → "").
func normQuestion(q string) string {
	q = strings.ToLower(strings.Trim(q, " \t\r\n\"'`()[]{}*-–—.,;:!…"))
	q = strings.Join(strings.Fields(q), " ")
	return strings.ReplaceAll(strings.ReplaceAll(q, " /", "/"), "/ ", "/")
}

// nonQuestion reports whether a report's question entry q says there is no
// question: empty or blank, or matched by nonQuestionRE in any case, with
// any punctuation, quotes or bullet around it. Never for an entry holding
// "?".
func nonQuestion(q string) bool {
	if strings.Contains(q, "?") {
		return false
	}
	n := normQuestion(q)
	return n == "" || nonQuestionRE.MatchString(n)
}

// realQuestions splits a report's questions into the real ones, in order,
// and the entries dropped as no question.
func realQuestions(qs []string) (real, dropped []string) {
	for _, q := range qs {
		if nonQuestion(q) {
			dropped = append(dropped, q)
		} else {
			real = append(real, q)
		}
	}
	return real, dropped
}

// reportQuestions returns the real questions of a write step's report and
// records a warning on the lot for each entry dropped as no question.
func (lr *lotRun) reportQuestions(kind state.StepKind, r *Report) ([]string, error) {
	if r == nil {
		return nil, nil
	}
	real, dropped := realQuestions(r.Questions)
	var w []string
	for _, q := range dropped {
		w = append(w, fmt.Sprintf("the %s report listed %q as a question: dropped, it asks nothing", kind, q))
	}
	return real, lr.warn(w...)
}

// unfinished is the outcome of a write step whose report's status says it
// did not finish (anything but "done"; an empty status is taken as done),
// and whether it is one.
func unfinished(kind state.StepKind, r *Report) (state.Outcome, bool) {
	if r == nil || r.Status == "" || r.Status == "done" {
		return state.Outcome{}, false
	}
	detail := fmt.Sprintf("%s reported %q", kind, r.Status)
	if s := strings.TrimSpace(r.Summary); s != "" {
		detail += ": " + s
	}
	return state.Outcome{Kind: state.OutcomeUnfinished, Detail: detail}, true
}

// checkCommits judges a write step that ended ok against git: the commits
// its session added in the lot's repositories, which the step recorded
// from git (state.Step.CommitCount). It returns the outcome of an
// implement or fix that made no commit (OutcomeNoCommit) unless the rules
// above let it through, and whether it is one; a fix-minors without commit
// gets a warning.
func (lr *lotRun) checkCommits(ctx context.Context, kind state.StepKind, r *Report) (state.Outcome, bool, error) {
	commits := 0
	lr.r.o.Store.View(func(st *state.State) {
		if l := st.Lots[lr.id]; len(l.Steps) > 0 {
			commits = l.Steps[len(l.Steps)-1].CommitCount()
		}
	})
	if commits > 0 {
		return state.Outcome{}, false, nil
	}
	switch kind {
	case state.StepFixMinors:
		return state.Outcome{}, false, lr.warn("the fix-minors session made no commit: the minor findings stand")
	case state.StepImplement:
		if lr.hasWork(ctx) {
			return state.Outcome{}, false, nil
		}
	}
	where := "the lot's worktree"
	if len(lr.n.lot.Also) > 0 {
		where = "any of the lot's worktrees"
	}
	detail := fmt.Sprintf("%s without commit: the session ended ok but made no commit in %s", kind, where)
	if r != nil && strings.TrimSpace(r.Summary) != "" {
		detail += "; its report says: " + strings.TrimSpace(r.Summary)
	}
	return state.Outcome{Kind: state.OutcomeNoCommit, Detail: detail}, true, nil
}

// hasWork reports whether the lot has commits of its own: its branch
// beyond the BaseSHA it recorded, or a neighbour's branch beyond that
// repository's base. When git cannot tell, it says yes (the check lets the
// lot go on rather than hand back good work).
func (lr *lotRun) hasWork(ctx context.Context) bool {
	var base string
	lr.r.o.Store.View(func(st *state.State) { base = st.Lots[lr.id].BaseSHA })
	from := map[string]string{}
	for _, rp := range lr.n.lot.Repos() {
		from[rp.Name] = step.RepoBase
	}
	if base != "" {
		from[lr.n.lot.Repo.Name] = base
	}
	looked := lr.look(ctx, step.LookRequest{From: from, Commits: true}, false)
	for _, rp := range lr.n.lot.Repos() {
		l, ok := looked[rp.Name]
		if !ok || l.Err != "" || len(l.Commits) > 0 {
			return true
		}
	}
	return false
}

// warn appends warnings to the lot's record.
func (lr *lotRun) warn(w ...string) error {
	if len(w) == 0 {
		return nil
	}
	return lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Warnings = append(l.Warnings, w...) })
}
