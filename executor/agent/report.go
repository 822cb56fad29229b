package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/cadence-run/cadence/schemas"
	"github.com/cadence-run/cadence/schemas/schemacheck"
)

// DecodeReport reads a session's structured report, the JSON document raw,
// as the report of schema: the file name, in package schemas, of the step
// kind's report schema (Session.ReportSchema). raw is validated against
// that schema with a JSON Schema validator (schemacheck.Check: an error
// names each field that does not fit, in the report's terms), then decoded
// into Report, whose json tags name every property of every report schema
// (a property without a field is an error here, and a test fails on it).
// Every adapter reads its reports through it, so a step kind's new schema
// needs no adapter change.
func DecodeReport(raw []byte, schema string) (*Report, error) {
	if _, err := fs.Stat(schemas.FS, schema); err != nil {
		return nil, fmt.Errorf("no report schema %q", schema)
	}
	if err := schemacheck.Check(schema, raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("report of %s: %w", schema, err)
	}
	return &r, nil
}
