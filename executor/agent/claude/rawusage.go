package claude

import "github.com/cadence-run/cadence/internal/state"

// rawUsage is a session's usage in the Messages API's field names
// (agent.Outcome.RawUsage): Claude Code reports its usage in the
// meaning cadence counts in (input_tokens exclude cache reads), so the
// raw usage is the session's Usage, named as the CLI names it; nil for a
// session that used nothing.
func rawUsage(u state.Usage) map[string]int64 {
	if u == (state.Usage{}) {
		return nil
	}
	return map[string]int64{
		"input_tokens":                u.Input,
		"cache_creation_input_tokens": u.CacheWrite,
		"cache_read_input_tokens":     u.CacheRead,
		"output_tokens":               u.Output,
	}
}
