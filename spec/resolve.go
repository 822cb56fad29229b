package spec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/internal/dag"
	"github.com/hashicorp/hcl/v2"
)

// ref is one reference written in a wave file: kind.name at rng.
type ref struct {
	kind, name string
	rng        hcl.Range
}

// parseRef reads expr as a reference of the given kind ("lot", "repo",
// "agent"): kind.name, or kind["name"] for lot ids that contain dots. In JSON
// syntax the reference is a string, "repo.api".
func (d *decoder) parseRef(expr hcl.Expression, kind string) (ref, bool) {
	tr, diags := hcl.AbsTraversalForExpr(expr)
	bad := func() (ref, bool) {
		d.errorf(expr.Range(), "Invalid reference", "A reference to a %s is expected here, like %s.", kind, example(kind))
		return ref{}, false
	}
	if diags.HasErrors() || len(tr) != 2 {
		return bad()
	}
	if tr.RootName() != kind {
		if other := tr.RootName(); other == "lot" || other == "repo" || other == "agent" {
			d.errorf(expr.Range(), "Wrong kind of reference", "A reference to a %s is expected here, like %s; this refers to a %s.", kind, example(kind), other)
			return ref{}, false
		}
		return bad()
	}
	switch step := tr[1].(type) {
	case hcl.TraverseAttr:
		return ref{kind, step.Name, expr.Range()}, true
	case hcl.TraverseIndex:
		if step.Key.Type().FriendlyName() == "string" && !step.Key.IsNull() {
			return ref{kind, step.Key.AsString(), expr.Range()}, true
		}
	}
	return bad()
}

func example(kind string) string {
	return map[string]string{"lot": "lot.L40", "repo": "repo.api", "agent": "agent.claude"}[kind]
}

func (d *decoder) parseRefs(attr *hcl.Attribute, kind string) []ref {
	if attr == nil {
		return nil
	}
	exprs, diags := hcl.ExprList(attr.Expr)
	if diags.HasErrors() {
		d.errorf(attr.Expr.Range(), "Invalid reference list", "%q must be a list of references, like [%s].", attr.Name, example(kind))
		return nil
	}
	out := make([]ref, 0, len(exprs))
	seen := map[string]bool{}
	for _, e := range exprs {
		r, ok := d.parseRef(e, kind)
		if !ok {
			continue
		}
		if seen[r.name] {
			d.errorf(r.rng, "Duplicate reference", "%s.%s is listed twice in %q.", kind, r.name, attr.Name)
			continue
		}
		seen[r.name] = true
		out = append(out, r)
	}
	return out
}

// unknownRef reports a reference to a name that is not declared.
func (d *decoder) unknownRef(r ref, names func() []string) {
	detail := fmt.Sprintf("There is no %s named %q in this wave.", r.kind, r.name)
	if s := Suggest(r.name, names()); s != "" {
		detail += fmt.Sprintf(" Did you mean %s.%s?", r.kind, s)
	}
	d.errorf(r.rng, "Reference to undeclared "+r.kind, "%s", detail)
}

func (d *decoder) repoNames() []string {
	out := make([]string, len(d.cfg.Repos))
	for i, r := range d.cfg.Repos {
		out[i] = r.Name
	}
	return out
}

func (d *decoder) lotIDs() []string {
	out := make([]string, len(d.cfg.Lots))
	for i, l := range d.cfg.Lots {
		out[i] = l.ID
	}
	return out
}

func (d *decoder) agentNames() []string {
	out := make([]string, len(d.cfg.Agents))
	for i, a := range d.cfg.Agents {
		out[i] = a.Name
	}
	return out
}

// resolve is the second pass: references between blocks, then the checks that
// need them (budgets, the dependency graph).
func (d *decoder) resolve() {
	defaultAgent := d.agentRef(d.defaults.agent)
	defaultReview := d.agentRef(d.defaults.reviewAgent)
	for _, l := range d.cfg.Lots {
		attrs := d.lotAttrs[l]
		if a := attrs["repo"]; a != nil {
			if r, ok := d.parseRef(a.Expr, "repo"); ok {
				if l.Repo = d.cfg.Repo(r.name); l.Repo == nil {
					d.unknownRef(r, d.repoNames)
				}
			}
		} else if l.Kind == AgentLot {
			d.errorf(l.DeclRange, "Missing repo", "Agent lot %q needs a repo to work in: add repo = repo.NAME.", l.ID)
		}
		for _, r := range d.parseRefs(attrs["also"], "repo") {
			repo := d.cfg.Repo(r.name)
			switch {
			case repo == nil:
				d.unknownRef(r, d.repoNames)
			case repo == l.Repo:
				d.errorf(r.rng, "Own repo in also", "repo.%s is lot %q's own repo; also lists the other repositories it edits.", r.name, l.ID)
			default:
				l.Also = append(l.Also, repo)
				d.checkAlsoName(l, repo.Name, r.rng)
			}
		}
		if len(l.Also) > 0 && l.Kind == CommandLot {
			d.errorf(attrs["also"].NameRange, "Not for a command lot", "\"also\" applies to agent lots only; lot %q is a command lot.", l.ID)
		}
		for _, r := range d.parseRefs(attrs["depends_on"], "lot") {
			dep := d.cfg.Lot(r.name)
			switch {
			case dep == nil:
				d.unknownRef(r, d.lotIDs)
			case dep == l:
				d.errorf(r.rng, "Self-dependency", "Lot %q depends on itself.", l.ID)
			default:
				l.DependsOn = append(l.DependsOn, dep)
				l.DependsOnRanges = append(l.DependsOnRanges, r.rng)
			}
		}
		if l.Kind == AgentLot {
			d.resolveAgents(l, defaultAgent, defaultReview)
		}
		if w := d.cfg.Wave.Budget; w > 0 && l.Budget > w {
			d.errorf(d.lotBudget[l], "Lot budget above the wave budget", "Lot %q may spend %s, more than the whole wave's budget of %s.", l.ID, l.Budget, w)
		}
	}
	d.checkCycles()
}

