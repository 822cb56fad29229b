package cli

import (
	"io"

	"github.com/hashicorp/hcl/v2"
)

// badValues reports, on w (as JSON with -json), the flag values of plan
// and graph that do not parse (-budget, -budget-usd, -max-sessions, -jobs,
// CADENCE_MAX_SESSIONS): a usage error, found before the wave file is
// read. It returns whether there was one.
func (f *planFlags) badValues(e *env, w io.Writer) bool {
	_, diags := f.options(e, "")
	if !diags.HasErrors() {
		return false
	}
	e.writeDiags(w, diags, func() map[string]*hcl.File { return nil }, f.json)
	return true
}
