package codex

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadRolloutUsageRecord: Codex 0.171.0 records each response's usage
// in its rollout as a top-level token_usage_record line, whose
// thread_token_usage is the thread's running total; a thread stopped in
// the middle of a turn (no turn.completed on stdout) is counted from the
// last one.
func TestReadRolloutUsageRecord(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rollout.jsonl")
	lines := `{"timestamp":"2026-12-02T05:33:11.200Z","ordinal":9,"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sleep 297\"}","call_id":"call_3"}}
{"timestamp":"2026-12-02T05:33:11.239Z","ordinal":10,"type":"token_usage_record","payload":{"thread_id":"t1","turn_id":"u1","response_id":"resp_1","usage":{"input_tokens":900,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":30,"reasoning_output_tokens":5,"total_tokens":930},"turn_token_usage":{"input_tokens":900,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":30,"reasoning_output_tokens":5,"total_tokens":930},"thread_token_usage":{"input_tokens":1900,"cached_input_tokens":600,"cache_write_input_tokens":0,"output_tokens":80,"reasoning_output_tokens":15,"total_tokens":1980}}}
`
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	r, ok := ReadRollout(p)
	want := Usage{InputTokens: 1900, CachedInputTokens: 600, OutputTokens: 80, ReasoningOutputTokens: 15}
	if !ok || !r.HasTotal || r.Total != want {
		t.Fatalf("ReadRollout: ok %v, has total %v, total %+v; want %+v", ok, r.HasTotal, r.Total, want)
	}
}
