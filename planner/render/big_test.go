package render

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/schemas/schemacheck"
	"github.com/cadence-run/cadence/spec"
)

const bigLots = 10_000

// bigWave is the source of a generated wave: bigLots lots over five
// repositories, each depending on up to three random earlier lots (fixed
// seed), every tenth a command lot, long titles with '|', '<' and '&'.
func bigWave() []byte {
	r := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	b.WriteString("wave \"big\" {\n  budget = \"900M\"\n  budget_usd = 5000\n  max_sessions = 4\n}\n\n")
	for i := range 5 {
		fmt.Fprintf(&b, "repo \"r%d\" {\n  path = \"repos/r%d\"\n  test = \"make test\"\n  parallel = 2\n}\n\n", i, i)
	}
	for i := range bigLots {
		fmt.Fprintf(&b, "lot \"L%05d\" {\n  repo = repo.r%d\n", i, r.IntN(5))
		fmt.Fprintf(&b, "  title = \"Lot %d | rework the <Widget%d> & its %s\"\n", i, i%97,
			strings.Repeat("very long description of the work ", 1+r.IntN(4)))
		if i%10 == 9 {
			fmt.Fprintf(&b, "  run = \"make step%d\"\n", i)
		} else {
			fmt.Fprintf(&b, "  brief = \"Rework internal/p%d/widget.go and cite L%05d.\"\n  budget = \"%dk\"\n  estimate = \"%dm\"\n",
				i%50, i, 50+r.IntN(300), 10+r.IntN(120))
		}
		if i > 0 {
			seen := map[int]bool{}
			var deps []string
			for range r.IntN(4) {
				d := r.IntN(i)
				if !seen[d] {
					seen[d] = true
					deps = append(deps, fmt.Sprintf("lot.L%05d", d))
				}
			}
			if len(deps) > 0 {
				fmt.Fprintf(&b, "  depends_on = [%s]\n", strings.Join(deps, ", "))
			}
		}
		b.WriteString("}\n\n")
	}
	return []byte(b.String())
}

// bigState marks the first lots done, hands some back and leaves questions
// on others.
func bigState(done int) *state.State {
	st := &state.State{FormatVersion: state.FormatVersion, Wave: "big", Lots: map[string]*state.Lot{}}
	for i := range bigLots {
		id := fmt.Sprintf("L%05d", i)
		switch {
		case i < done:
			st.Lots[id] = &state.Lot{Status: state.LotDone}
		case i%997 == 0:
			st.Lots[id] = &state.Lot{Status: state.LotHandedBack, Cause: "review not conform after 2 fix passes: <Widget> | still racy"}
		case i%1009 == 0 && i%10 != 9:
			st.Lots[id] = &state.Lot{Status: state.LotQuestion, Questions: []state.Question{{Text: strings.Repeat("Which <store> | should it use?\n", 20)}}}
		}
	}
	return st
}

var (
	bigOnce   sync.Once
	bigCfg    *spec.Config
	bigPlans  = map[int]*planner.Plan{}
	bigPlanMu sync.Mutex
)

// bigPlan builds (once per done count) the plan of the generated wave with
// the first done lots done.
func bigPlan(t testing.TB, done int) *planner.Plan {
	t.Helper()
	bigOnce.Do(func() {
		cfg, diags := spec.NewLoader().LoadBytes(bigWave(), "big/wave.hcl", spec.Options{})
		if diags.HasErrors() {
			panic(diags.Error())
		}
		bigCfg = cfg
	})
	bigPlanMu.Lock()
	defer bigPlanMu.Unlock()
	if p := bigPlans[done]; p != nil {
		return p
	}
	p := build(t, planner.Input{Config: bigCfg, State: bigState(done), Options: planner.Options{Jobs: 2}})
	bigPlans[done] = p
	return p
}

var noteRE = regexp.MustCompile(`… and ([0-9,]+) more (done )?lots? not shown`)