// agentRef resolves an agent attribute of the defaults block (nil when
// not written, or naming no agent: reported once, here).
func (d *decoder) agentRef(a *hcl.Attribute) *Agent {
	if a == nil {
		return nil
	}
	r, ok := d.parseRef(a.Expr, "agent")
	if !ok {
		return nil
	}
	ag := d.cfg.Agent(r.name)
	if ag == nil {
		d.unknownRef(r, d.agentNames)
	}
	return ag
}

// resolveAgents sets an agent lot's agents and the settings that follow
// from their kinds: Agent (its agent, else the defaults', else the
// built-in), ReviewAgent (its review_agent, else the defaults', else
// Agent), an unwritten model of an agent of another kind than claude the
// agent's own (Agent.DefaultModel; "" for the CLI's default: DefaultModel
// and DefaultReviewModel are Claude's), and an unwritten fallback_model
// each agent's own.
func (d *decoder) resolveAgents(l *Lot, defaultAgent, defaultReview *Agent) {
	pick := func(attr, defaultAttr *hcl.Attribute, def *Agent) *Agent {
		if attr == nil || attr == defaultAttr {
			return def
		}
		return d.agentRef(attr)
	}
	l.Agent = pick(d.lotAgent[l], d.defaults.agent, defaultAgent)
	if l.Agent == nil {
		l.Agent = d.cfg.Agent(BuiltinAgent)
	}
	l.ReviewAgent = pick(d.lotReviewAgent[l], d.defaults.reviewAgent, defaultReview)
	if l.ReviewAgent == nil {
		l.ReviewAgent = l.Agent
	}
	w := d.lotWritten[l]
	if !w.model && l.Agent.Kind != AgentKindClaude {
		l.Model = l.Agent.DefaultModel()
	}
	if !w.reviewModel && l.ReviewAgent.Kind != AgentKindClaude {
		l.ReviewModel = l.ReviewAgent.DefaultModel()
	}
	if !w.fallback {
		l.FallbackModel, l.ReviewFallbackModel = l.Agent.FallbackModel, l.ReviewAgent.FallbackModel
	} else {
		l.ReviewFallbackModel = l.FallbackModel
	}
}

// Graph returns the dependency graph of the lots: an edge from a dependency to
// each lot that depends on it.
func (c *Config) Graph() *dag.Graph[*Lot] {
	g := dag.New[*Lot](len(c.Lots))
	for _, l := range c.Lots {
		g.Add(l)
	}
	for _, l := range c.Lots {
		for _, dep := range l.DependsOn {
			g.Connect(dep, l)
		}
	}
	return g
}

// maxCycleEdges is the most edges of one cycle its diagnostic describes:
// a cycle through thousands of lots is told by its first edges, its length
// and "and N more edges", so that its diagnostic stays a few kilobytes
// (a pull-request comment is under 65,000 characters: docs/commands.md,
// plan -format markdown).
const maxCycleEdges = 20

// checkCycles reports every dependency cycle once, with its first
// maxCycleEdges edges and the place of each depends_on edge among them.
func (d *decoder) checkCycles() {
	for _, cyc := range d.cfg.Graph().Cycles() {
		// cyc is [a, b, ..., a] with edges a→b meaning b depends on a.
		edges := len(cyc) - 1
		ids := make([]string, 0, min(len(cyc), maxCycleEdges+1))
		for i := len(cyc) - 1; i >= 0 && len(ids) <= maxCycleEdges; i-- {
			ids = append(ids, cyc[i].ID)
		}
		var lines []string
		var subject hcl.Range
		for i := len(cyc) - 1; i > 0 && len(lines) < maxCycleEdges; i-- {
			dependent, dep := cyc[i], cyc[i-1]
			rng := dependent.DeclRange
			for j, x := range dependent.DependsOn {
				if x == dep {
					rng = dependent.DependsOnRanges[j]
				}
			}
			if i == len(cyc)-1 {
				subject = rng
			}
			lines = append(lines, fmt.Sprintf("  %s depends on %s (%s)", dependent.ID, dep.ID, rng.String()))
		}
		path := strings.Join(ids, " → ")
		if edges > maxCycleEdges {
			path += fmt.Sprintf(" → … → %s (a cycle of %s lots)", cyc[len(cyc)-1].ID, thousands(edges))
			lines = append(lines, fmt.Sprintf("  and %s more edges", thousands(edges-maxCycleEdges)))
		}
		d.errorf(subject, "Dependency cycle", "These lots wait for each other, so none of them can start: %s.\n%s",
			path, strings.Join(lines, "\n"))
	}
}

// thousands writes n with a comma every three digits: "19,980".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
