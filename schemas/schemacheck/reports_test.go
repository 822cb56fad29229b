package schemacheck_test

import (
	"github.com/cadence-run/cadence/schemas/schemacheck"
	"io/fs"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testagent"
	"github.com/cadence-run/cadence/schemas"
)

// TestReportSchemas reads the step-kind table: every kind that runs a
// session names a report schema that is embedded, and the report the test
// agent gives for that kind validates against it (what the Claude adapter
// asks the CLI for with --json-schema); a kind without a session names
// none; and each of the report schemas the package doc lists is named.
func TestReportSchemas(t *testing.T) {
	named := map[string]bool{}
	for _, k := range state.Kinds() {
		if k.Runs != state.RunsAgent {
			if k.ReportSchema != "" {
				t.Errorf("%s runs no session but names report schema %q", k.Kind, k.ReportSchema)
			}
			continue
		}
		named[k.ReportSchema] = true
		if _, err := fs.Stat(schemas.FS, k.ReportSchema); err != nil {
			t.Errorf("%s: report schema %q: %v", k.Kind, k.ReportSchema, err)
			continue
		}
		a := testagent.Action{Questions: []string{"which?"}, Findings: []map[string]any{{"severity": "minor", "text": "a nit"}}}
		if err := schemacheck.ValidateValue(k.ReportSchema, testagent.Report(k.Kind, a, "brief")); err != nil {
			t.Errorf("%s: the test agent's report does not fit %s: %v", k.Kind, k.ReportSchema, err)
		}
		if err := schemacheck.ValidateValue(k.ReportSchema, map[string]any{"unexpected": true}); err == nil {
			t.Errorf("%s: %s accepts a report without its fields", k.Kind, k.ReportSchema)
		}
	}
	for _, name := range []string{"implement.schema.json", "review.schema.json", "precheck.schema.json"} {
		if !named[name] {
			t.Errorf("report schema %s is named by no step kind", name)
		}
	}
}
