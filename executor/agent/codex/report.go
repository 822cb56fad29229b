package codex

import (
	"encoding/json"
	"fmt"

	"github.com/cadence-run/cadence/executor/agent"
)

// DecodeReport reads the session's last agent message as the report of
// schema (a file name of package schemas: implement, review or precheck
// .schema.json). The message answered the strict variant (StrictSchema),
// so the nulls it gives for properties it leaves out are dropped first;
// then the document is checked against the original schema and read
// (agent.DecodeReport: the Codex CLI sends the schema to the API and does
// not check the answer itself).
func DecodeReport(text, schema string) (*agent.Report, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("the report is not JSON: %w", err)
	}
	v = dropNulls(v)
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return agent.DecodeReport(b, schema)
}

// dropNulls removes the properties whose value is null from every object
// in v.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}
