package spec

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
)

func load(t *testing.T, src string, opts Options) (*Config, hcl.Diagnostics) {
	t.Helper()
	return NewLoader().LoadBytes([]byte(src), filepath.Join(t.TempDir(), "wave.hcl"), opts)
}

func TestDesignExample(t *testing.T) {
	cfg, diags := NewLoader().LoadFile("testdata/design/wave.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	w := cfg.Wave
	if w.Name != "auth-rework" || w.Budget != 2_000_000 || w.BudgetUSD != 40_000_000 || w.MaxSessions != 2 || w.OnQuota != OnQuotaSuspend {
		t.Errorf("wave = %+v", w)
	}
	if len(cfg.Lots) != 3 || len(cfg.Repos) != 2 || len(cfg.Agents) != 1 {
		t.Fatalf("lots %d repos %d agents %d", len(cfg.Lots), len(cfg.Repos), len(cfg.Agents))
	}
	api := cfg.Repo("api")
	if api.Parallel != 2 || api.Test != "go test ./..." || api.Changelog != "CHANGELOG.md" || !filepath.IsAbs(api.Path) {
		t.Errorf("repo api = %+v", api)
	}
	l40, l41, docs := cfg.Lot("L40"), cfg.Lot("L41"), cfg.Lot("docs")
	if l40.Brief != "Build a token store.\n" || l40.Title != "Token store" || l40.Model != "sonnet" || l40.ReviewModel != "opus" {
		t.Errorf("L40 = %+v", l40)
	}
	if l40.Estimate != time.Hour || l40.EstimateSet || l40.Agent != cfg.Agent("claude") || l40.Timeout != 45*time.Minute {
		t.Errorf("L40 settings = %+v", l40)
	}
	if l41.Model != "opus" || l41.Budget != 400_000 || l41.Estimate != 3*time.Hour || len(l41.DependsOn) != 1 || l41.DependsOn[0] != l40 {
		t.Errorf("L41 = %+v", l41)
	}
	if len(l41.Also) != 1 || l41.Also[0] != cfg.Repo("web") || !strings.HasPrefix(l41.Brief, "Add OAuth") {
		t.Errorf("L41 also/brief = %+v", l41)
	}
	if docs.Kind != CommandLot || docs.Model != "" || docs.Agent != nil || docs.Estimate != time.Minute || docs.DependsOn[0] != l41 {
		t.Errorf("docs = %+v", docs)
	}
}
