package codex

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/schemas"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestStrictSchemaEveryReport checks the strict variant of each report
// schema: every object closed and requiring all its properties, the
// optional ones nullable, and a report with nulls for them accepted once
// DecodeReport drops them.
func TestStrictSchemaEveryReport(t *testing.T) {
	for _, name := range []string{"implement.schema.json", "review.schema.json", "precheck.schema.json"} {
		b, err := schemas.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		strict, err := StrictSchema(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var doc map[string]any
		if err := json.Unmarshal(strict, &doc); err != nil {
			t.Fatal(err)
		}
		if _, ok := doc["$schema"]; ok {
			t.Errorf("%s: $schema kept", name)
		}
		var walk func(path string, s map[string]any)
		walk = func(path string, s map[string]any) {
			if props, ok := s["properties"].(map[string]any); ok || s["type"] == "object" {
				if s["additionalProperties"] != false {
					t.Errorf("%s %s: additionalProperties is not false", name, path)
				}
				req := map[string]bool{}
				for _, r := range s["required"].([]any) {
					req[r.(string)] = true
				}
				for p, ps := range props {
					if !req[p] {
						t.Errorf("%s %s: property %s not required", name, path, p)
					}
					walk(path+"."+p, ps.(map[string]any))
				}
			}
			if items, ok := s["items"].(map[string]any); ok {
				walk(path+"[]", items)
			}
		}
		walk("$", doc)
	}
	b, _ := schemas.FS.ReadFile("review.schema.json")
	strict, _ := StrictSchema(b)
	for _, want := range []string{`"file":{"type":["string","null"]}`, `"line":{"minimum":0,"type":["integer","null"]}`, `"required":["file","line","severity","text"]`} {
		if !strings.Contains(string(strict), want) {
			t.Errorf("strict review schema lacks %s:\n%s", want, strict)
		}
	}
	r, err := DecodeReport(`{"verdict":"ok","findings":[{"severity":"minor","file":null,"line":null,"text":"x"}]}`, "review.schema.json")
	if err != nil || len(r.Findings) != 1 || r.Findings[0].Text != "x" {
		t.Fatalf("DecodeReport = %+v, %v", r, err)
	}
	if _, err := DecodeReport(`{"verdict":"ok","findings":[{"severity":"bad","text":"x"}]}`, "review.schema.json"); err == nil {
		t.Error("a severity outside the enum was accepted")
	}
	if _, err := DecodeReport(`{"status":"done"}`, "implement.schema.json"); err == nil {
		t.Error("a report without its summary was accepted")
	}
}

// TestUsageAcrossResume checks the arithmetic of a thread's running total:
// the retry's own usage is its total less the first run's, and cadence's
// counted tokens leave the cached input out.
func TestUsageAcrossResume(t *testing.T) {
	stream := `{"type":"thread.started","thread_id":"t1"}
{"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":800,"cache_write_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":20}}
`
	first := Parse(strings.NewReader(stream))
	resumed := Parse(strings.NewReader(`{"type":"thread.started","thread_id":"t1"}
{"type":"turn.completed","usage":{"input_tokens":3500,"cached_input_tokens":1700,"cache_write_input_tokens":0,"output_tokens":130,"reasoning_output_tokens":25}}
`))
	if first.ThreadID != "t1" || first.Turns != 1 {
		t.Fatalf("first run = %+v", first)
	}
	own := resumed.Total.Sub(first.Total).State()
	if want := (state.Usage{Input: 600, CacheRead: 900, Output: 30}); own != want {
		t.Errorf("the retry's own usage = %+v, want %+v", own, want)
	}
	all := first.Total.State().Add(own)
	if want := (state.Usage{Input: 1800, CacheRead: 1700, Output: 130}); all != want {
		t.Errorf("the session's usage = %+v, want %+v (the thread's last total)", all, want)
	}
	if all.Counted() != 1930 {
		t.Errorf("counted %d, want 1930 (input without cache reads + output)", all.Counted())
	}
	p := Prices{Input: 1.25, Cached: 0.125, Output: 10}
	if got := p.Micros(all); got != 3763 { // 1800×1.25 + 1700×0.125 + 130×10 = 3762.5, rounded
		t.Errorf("cost %d micros", got)
	}
}

// TestSettingsDiagnostics checks that a wrong setting is an error on its
// own range, with the file and line, and that right ones are read.
func TestSettingsDiagnostics(t *testing.T) {
	src := `model = "gpt-5"
provider = "fake"
retries = 2
writable_roots = ["/cache"]
prices = { "gpt-5" = { input = 1.25, cached = 0.125, output = 10 } }
`
	f, diags := hclsyntax.ParseConfig([]byte(src), "wave.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	st, diags := New().DecodeSettings(f.Body, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := st.(*Settings)
	if s.Model != "gpt-5" || s.Provider != "fake" || s.Retries != 2 || s.WritableRoots[0] != "/cache" || s.Prices["gpt-5"].Output != 10 {
		t.Errorf("settings %+v", s)
	}
	for _, c := range []struct{ src, summary string }{
		{"retries = -1\n", ""},
		{"provider = \"\"\n", "Invalid provider"},
		{"prices = { \"gpt-5\" = { input = 1 } }\n", "Invalid prices"},
		{"prices = { \"gpt-5\" = { input = 1, cached = 1, output = -2 } }\n", "Invalid prices"},
		{"prices = { \"gpt-5\" = { input = 1, cached = 1, output = 2, extra = 1 } }\n", "Invalid prices"},
		{"permission_mode = \"plan\"\n", "Unsupported argument"},
	} {
		f, _ := hclsyntax.ParseConfig([]byte("\n"+c.src), "wave.hcl", hcl.InitialPos)
		_, diags := New().DecodeSettings(f.Body, nil)
		if !diags.HasErrors() {
			t.Errorf("%q: no error", c.src)
			continue
		}
		d := diags[0]
		if c.summary != "" && d.Summary != c.summary {
			t.Errorf("%q: summary %q, want %q", c.src, d.Summary, c.summary)
		}
		if d.Subject == nil || d.Subject.Filename != "wave.hcl" || d.Subject.Start.Line != 2 {
			t.Errorf("%q: subject %v, want wave.hcl line 2", c.src, d.Subject)
		}
	}
}

// TestResetTime checks the reset time of Codex's usage-limit message.
func TestResetTime(t *testing.T) {
	now := mustTime(t, "2026-12-02T05:16:00Z")
	got := ResetTime("You’ve hit your usage limit. … or try again at 5:58 AM.", now)
	if got == nil || !got.Equal(mustTime(t, "2026-12-02T05:58:00Z")) {
		t.Errorf("reset %v", got)
	}
	got = ResetTime("try again at 3:30 AM.", now)
	if got == nil || !got.Equal(mustTime(t, "2026-12-03T03:30:00Z")) {
		t.Errorf("reset %v: want tomorrow's", got)
	}
}

// FuzzParse feeds the JSONL parser any bytes: it never panics, and the
// thread it reports comes from a thread.started line.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"type":"thread.started","thread_id":"t"}` + "\n" + `{"type":"turn.completed","usage":{"input_tokens":1}}`))
	f.Add([]byte(`{"type":"item.completed","item":{"type":"command_execution","exit_code":1,"aggregated_output":"Read-only file system"}}`))
	f.Add([]byte(`{"type":"turn.failed","error":null}` + "\n\n{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st := Parse(strings.NewReader(string(b)))
		if st.ThreadID != "" && !strings.Contains(string(b), "thread.started") {
			t.Errorf("thread %q without thread.started", st.ThreadID)
		}
		_ = st.denials()
	})
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestAttributesDocumented: every attribute the adapter decodes is
// described in its kind's table of docs/wave-file.md (its Doc), the table
// names no other, and none is a common attribute.
func TestAttributesDocumented(t *testing.T) {
	common := map[string]bool{}
	for _, n := range spec.AgentCommon() {
		common[n] = true
	}
	for _, a := range New().Attributes() {
		if a.Doc.Meaning == "" {
			t.Errorf("%s has no description in its kind's table of docs/wave-file.md", a.Name)
		}
		if common[a.Name] {
			t.Errorf("%s is a common attribute", a.Name)
		}
	}
	if len(attributeDocs) != len(New().Attributes()) {
		t.Errorf("the kind's table documents %d attributes, the adapter decodes %d", len(attributeDocs), len(New().Attributes()))
	}
}
