package render

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/planner"
)

// graphStyle is how an action looks in a graph.
type graphStyle struct {
	fill, stroke, font string
	dashed, bold       bool
}

// graphStyles gives each action its look: green run, yellow resume, magenta
// replace, cyan answer, red held and refused (bold) and blocked (dashed),
// grey done.
var graphStyles = map[planner.Action]graphStyle{
	planner.ActionRun:     {fill: "#dcfce7", stroke: "#16a34a", font: "#14532d"},
	planner.ActionResume:  {fill: "#fef9c3", stroke: "#ca8a04", font: "#713f12"},
	planner.ActionReplace: {fill: "#fae8ff", stroke: "#c026d3", font: "#701a75"},
	planner.ActionAnswer:  {fill: "#cffafe", stroke: "#0891b2", font: "#164e63"},
	planner.ActionHeld:    {fill: "#fee2e2", stroke: "#dc2626", font: "#7f1d1d", bold: true},
	planner.ActionRefused: {fill: "#fee2e2", stroke: "#dc2626", font: "#7f1d1d", bold: true},
	planner.ActionBlocked: {fill: "#fee2e2", stroke: "#dc2626", font: "#7f1d1d", dashed: true},
	planner.ActionDone:    {fill: "#f3f4f6", stroke: "#9ca3af", font: "#6b7280"},
}

// graphLabel is a lot's label lines: its id, its title when it has one.
func graphLabel(lp *planner.LotPlan) []string {
	if t := titleLabel(lp); t != lp.ID {
		return []string{lp.ID, t}
	}
	return []string{lp.ID}
}

// DOT writes the plan's lots as a Graphviz digraph (cadence graph): one node
// per lot, labelled with its id and title and styled by its action, and an
// edge from each dependency to its dependent. Ids are quoted, so '.' and '-'
// in them are safe.
func DOT(w io.Writer, p *planner.Plan) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("digraph " + dotQuote(p.Wave) + " {\n")
	bw.WriteString("  rankdir=LR;\n")
	bw.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n")
	bw.WriteString("  edge [color=\"#6b7280\"];\n")
	for i := range p.Lots {
		lp := &p.Lots[i]
		s := graphStyles[lp.Action]
		style := "rounded,filled"
		if s.dashed {
			style += ",dashed"
		}
		if s.bold {
			style += ",bold"
		}
		tooltip := string(lp.Action)
		if lp.Action != planner.ActionDone {
			tooltip = whatLabel(lp)
		}
		bw.WriteString("  " + dotQuote(lp.ID) + " [label=" + dotQuote(strings.Join(graphLabel(lp), "\n")) +
			", tooltip=" + dotQuote(tooltip) + ", style=" + dotQuote(style) + ", fillcolor=" + dotQuote(s.fill) +
			", color=" + dotQuote(s.stroke) + ", fontcolor=" + dotQuote(s.font) + "];\n")
	}
	in := make(map[string]bool, len(p.Lots))
	for i := range p.Lots {
		in[p.Lots[i].ID] = true
	}
	for i := range p.Lots {
		lp := &p.Lots[i]
		for _, d := range lp.DependsOn {
			if in[d] {
				bw.WriteString("  " + dotQuote(d) + " -> " + dotQuote(lp.ID) + ";\n")
			}
		}
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// dotEscaper escapes a DOT quoted string; a newline becomes a centred line
// break.
var dotEscaper = newEscaper(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\n`)

// dotQuote returns s as a DOT quoted string, its control characters but
// newlines made visible (Visible).
func dotQuote(s string) string { return `"` + dotEscaper.escape(Visible(s, true)) + `"` }

// Mermaid writes the plan's lots as a Mermaid flowchart (cadence graph
// -format mermaid), raw: a caller that wants a Markdown fence adds it. Node
// ids are n0, n1, ... in plan order, labels are quoted with Mermaid's entity
// codes, edges go from dependency to dependent, and each action has a class.
func Mermaid(w io.Writer, p *planner.Plan) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("flowchart LR\n")
	index := make(map[string]int, len(p.Lots))
	used := map[planner.Action]bool{}
	for i := range p.Lots {
		lp := &p.Lots[i]
		index[lp.ID] = i
		used[lp.Action] = true
		label := graphLabel(lp)
		for j := range label {
			label[j] = mermaidEscaper.escape(Visible(label[j], false))
		}
		bw.WriteString("  n" + strconv.Itoa(i) + "[\"" + strings.Join(label, "<br/>") + "\"]:::" + mermaidClass(lp.Action) + "\n")
	}
	for i := range p.Lots {
		for _, d := range p.Lots[i].DependsOn {
			if j, ok := index[d]; ok {
				bw.WriteString("  n" + strconv.Itoa(j) + " --> n" + strconv.Itoa(i) + "\n")
			}
		}
	}
	for _, a := range planner.Actions {
		if !used[a] {
			continue
		}
		s := graphStyles[a]
		def := "fill:" + s.fill + ",stroke:" + s.stroke + ",color:" + s.font
		if s.dashed {
			def += ",stroke-dasharray:5 5"
		}
		if s.bold {
			def += ",stroke-width:3px"
		}
		bw.WriteString("  classDef " + mermaidClass(a) + " " + def + "\n")
	}
	return bw.Flush()
}

// mermaidClass is an action's class name (prefixed: Mermaid reserves some
// words, such as end).
func mermaidClass(a planner.Action) string { return "act_" + string(a) }

// mermaidEscaper writes the characters Mermaid would read as markup as its
// decimal entity codes (#34; for a double quote), and folds newlines.
var mermaidEscaper = newEscaper("#", "#35;", `"`, "#34;", "<", "#60;", ">", "#62;", "&", "#38;", "|", "#124;",
	"\n", " ", "\r", " ")