// checkMarkdown renders p, checks the size limit, and that every lot is
// either a table row or counted in a "not shown" note.
func checkMarkdown(t *testing.T, p *planner.Plan) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Markdown(&buf, p); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if len(md) >= MarkdownLimit {
		t.Fatalf("markdown is %d bytes, limit %d", len(md), MarkdownLimit)
	}
	rows := strings.Count(md, "\n| `")
	hidden := 0
	for _, m := range noteRE.FindAllStringSubmatch(md, -1) {
		n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		hidden += n
	}
	if rows+hidden != len(p.Lots) {
		t.Fatalf("%d rows + %d not shown != %d lots", rows, hidden, len(p.Lots))
	}
	if hidden > 0 && !strings.Contains(md, "run <code>cadence plan</code> locally for the full list") {
		t.Fatal("the note does not say how to see the full list")
	}
	return md
}

func TestMarkdown10k(t *testing.T) {
	p := bigPlan(t, 4000)
	md := checkMarkdown(t, p)
	if !noteRE.MatchString(md) {
		t.Fatal("no note about the lots left out")
	}
	if strings.Contains(md, "| `=` done") {
		t.Error("done lots shown while lots that are not done were left out")
	}
	for _, s := range []string{"\\| rework the &lt;Widget", "`!` handed back / failed", "`?` waiting for an answer"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
	if strings.Contains(md, "<Widget") {
		t.Error("unescaped < in markdown")
	}
	t.Logf("%d bytes, %d rows", len(md), strings.Count(md, "\n| `"))
}

// TestMarkdownMostlyDone: the lots that are not done all fit; the done ones
// are folded and cut.
func TestMarkdownMostlyDone(t *testing.T) {
	p := bigPlan(t, bigLots-30)
	md := checkMarkdown(t, p)
	if !strings.Contains(md, "<details><summary>9,970 done lots</summary>") || !strings.Contains(md, "more done lots not shown") {
		t.Fatalf("done lots not folded and cut:\n%s", md[:2000])
	}
}

// TestMarkdownPathological: a hand-made plan with huge texts everywhere
// still fits.
func TestMarkdownPathological(t *testing.T) {
	long := strings.Repeat("x|<&\n", 5000)
	p := &planner.Plan{FormatVersion: planner.FormatVersion, Wave: long, File: long,
		Targets: []string{long, long}, Replace: []string{long}}
	p.Totals.ByAction = map[planner.Action]int{}
	for i := range 3000 {
		a := planner.Actions[i%len(planner.Actions)]
		p.Lots = append(p.Lots, planner.LotPlan{ID: fmt.Sprintf("L%d", i), Title: long, Action: a, Reason: long,
			Repo: long, Also: []string{long}, Steps: []planner.Step{{Kind: state.StepImplement, Model: long}}})
		p.Totals.ByAction[a]++
		p.Repos = append(p.Repos, planner.RepoPlan{Name: long, Test: long, Parallel: 1})
	}
	for i := range 500 {
		p.Warnings = append(p.Warnings, planner.Warning{Kind: planner.WarnDirty, Message: long, Refuses: i%2 == 0,
			Files: []string{long, long, long, long, long, long, long, long, long, long, long, long}})
	}
	p.Totals.Lots = len(p.Lots)
	checkMarkdown(t, p)
}

func TestJSON10kValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	var buf bytes.Buffer
	if err := JSON(&buf, bigPlan(t, 4000)); err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Validate("plan.schema.json", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

func benchRender(b *testing.B, render func(io.Writer, *planner.Plan) error) {
	p := bigPlan(b, 4000)
	b.ReportAllocs()
	for b.Loop() {
		if err := render(io.Discard, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarkdown10k(b *testing.B) { benchRender(b, Markdown) }

func BenchmarkText10k(b *testing.B) {
	benchRender(b, func(w io.Writer, p *planner.Plan) error { return Text(w, p, Options{Color: true}) })
}

func BenchmarkJSON10k(b *testing.B) { benchRender(b, JSON) }

func BenchmarkDOT10k(b *testing.B) { benchRender(b, DOT) }

func BenchmarkMermaid10k(b *testing.B) { benchRender(b, Mermaid) }
