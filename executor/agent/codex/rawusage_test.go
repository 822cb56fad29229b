package codex

import (
	"reflect"
	"testing"
)

// TestRawUsage: a run's raw usage is the CLI's own numbers under its own
// names (input including the cached tokens), and a formatting retry's
// adds up field by field.
func TestRawUsage(t *testing.T) {
	if (Usage{}).Raw() != nil {
		t.Error("a run that used nothing has raw usage")
	}
	u := Usage{InputTokens: 120, CachedInputTokens: 100, OutputTokens: 7, ReasoningOutputTokens: 3}
	want := map[string]int64{"input_tokens": 120, "cached_input_tokens": 100, "cache_write_input_tokens": 0, "output_tokens": 7, "reasoning_output_tokens": 3}
	if got := u.Raw(); !reflect.DeepEqual(got, want) {
		t.Errorf("raw %v, want %v", got, want)
	}
	sum := addRaw(u.Raw(), Usage{InputTokens: 10, OutputTokens: 1}.Raw())
	if sum["input_tokens"] != 130 || sum["output_tokens"] != 8 || sum["cached_input_tokens"] != 100 {
		t.Errorf("sum %v", sum)
	}
	if addRaw(nil, nil) != nil {
		t.Error("the sum of nothing is not nil")
	}
	if got := u.State(); got.Input != 20 || got.CacheRead != 100 || got.Output != 7 {
		t.Errorf("counted usage %+v: input excludes the cached tokens", got)
	}
}
