package spec

import (
	"reflect"
	"testing"
	"time"
)

// decoded is the part of a Config that does not depend on the syntax it was
// written in: no source ranges, references replaced by names.
type decoded struct {
	Wave   decodedWave
	Agents []decodedAgent
	Repos  []decodedRepo
	Lots   []decodedLot
}

type decodedWave struct {
	Name        string
	Budget      Tokens
	BudgetUSD   USD
	MaxSessions int
	OnQuota     OnQuota
	Templates   string
}

type decodedAgent struct {
	Name, Kind, Command, FallbackModel string
	// Own are the kind's own attributes (Agent.Body), evaluated.
	Own     map[string]string
	Builtin bool
}

// ownAttrs evaluates the attributes of a's own body, by name.
func ownAttrs(a *Agent) map[string]string {
	if a.Body == nil {
		return nil
	}
	attrs, _ := a.Body.JustAttributes()
	out := map[string]string{}
	for name, attr := range attrs {
		v, _ := attr.Expr.Value(a.EvalContext)
		out[name] = v.GoString()
	}
	return out
}

type decodedRepo struct {
	Name, Path, RawPath, Base, Test, Changelog string
	Parallel                                   int
}

type decodedLot struct {
	ID                               string
	Index                            int
	Kind                             LotKind
	Title, Brief, Run                string
	Repo, Agent                      string
	Also, DependsOn                  []string
	Model, ReviewModel               string
	FixPasses                        int
	Timeout, ReviewTimeout, Estimate time.Duration
	EstimateSet                      bool
	Budget                           Tokens
	Precheck, Small                  bool
	OnConflict                       OnConflict
}

func project(cfg *Config) decoded {
	w := cfg.Wave
	out := decoded{Wave: decodedWave{w.Name, w.Budget, w.BudgetUSD, w.MaxSessions, w.OnQuota, w.Templates}}
	for _, a := range cfg.Agents {
		out.Agents = append(out.Agents, decodedAgent{a.Name, a.Kind, a.Command, a.FallbackModel, ownAttrs(a), a.Builtin})
	}
	for _, r := range cfg.Repos {
		out.Repos = append(out.Repos, decodedRepo{r.Name, r.Path, r.RawPath, r.Base, r.Test, r.Changelog, r.Parallel})
	}
	for _, l := range cfg.Lots {
		dl := decodedLot{
			ID: l.ID, Index: l.Index, Kind: l.Kind, Title: l.Title, Brief: l.Brief, Run: l.Run,
			Model: l.Model, ReviewModel: l.ReviewModel, FixPasses: l.FixPasses,
			Timeout: l.Timeout, ReviewTimeout: l.ReviewTimeout, Estimate: l.Estimate, EstimateSet: l.EstimateSet,
			Budget: l.Budget, Precheck: l.Precheck, Small: l.Small, OnConflict: l.OnConflict,
		}
		if l.Repo != nil {
			dl.Repo = l.Repo.Name
		}
		if l.Agent != nil {
			dl.Agent = l.Agent.Name
		}
		for _, r := range l.Also {
			dl.Also = append(dl.Also, r.Name)
		}
		for _, d := range l.DependsOn {
			dl.DependsOn = append(dl.DependsOn, d.ID)
		}
		out.Lots = append(out.Lots, dl)
	}
	return out
}

// TestDesignExampleJSON checks that the JSON-syntax translation of the design
// example decodes to the same wave, agents, repos and lots as the native one.
func TestDesignExampleJSON(t *testing.T) {
	native, diags := NewLoader().LoadFile("testdata/design/wave.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	js, diags := NewLoader().LoadFile("testdata/design/wave.hcl.json", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(diags) > 0 {
		t.Errorf("warnings from the JSON file: %v", diags)
	}
	want, got := project(native), project(js)
	if len(want.Lots) != 3 || want.Lots[0].Brief != "Build a token store.\n" {
		t.Fatalf("the native example did not decode as expected: %+v", want.Lots)
	}
	if !reflect.DeepEqual(got.Wave, want.Wave) {
		t.Errorf("wave:\n json   %+v\n native %+v", got.Wave, want.Wave)
	}
	if !reflect.DeepEqual(got.Agents, want.Agents) {
		t.Errorf("agents:\n json   %+v\n native %+v", got.Agents, want.Agents)
	}
	if !reflect.DeepEqual(got.Repos, want.Repos) {
		t.Errorf("repos:\n json   %+v\n native %+v", got.Repos, want.Repos)
	}
	if len(got.Lots) != len(want.Lots) {
		t.Fatalf("json has %d lots, native %d", len(got.Lots), len(want.Lots))
	}
	for i := range want.Lots {
		if !reflect.DeepEqual(got.Lots[i], want.Lots[i]) {
			t.Errorf("lot %d:\n json   %+v\n native %+v", i, got.Lots[i], want.Lots[i])
		}
	}
}
