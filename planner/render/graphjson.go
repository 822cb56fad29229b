package render

import (
	"io"

	"github.com/cadence-run/cadence/planner"
)

// jsonGraph is the JSON form of the lots' graph (cadence graph -json).
// Keys are snake_case and always present, as in the plan's JSON form.
type jsonGraph struct {
	FormatVersion int        `json:"format_version"`
	Wave          string     `json:"wave"`
	Nodes         []jsonNode `json:"nodes"`
	Edges         []jsonEdge `json:"edges"`
}

// jsonNode is one lot: its id, title ((sensitive) when derived from a
// sensitive value), kind ("agent" or "command") and the action apply
// would take (the plan's actions).
type jsonNode struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	Action string `json:"action"`
}

// jsonEdge goes from a dependency (from) to its dependent (to).
type jsonEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// GraphJSON writes the plan's lots as a graph in JSON (cadence graph
// -json): one node per lot in plan order, and an edge from each dependency
// in the plan to its dependent, in the order of the lots and their
// depends_on. format_version is planner.FormatVersion.
func GraphJSON(w io.Writer, p *planner.Plan) error {
	g := jsonGraph{FormatVersion: p.FormatVersion, Wave: p.Wave, Nodes: []jsonNode{}, Edges: []jsonEdge{}}
	in := make(map[string]bool, len(p.Lots))
	for i := range p.Lots {
		lp := &p.Lots[i]
		in[lp.ID] = true
		g.Nodes = append(g.Nodes, jsonNode{ID: lp.ID, Title: lp.Title, Kind: lp.Kind.String(), Action: string(lp.Action)})
	}
	for i := range p.Lots {
		for _, d := range p.Lots[i].DependsOn {
			if in[d] {
				g.Edges = append(g.Edges, jsonEdge{From: d, To: p.Lots[i].ID})
			}
		}
	}
	return writeIndented(w, g)
}
