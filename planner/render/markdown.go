package render

import (
	"io"
	"strings"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// MarkdownLimit is the most bytes Markdown writes: GitHub refuses comments
// of more than 65,536 characters, and a byte count is never below the
// character count.
const MarkdownLimit = 65000

// Markdown layout limits.
const (
	// smallPlan is the most lots shown in one table of all lots; a bigger
	// plan shows the lots that are not done first and folds the done ones.
	smallPlan = 40
	// inlineWarnings is the most warnings listed before the rest are folded.
	inlineWarnings = 10
	// warningsBytes bounds the warnings section.
	warningsBytes = 16000
	// noteReserve is kept for the "not shown" notes and the folding markup.
	noteReserve = 1000
)

// Cell lengths in runes: longer texts are cut with "…".
const (
	titleRunes   = 100
	whatRunes    = 160
	repoRunes    = 60
	messageRunes = 400
	nameRunes    = 120
)

const localHint = "run <code>cadence plan</code> locally for the full list"

// Markdown writes the plan as a compact pull-request comment, always shorter
// than MarkdownLimit bytes: a summary line (wave, lots per action, budget,
// estimate), a table of the lots (for a big plan, the lots that are not done,
// the done ones folded in a <details> section), the warnings, and the totals
// folded. When lots must be left out it says how many. User text (titles,
// reasons, messages) is HTML-escaped, with '|' escaped and newlines folded,
// and cut when very long.
func Markdown(w io.Writer, p *planner.Plan) error {
	head := mdHead(p)
	warns := mdWarnings(p)
	totals := mdTotals(p)
	room := MarkdownLimit - 1 - noteReserve - len(head) - len(warns) - len(totals)

	var b strings.Builder
	b.Grow(min(MarkdownLimit, 4096+len(p.Lots)*200))
	b.WriteString(head)
	if len(p.Lots) == 0 {
		b.WriteString("No lots in the plan.\n\n")
	}
	var first, done []*planner.LotPlan
	for i := range p.Lots {
		lp := &p.Lots[i]
		if len(p.Lots) > smallPlan && lp.Action == planner.ActionDone {
			done = append(done, lp)
		} else {
			first = append(first, lp)
		}
	}
	if len(first) > 0 {
		n, used := mdTable(&b, first, room, !agentFree(p))
		room -= used
		if n < len(first) {
			left := len(p.Lots) - n
			note := "… and " + thousands(left) + " more " + noun(left, "lot", "lots") + " not shown"
			if len(done) > 0 {
				note += " (" + thousands(len(first)-n) + " of them not done)"
			}
			b.WriteString(note + "; " + localHint + ".\n\n")
			done = nil // the table of done lots would not fit either
		}
	} else if len(p.Lots) > 0 {
		b.WriteString("Every lot is done.\n\n")
	}
	b.WriteString(warns)
	if len(done) > 0 {
		b.WriteString("<details><summary>" + plural0(len(done), "done lot", "done lots") + "</summary>\n\n")
		n, _ := mdTable(&b, done, room, !agentFree(p))
		if n < len(done) {
			left := len(done) - n
			b.WriteString("… and " + thousands(left) + " more done " + noun(left, "lot", "lots") + " not shown; " + localHint + ".\n\n")
		}
		b.WriteString("</details>\n\n")
	}
	b.WriteString(totals)
	_, err := io.WriteString(w, b.String())
	return err
}

// plural0 is plural with thousands separators: "1 lot", "9,123 lots".
func plural0(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

// noun is one or many by n.
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// mdHead is the summary line and, when apply would refuse, a note saying so.
func mdHead(p *planner.Plan) string {
	var b strings.Builder
	t := p.Totals
	b.WriteString("**cadence plan** for wave <code>" + mdEscape(clip(p.Wave, nameRunes)) + "</code>")
	if p.File != "" {
		b.WriteString(" (<code>" + mdEscape(clip(p.File, nameRunes)) + "</code>)")
	}
	b.WriteString(": **" + p.Summary() + "** · ")
	if showBudget(p) {
		b.WriteString(mdEscape(budgetSummary(t)) + " · ")
	}
	if t.PendingAgent+t.PendingCommand == 0 {
		b.WriteString("nothing to run")
	} else {
		b.WriteString("about " + mdEscape(totalsTime(t)))
	}
	b.WriteString("\n\n")
	if len(p.Targets) > 0 {
		b.WriteString(map[bool]string{true: "Target: ", false: "Targets: "}[len(p.Targets) == 1] + targetsLabel(mdCodes(p.Targets)) + ".\n\n")
	}
	if len(p.Replace) > 0 {
		b.WriteString("Replace: " + strings.Join(mdCodes(p.Replace), ", ") + ".\n\n")
	}
	if n := len(p.Refusals()); n > 0 {
		b.WriteString("> **⚠ apply refuses** until the " + plural(n, "problem", "problems") + " marked below " +
			map[bool]string{true: "is", false: "are"}[n == 1] + " dealt with.\n\n")
	}
	return b.String()
}

// totalsTime is "6h at a cap of 2 sessions (critical path 5h)".
func totalsTime(t planner.Totals) string {
	return spec.FormatDuration(t.Estimate) + " " + capsLabel(t) + " (critical path " + spec.FormatDuration(t.CriticalPath) + ")"
}

// mdCodes renders ids as code, at most 20 of them, then how many more.
func mdCodes(ids []string) []string {
	var parts []string
	for i, id := range ids {
		if i == 20 {
			parts = append(parts, thousands(len(ids)-20)+" more")
			break
		}
		parts = append(parts, "<code>"+mdEscape(clip(id, nameRunes))+"</code>")
	}
	return parts
}

// mdTableHead opens a lot table; mdTableHeadNoBudget one without the
// Budget column (an agent-free plan's).
const (
	mdTableHead         = "| | Lot | Repo | Steps or reason | Budget | Estimate |\n|---|---|---|---|---|---|\n"
	mdTableHeadNoBudget = "| | Lot | Repo | Steps or reason | Estimate |\n|---|---|---|---|---|\n"
)

// mdTable writes a table of lots, as many rows as fit in room bytes; it
// returns the rows written and the bytes used. Without room for one row it
// writes nothing. budget says whether it has the Budget column.
func mdTable(b *strings.Builder, lots []*planner.LotPlan, room int, budget bool) (int, int) {
	used, n := 0, 0
	head := mdTableHead
	if !budget {
		head = mdTableHeadNoBudget
	}
	var row strings.Builder
	for _, lp := range lots {
		row.Reset()
		row.WriteString("| `" + lp.Action.Symbol() + "` " + lp.Words() + " | <code>" + mdEscape(lp.ID) + "</code>")
		if t := titleLabel(lp); t != "" {
			row.WriteString(" " + mdEscape(clip(t, titleRunes)))
		}
		row.WriteString(" | " + mdEscape(clip(repoLabel(lp), repoRunes)) +
			" | " + mdEscape(clip(whatLabel(lp), whatRunes)))
		if budget {
			row.WriteString(" | " + mdEscape(budgetLabel(lp)))
		}
		row.WriteString(" | " + mdEscape(estimateLabel(lp)) + " |\n")
		extra := row.Len()
		if n == 0 {
			extra += len(head)
		}
		if used+extra+1 > room {
			break
		}
		if n == 0 {
			b.WriteString(head)
		}
		b.WriteString(row.String())
		used += extra
		n++
	}
	if n > 0 {
		b.WriteString("\n")
		used++
	}
	return n, used
}

// mdWarnings is the warnings section: the refusing ones first, the first few
// listed, the others folded, all within warningsBytes.
func mdWarnings(p *planner.Plan) string {
	if len(p.Warnings) == 0 {
		return ""
	}
	var ordered []planner.Warning
	for _, refusing := range []bool{true, false} {
		for _, wn := range p.Warnings {
			if wn.Refuses == refusing {
				ordered = append(ordered, wn)
			}
		}
	}
	var b strings.Builder
	b.WriteString("**Warnings**\n\n")
	folded := false
	for i, wn := range ordered {
		item := mdWarning(wn)
		if b.Len()+len(item) > warningsBytes {
			left := len(ordered) - i
			b.WriteString("- … and " + plural0(left, "more warning", "more warnings") + "; run <code>cadence plan</code> locally for all of them\n")
			break
		}
		if i == inlineWarnings {
			b.WriteString("\n<details><summary>" + plural0(len(ordered)-i, "more warning", "more warnings") + "</summary>\n\n")
			folded = true
		}
		b.WriteString(item)
	}
	if folded {
		b.WriteString("\n</details>\n")
	}
	b.WriteString("\n")
	return b.String()
}

// mdWarning is one warning as a list item, with its files.
func mdWarning(wn planner.Warning) string {
	var b strings.Builder
	b.WriteString("- ⚠ ")
	if wn.Refuses {
		b.WriteString("**apply refuses:** ")
	}
	b.WriteString(mdEscape(clip(oneLine(wn.Message), messageRunes)) + "\n")
	files, more := warningFiles(wn)
	if len(files) > 0 {
		b.WriteString("  ")
		for i, f := range files {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("<code>" + mdEscape(clip(oneLine(f), nameRunes)) + "</code>")
		}
		if more > 0 {
			b.WriteString(" and " + plural0(more, "more file", "more files"))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// mdTotals is the folded totals section, with the legend.
func mdTotals(p *planner.Plan) string {
	var b strings.Builder
	b.WriteString("<details><summary>Totals</summary>\n\n")
	for _, l := range totalsLines(p) {
		b.WriteString("- **" + l.label + ":** " + mdEscape(l.value) + "\n")
	}
	var repos []string
	for i, r := range p.Repos {
		if i == 20 {
			repos = append(repos, "and "+thousands(len(p.Repos)-20)+" more")
			break
		}
		s := "<code>" + mdEscape(clip(r.Name, nameRunes)) + "</code> "
		if r.Test != "" {
			s += "tested by <code>" + mdEscape(clip(oneLine(r.Test), nameRunes)) + "</code>"
		} else {
			s += "no test gate"
		}
		s += ", " + plural(r.Parallel, "lot", "lots") + " at once"
		repos = append(repos, s)
	}
	if len(repos) > 0 {
		b.WriteString("- **Repositories:** " + strings.Join(repos, "; ") + "\n")
	}
	b.WriteString("\nActions: ")
	for i, a := range planner.Actions {
		if i > 0 {
			b.WriteString(" · ")
		}
		b.WriteString("`" + a.Symbol() + "` " + a.Words())
	}
	b.WriteString(". An estimate marked \\~ is the default of a lot that sets none.\n\n</details>\n")
	return b.String()
}
