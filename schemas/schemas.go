// Package schemas embeds cadence's JSON Schemas (draft 2020-12): wave (the
// wave file's JSON syntax), state, one per family of -json output (plan:
// plan and show; events: apply; diagnostics: validate, and any command on a
// wave with errors; graph, list, logs, status, steer: drop, stop and
// answer; hold: hold and release; clean, fmt, init, version), and the
// implement, review and precheck reports asked of the agent. Validation
// lives in schemas/schemacheck; the binary links it for the agents'
// reports only (its doc says why), and this package stays the bare files.
package schemas

import "embed"

// FS holds the schema files.
//
//go:embed *.schema.json
var FS embed.FS

// BaseURL is the $id prefix of every schema.
const BaseURL = "https://cadence.run/schemas/"
