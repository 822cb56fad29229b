package render

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/cadence-run/cadence/planner"
)

// ANSI SGR codes of the text renderer.
const (
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrMagenta = "35"
	sgrCyan    = "36"
	sgrRedBold = "1;31"
)

// actionColor is the colour of an action's symbol.
func actionColor(a planner.Action) string {
	switch a {
	case planner.ActionRun:
		return sgrGreen
	case planner.ActionResume:
		return sgrYellow
	case planner.ActionBlocked:
		return sgrRed
	case planner.ActionAnswer:
		return sgrCyan
	case planner.ActionDone:
		return sgrDim
	case planner.ActionHeld, planner.ActionRefused:
		return sgrRedBold
	case planner.ActionReplace:
		return sgrMagenta
	}
	return ""
}

// painter wraps text in ANSI colours when on.
type painter bool

func (c painter) paint(code, s string) string {
	if !c || code == "" || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Column caps of the lot table, in runes: a title is cut to its cap with
// "…"; another cell longer than its cap is kept whole and pushes the rest of
// its line instead of widening every line.
var textCaps = [...]int{1, 32, 24, 48, 72, 16, 8}

// Text writes the plan as cadence plan shows it in a terminal, Terraform-like:
// a header naming the wave and its file, one aligned line per lot (action
// symbol, id, repositories, title, steps and models or the reason apply does
// not work on it, lot budget, estimate), the totals, then the warnings.
func Text(w io.Writer, p *planner.Plan, o Options) error {
	bw := bufio.NewWriter(w)
	c := painter(o.Color)
	bw.WriteString(c.paint(sgrBold, "Plan for wave \""+p.Wave+"\"") + " (" + p.File + ")\n")
	if len(p.Targets) > 0 {
		bw.WriteString(map[bool]string{true: "Target: ", false: "Targets: "}[len(p.Targets) == 1] + targetsLabel(p.Targets) + "\n")
	}
	if len(p.Replace) > 0 {
		bw.WriteString("Replace: " + strings.Join(p.Replace, ", ") + "\n")
	}
	writeExecutor(bw, p.Executor)
	bw.WriteString("\n")
	if len(p.Lots) == 0 {
		bw.WriteString("  No lots in the plan.\n")
	}
	writeLotLines(bw, p, c)

	bw.WriteString("\n")
	lines := totalsLines(p)
	width := 0
	for _, l := range lines {
		width = max(width, len(l.label)+1)
	}
	for _, l := range lines {
		bw.WriteString(c.paint(sgrBold, l.label+":") + strings.Repeat(" ", width-len(l.label)) + " " + l.value + "\n")
	}

	if len(p.Warnings) > 0 {
		bw.WriteString("\n" + c.paint(sgrBold, "Warnings:") + "\n")
	}
	for _, wn := range p.Warnings {
		if o.CompactWarnings && !wn.Refuses {
			continue
		}
		mark := c.paint(sgrYellow, "⚠")
		if wn.Refuses {
			mark = c.paint(sgrRedBold, "⚠")
		}
		bw.WriteString("  " + mark + " " + c.paint(sgrYellow, Visible(oneLine(warningText(wn)), false)) + "\n")
		files, more := warningFiles(wn)
		for _, f := range files {
			bw.WriteString("      " + Visible(f, false) + "\n")
		}
		if more > 0 {
			bw.WriteString("      … and " + plural(more, "more file", "more files") + "\n")
		}
	}
	if n := compacted(p, o); n > 0 {
		bw.WriteString("  " + c.paint(sgrYellow, "⚠") + " " + c.paint(sgrYellow, plural(n, "warning", "warnings")+" (without -compact-warnings, plan shows them)") + "\n")
	}
	return bw.Flush()
}

// compacted is how many warnings of p Text sums up on one line: those that
// do not refuse, with CompactWarnings; 0 otherwise.
func compacted(p *planner.Plan, o Options) int {
	n := 0
	for _, wn := range p.Warnings {
		if o.CompactWarnings && !wn.Refuses {
			n++
		}
	}
	return n
}

// writeLotLines writes the aligned lot table.
func writeLotLines(bw *bufio.Writer, p *planner.Plan, c painter) {
	rows := make([][len(textCaps)]string, len(p.Lots))
	var widths [len(textCaps)]int
	defaults := false
	for i := range p.Lots {
		lp := &p.Lots[i]
		rows[i] = [len(textCaps)]string{lp.Action.Symbol(), lp.ID, repoLabel(lp), clip(Visible(titleLabel(lp), false), textCaps[3]),
			Visible(whatLabel(lp), false), budgetLabel(lp), estimateLabel(lp)}
		if lp.Action.Pending() && !lp.EstimateSet {
			defaults = true
		}
		for j, cell := range rows[i] {
			if n := utf8.RuneCountInString(cell); n <= textCaps[j] {
				widths[j] = max(widths[j], n)
			}
		}
	}
	var line strings.Builder
	for i := range p.Lots {
		lp := &p.Lots[i]
		line.Reset()
		line.WriteString("  ")
		// last is the last non-empty cell: nothing is padded after it.
		last := 0
		for j, cell := range rows[i] {
			if cell != "" {
				last = j
			}
		}
		for j := 0; j <= last; j++ {
			cell := rows[i][j]
			pad := 0
			if j < last {
				pad = max(0, widths[j]-utf8.RuneCountInString(cell))
			}
			switch {
			case j == 0 && lp.Action != planner.ActionDone:
				cell = c.paint(actionColor(lp.Action), cell)
			case j == 4 && (lp.Action == planner.ActionHeld || lp.Action == planner.ActionRefused || lp.Action == planner.ActionBlocked || lp.Action == planner.ActionAnswer):
				cell = c.paint(actionColor(lp.Action), cell)
			}
			line.WriteString(cell)
			if j < last {
				line.WriteString(strings.Repeat(" ", pad))
				switch {
				case j == 0:
					line.WriteString(" ")
				case widths[j] > 0 || cell != "":
					line.WriteString("  ")
				}
			}
		}
		s := line.String()
		if lp.Action == planner.ActionDone {
			s = "  " + c.paint(sgrDim, s[2:])
		}
		bw.WriteString(s + "\n")
	}
	if defaults {
		bw.WriteString("\n  ~ before an estimate: the default of a lot that sets none\n")
	}
}
