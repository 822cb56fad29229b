package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/safefile"
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
// environment (unless opts says otherwise). Variables come, lowest
// precedence first, from their defaults, CADENCE_VAR_<name> (unless
// opts.EnvVars is set), the wave's auto-loaded var files
// (layout.AutoVarFiles: wave.vars.hcl, wave.vars.json beside wave.hcl,
// when they exist), opts.VarFiles (-var-file) and opts.Vars (-var).
// Diagnostics are returned for the caller to print with the loader's
// sources.
func (e *env) loadWave(file string, opts spec.Options) (*wave, hcl.Diagnostics) {
	return e.loadWaveFrom(file, nil, opts)
}

// loadWaveFrom is loadWave of a file plan's waveArgs read and parsed
// already (read; nil: read and parse file here): the source and parse are
// read's, so the file is read and parsed once.
func (e *env) loadWaveFrom(file string, read *parsedWave, opts spec.Options) (*wave, hcl.Diagnostics) {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.EnvVars == nil {
		opts.EnvVars = envVars(os.Environ())
	}
	given := opts.VarFiles
	opts.VarFiles = append(autoVarFiles(file), opts.VarFiles...)
	w := &wave{file: file, loader: spec.NewLoader()}
	for _, vf := range opts.VarFiles[:len(opts.VarFiles)-len(given)] {
		if _, err := spec.ReadWaveFile(vf); errors.Is(err, safefile.ErrRefused) {
			return w, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read variables file", Detail: err.Error() + "."}}
		}
	}
	var src []byte
	var err error
	if read != nil {
		src = read.src
	} else {
		src, err = spec.ReadWaveFile(file)
	}
	if err != nil {
		detail := err.Error() + "."
		if errors.Is(err, os.ErrNotExist) && file == "wave.hcl" {
			detail = "There is no wave.hcl in this folder. Name a wave file, or write a starter one with cadence init."
			if _, err := os.Stat("wave.hcl.json"); err == nil {
				detail = "There is no wave.hcl in this folder, but there is a wave.hcl.json: name it (cadence plan wave.hcl.json)."
			}
		}
		return w, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read wave file", Detail: detail}}
	}
	w.digest = state.Digest(src)
	if opts.AgentKinds == nil {
		opts.AgentKinds = e.agents().Kinds()
	}
	if opts.AgentSettings == nil {
		opts.AgentSettings = e.agents().DecodeSettings
	}
	if opts.AgentCommand == nil {
		opts.AgentCommand = e.agents().DefaultCommand
	}
	if read != nil && read.file != nil {
		// The loader that parsed it: it holds the source for diagnostics.
		w.loader = read.loader
		if read.diags.HasErrors() {
			return w, read.diags
		}
		cfg, diags := w.loader.LoadParsed(read.file, file, opts)
		w.cfg = cfg
		return w, append(read.diags, diags...)
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

// envVarPrefix names an environment variable that sets a wave variable:
// CADENCE_VAR_model=opus sets var.model (Terraform's TF_VAR_name).
const envVarPrefix = "CADENCE_VAR_"

// envVars returns the wave variables set in environ (KEY=value entries,
// as os.Environ), by variable name.
func envVars(environ []string) map[string]string {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if name, found := strings.CutPrefix(k, envVarPrefix); ok && found && name != "" {
			vars[name] = v
		}
	}
	return vars
}

// autoVarFiles returns those of the wave file's auto-loaded var files
// (layout.AutoVarFiles) that exist.
func autoVarFiles(file string) []string {
	var files []string
	for _, f := range layout.AutoVarFiles(file) {
		if st, err := os.Stat(f); err == nil && !st.IsDir() {
			files = append(files, f)
		}
	}
	return files
}
