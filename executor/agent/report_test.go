package agent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/schemas"
)

// TestDecodeReport: a report is validated against the schema it names and
// read into Report, whatever the schema; what does not fit is refused in
// the report's own terms (the field, its value, what was expected).
func TestDecodeReport(t *testing.T) {
	for _, tc := range []struct {
		name, schema, raw string
		want              *Report
		err               string
	}{
		{"implement", "implement.schema.json", `{"status":"done","summary":"added f","tests":"go test","questions":["which?"],"choices":["a"]}`,
			&Report{Status: "done", Summary: "added f", Tests: "go test", Questions: []string{"which?"}, Choices: []string{"a"}}, ""},
		{"review", "review.schema.json", `{"verdict":"fine","findings":[{"severity":"minor","file":"a.go","line":3,"text":"rename"}]}`,
			&Report{Verdict: "fine", Findings: []state.Finding{{Severity: state.SeverityMinor, File: "a.go", Line: 3, Text: "rename"}}}, ""},
		{"precheck", "precheck.schema.json", `{"already_done":true,"evidence":"f.go"}`, &Report{AlreadyDone: true, Evidence: "f.go"}, ""},
		{"status off its enum", "implement.schema.json", `{"status":"finished","summary":"x"}`, nil, `status "finished" is not one of "done", "partial", "blocked"`},
		{"a review report for a write step", "implement.schema.json", `{"verdict":"fine","findings":[]}`, nil, `unknown field "findings"`},
		{"required field missing", "implement.schema.json", `{"status":"done"}`, nil, `missing field "summary"`},
		{"finding severity", "review.schema.json", `{"verdict":"v","findings":[{"severity":"bad","text":"x"}]}`, nil, `findings/0/severity "bad" is not one of "blocking", "major", "minor"`},
		{"wrong type", "precheck.schema.json", `{"already_done":"yes","evidence":"e"}`, nil, `already_done "yes" is a string, not a boolean`},
		{"not JSON", "implement.schema.json", `{"status":`, nil, "not JSON"},
		{"no such schema", "nothing.schema.json", `{}`, nil, `no report schema "nothing.schema.json"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeReport([]byte(tc.raw), tc.schema)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("DecodeReport = %+v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("DecodeReport = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestReportHoldsEverySchemaField reads the step-kind table: each property
// of each report schema a kind names has a field of Report (its json tag),
// so that a new step kind's schema is decoded by every adapter once Report
// has its fields.
func TestReportHoldsEverySchemaField(t *testing.T) {
	tags := map[string]bool{}
	rt := reflect.TypeOf(Report{})
	for i := 0; i < rt.NumField(); i++ {
		tags[strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	for _, k := range state.Kinds() {
		if k.ReportSchema == "" {
			continue
		}
		b, err := schemas.FS.ReadFile(k.ReportSchema)
		if err != nil {
			t.Fatalf("%s: %v", k.Kind, err)
		}
		var doc struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", k.ReportSchema, err)
		}
		for p := range doc.Properties {
			if !tags[p] {
				t.Errorf("%s (step %s): property %q has no field in agent.Report", k.ReportSchema, k.Kind, p)
			}
		}
	}
}
