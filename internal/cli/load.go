package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// wave is a loaded wave file with its state.
type wave struct {
	file        string
	loader      *spec.Loader
	cfg         *spec.Config
	digest      string
	state       *state.State
	stateDigest string
}

// loadWave reads and decodes a wave file; env() in it reads the process
// environment (unless opts says otherwise). Diagnostics are returned for
// the caller to print with the loader's sources.
func loadWave(file string, opts spec.Options) (*wave, hcl.Diagnostics) {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	w := &wave{file: file, loader: spec.NewLoader()}
	src, err := os.ReadFile(file)
	if err != nil {
		detail := err.Error() + "."
		if errors.Is(err, os.ErrNotExist) && file == "wave.hcl" {
			detail = "There is no wave.hcl in this folder. Name a wave file, or write a starter one with cadence init."
		}
		return w, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read wave file", Detail: detail}}
	}
	w.digest = state.Digest(src)
	if opts.AgentKinds == nil {
		opts.AgentKinds = agent.Kinds()
	}
	cfg, diags := w.loader.LoadBytes(src, file, opts)
	w.cfg = cfg
	return w, diags
}

// readState reads the wave's state file when there is one.
func (w *wave) readState() error {
	st, digest, err := state.Read(layout.StateFile(w.file))
	if errors.Is(err, state.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w (move it aside to start the wave afresh)", err)
	}
	if st.Wave != "" && w.cfg != nil && st.Wave != w.cfg.Wave.Name {
		return fmt.Errorf("state file %s belongs to wave %q, not %q", layout.StateFile(w.file), st.Wave, w.cfg.Wave.Name)
	}
	w.state, w.stateDigest = st, digest
	return nil
}
