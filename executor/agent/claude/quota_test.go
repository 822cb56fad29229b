package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
)

// TestQuotaReset reads every form of reset time the CLI passes on (quota.go).
func TestQuotaReset(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone database")
	}
	ny, _ := time.LoadLocation("America/New_York")
	now := time.Date(2026, 11, 30, 14, 20, 0, 0, time.UTC) // 15:20 in Paris
	for _, tc := range []struct {
		msg  string
		now  time.Time
		want time.Time // zero: no time
	}{
		// The API's message, passed on.
		{"API Error: Request rejected (429) · Claude AI usage limit reached|1796079865", now, time.Unix(1796079865, 0)},
		{"usage limit reached; resets at 2026-11-30T16:00:00Z", now, time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC)},
		{"limit; resets at 2026-11-30T06:30:00+01:00 (Paris)", now, time.Date(2026, 11, 30, 5, 30, 0, 0, time.UTC)},
		{"usage limit reached, resets in 2 hours", now, now.Add(2 * time.Hour)},
		{"rate limited; try again in 90 seconds", now, now.Add(90 * time.Second)},
		{"You've hit your fast limit · resets in 1h 30m", now, now.Add(90 * time.Minute)},
		{"limit reached · resets in 2 days", now, now.Add(48 * time.Hour)},
		// The CLI's own wording, from the rate-limit headers.
		{"You've hit your 5-hour limit · resets 11:04pm (UTC)", now, time.Date(2026, 11, 30, 23, 4, 0, 0, time.UTC)},
		{"You've hit your session limit · resets 3pm (Europe/Paris)", now.Add(-time.Hour), time.Date(2026, 11, 30, 15, 0, 0, 0, paris)},
		{"You've hit your 5-hour limit · resets 8am (America/New_York)", now, time.Date(2026, 12, 1, 8, 0, 0, 0, ny)}, // 9:20 there: tomorrow's
		{"usage limit resets at 12am (UTC)", now, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"usage limit resets at 12:30pm (UTC)", now, time.Date(2026, 12, 1, 12, 30, 0, 0, time.UTC)},
		{"usage limit · resets 15:00 (UTC)", now, time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)},
		{"You've hit your weekly limit · resets Dec 3, 9am (UTC)", now, time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)},
		{"You've hit your weekly limit · resets Dec 3, 9:30pm (Europe/Paris)", now, time.Date(2026, 12, 3, 21, 30, 0, 0, paris)},
		{"weekly limit · resets Jan 2, 2027, 3pm (UTC)", now, time.Date(2027, 1, 2, 15, 0, 0, 0, time.UTC)},
		{"weekly limit · resets Jan 2, 3pm (UTC)", now, time.Date(2027, 1, 2, 15, 0, 0, 0, time.UTC)}, // next year's
		// Past times stay past: a clock time just gone is today's, not tomorrow's.
		{"You've hit your 5-hour limit · resets 2pm (UTC)", now, time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)},
		{"usage limit reached|1700000000", now, time.Unix(1700000000, 0)},
		{"limit; resets at 2026-11-29T10:00:00Z", now, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)},
		// An unknown zone is the local one.
		{"resets 11pm (Mars/Olympus)", now, time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)},
		// No time: unknown.
		{"API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit", now, time.Time{}},
		{"API Error: Server is temporarily limiting requests (not your usage limit)", now, time.Time{}},
		{"it resets 3 times", now, time.Time{}},
		{"resets 13pm (UTC)", now, time.Time{}},
		{"", now, time.Time{}},
	} {
		got := quotaReset(tc.now, tc.msg)
		switch {
		case tc.want.IsZero() && got != nil:
			t.Errorf("%q: %v, want no time", tc.msg, got)
		case !tc.want.IsZero() && (got == nil || !got.Equal(tc.want)):
			t.Errorf("%q: %v, want %v", tc.msg, got, tc.want.UTC())
		}
	}
	// The first text that gives a time wins.
	if got := quotaReset(now, "no time here", "", "resets in 5 minutes"); got == nil || !got.Equal(now.Add(5*time.Minute)) {
		t.Errorf("several texts: %v", got)
	}
}

// TestQuotaSources: the stream's rate_limit_event, the result, stderr and
// the transcript each give the reset time.
func TestQuotaSources(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 20, 0, 0, time.UTC)
	w := newStreamWatch(nil, nil)
	w.consume(strings.NewReader(strings.Join([]string{
		`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1796000000},"session_id":"s"}`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1796079888,"rateLimitType":"five_hour","isUsingOverage":false},"session_id":"s"}`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","isUsingOverage":false},"session_id":"s"}`,
	}, "\n")), nil)
	ev := w.rateLimitReset()
	if ev == nil || ev.Unix() != 1796079888 {
		t.Fatalf("stream reset %v", ev)
	}
	oauth := `{"type":"result","subtype":"success","is_error":true,"result":"You've hit your 5-hour limit · resets 11:04pm (UTC)","terminal_reason":"api_error","api_error_status":429,"api_error_type":"rate_limit_error","usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`
	o := Classify(Ended{Result: []byte(oauth), Now: now, RateLimitReset: ev})
	if o.Status != state.StepQuota || o.ResetAt == nil || !o.ResetAt.Equal(*ev) {
		t.Errorf("with the stream's event: %s %v", o.Status, o.ResetAt)
	}
	o = Classify(Ended{Result: []byte(oauth), Now: now})
	if o.Status != state.StepQuota || o.ResetAt == nil || !o.ResetAt.Equal(time.Date(2026, 11, 30, 23, 4, 0, 0, time.UTC)) {
		t.Errorf("from the result text: %s %v", o.Status, o.ResetAt)
	}
	o = Classify(Ended{Proc: proc.Result{ExitCode: 1}, Stderr: []byte("Claude AI usage limit reached|1796079865\n"), Now: now})
	if o.Status != state.StepQuota || o.ResetAt == nil || o.ResetAt.Unix() != 1796079865 {
		t.Errorf("from stderr: %s %q %v", o.Status, o.Cause, o.ResetAt)
	}
	o = Classify(Ended{Result: []byte(api429), Now: now})
	if o.Status != state.StepQuota || o.ResetAt != nil {
		t.Errorf("no time anywhere: %s %v", o.Status, o.ResetAt)
	}

	// The transcript as the CLI writes it (API-key login, 2.1.328).
	p := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(p, []byte(strings.Join([]string{
		`{"type":"user","message":{"role":"user","content":"[[fake:pipe]] hello"}}`,
		`{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","content":[{"type":"text","text":"working"}]}}`,
		`{"type":"assistant","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"API Error: Request rejected (429) · Claude AI usage limit reached|1796079865"}]},"error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429}`,
		`{"type":"last-prompt","lastPrompt":"hello"}`,
	}, "\n")), 0o644)
	text := transcriptQuotaText(p)
	if got := quotaReset(now, text); got == nil || got.Unix() != 1796079865 {
		t.Errorf("from the transcript %q: %v", text, got)
	}
	if transcriptQuotaText(filepath.Join(t.TempDir(), "none.jsonl")) != "" {
		t.Error("text from no transcript")
	}
}
