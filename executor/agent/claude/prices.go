package claude

import (
	"regexp"
	"strings"

	"github.com/cadence-run/cadence/internal/state"
)

// Prices are a model's list prices in dollars per million tokens, which is
// also millionths of a dollar per token.
type Prices struct {
	Input, Output, CacheWrite, CacheRead float64
	// Long, when set, replaces the prices of a turn whose prompt (input,
	// cache writes and cache reads) is over LongAbove tokens.
	Long      *Prices
	LongAbove int64
}

// Micros is the price of one turn's usage, in millionths of a dollar.
func (p Prices) Micros(u state.Usage) float64 {
	if p.Long != nil && u.Input+u.CacheWrite+u.CacheRead > p.LongAbove {
		p = *p.Long
	}
	return float64(u.Input)*p.Input + float64(u.Output)*p.Output + float64(u.CacheWrite)*p.CacheWrite + float64(u.CacheRead)*p.CacheRead
}

// The pricing tiers and the models that use them are Claude Code's own:
// the baked-in model catalog of the Claude Code CLI 2.1.328
// (@anthropic-ai/claude-code, its bundle's "pricing_tiers" and each
// model's "pricing"), read on 2026-11-30; the CLI computes a session's
// total_cost_usd from them. Cache writes are priced at the 5-minute rate
// (the CLI charges 1-hour writes more; the usage cadence keeps does not
// tell them apart), and the CLI's 1.1 factor for inference_geo "us" is
// left out. When the CLI reports a cost, cadence takes it; these prices
// only estimate the cost of a session stopped before its result.
var (
	tier2_10       = Prices{Input: 2, Output: 10, CacheWrite: 2.5, CacheRead: 0.2}
	tier2_10cr010  = Prices{Input: 2, Output: 10, CacheWrite: 2.5, CacheRead: 0.1}
	tier3_15       = Prices{Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.3}
	tier5_25       = Prices{Input: 5, Output: 25, CacheWrite: 6.25, CacheRead: 0.5}
	tier15_75      = Prices{Input: 15, Output: 75, CacheWrite: 18.75, CacheRead: 1.5}
	tier10_50      = Prices{Input: 10, Output: 50, CacheWrite: 12.5, CacheRead: 1}
	tier10_50cr025 = Prices{Input: 10, Output: 50, CacheWrite: 12.5, CacheRead: 0.25}
	tier4_20cr020  = Prices{Input: 4, Output: 20, CacheWrite: 5, CacheRead: 0.2}
	tier8_40cr020  = Prices{Input: 8, Output: 40, CacheWrite: 10, CacheRead: 0.2}
	haiku35        = Prices{Input: 0.8, Output: 4, CacheWrite: 1, CacheRead: 0.08}
	haiku45        = Prices{Input: 1, Output: 5, CacheWrite: 1.25, CacheRead: 0.1}
	haiku55        = Prices{Input: 0.1, Output: 0.5, CacheWrite: 0.125, CacheRead: 0.01,
		LongAbove: 100_000, Long: &Prices{Input: 0.5, Output: 2.5, CacheWrite: 0.625, CacheRead: 0.05}}
)

// modelPrices maps the catalog's model ids to their tiers.
var modelPrices = map[string]Prices{
	"claude-3-5-haiku":  haiku35,
	"claude-haiku-4-5":  haiku45,
	"claude-haiku-5-5":  haiku55,
	"claude-3-5-sonnet": tier3_15,
	"claude-3-7-sonnet": tier3_15,
	"claude-sonnet-4-0": tier3_15,
	"claude-sonnet-4-5": tier3_15,
	"claude-sonnet-4-6": tier3_15,
	"claude-sonnet-5":   tier2_10,
	"claude-sonnet-5-5": tier2_10cr010,
	"claude-opus-4-0":   tier15_75,
	"claude-opus-4-1":   tier15_75,
	"claude-opus-4-5":   tier5_25,
	"claude-opus-4-6":   tier5_25,
	"claude-opus-4-7":   tier5_25,
	"claude-opus-4-8":   tier5_25,
	"claude-opus-5":     tier5_25,
	"claude-opus-5-5":   tier4_20cr020,
	"claude-fable-5":    tier10_50,
	"claude-fable-5-1":  tier10_50cr025,
	"claude-fable-5-2":  tier8_40cr020,
	"claude-mythos-5":   tier10_50,
	"claude-mythos-5-1": tier10_50cr025,
	"claude-mythos-5-2": tier8_40cr020,
}

// DefaultPrices are what the CLI charges a model its catalog does not
// know: the 5/25 tier.
var DefaultPrices = tier5_25

// dated is a model id's date suffix ("-20251001") or context suffix ("[1m]").
var dated = regexp.MustCompile(`(-\d{8})?(\[1m\])?$`)

// Price returns the list prices of model, a model id as the API names it
// ("claude-opus-4-5-20251101", "claude-sonnet-4-5[1m]", a provider's
// "us.anthropic.claude-haiku-4-5-…" or a catalog id): the longest catalog id
// it ends with after its date and context suffixes are dropped, or
// DefaultPrices.
func Price(model string) Prices {
	m := dated.ReplaceAllString(strings.ToLower(model), "")
	m = strings.TrimSuffix(m, "-v1:0")
	m = dated.ReplaceAllString(m, "")
	if i := strings.LastIndex(m, "claude-"); i > 0 {
		m = m[i:]
	}
	if i := strings.IndexByte(m, '@'); i > 0 { // vertex: claude-haiku-4-5@20251001
		m = m[:i]
	}
	if p, ok := modelPrices[m]; ok {
		return p
	}
	best := ""
	for id := range modelPrices {
		if strings.HasPrefix(m, id) && len(id) > len(best) {
			best = id
		}
	}
	if best != "" {
		return modelPrices[best]
	}
	return DefaultPrices
}
