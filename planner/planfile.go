package planner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/safefile"
	"github.com/cadence-run/cadence/internal/state"
)

// SavedPlanKind marks a saved plan file.
const SavedPlanKind = "cadence-plan"

// SavedPlan is what plan -out writes and apply PLANFILE reads: the inputs of
// the plan and the digests that must still hold when it is applied.
type SavedPlan struct {
	FormatVersion int    `json:"format_version"`
	Kind          string `json:"kind"`
	// WaveFile is the wave file's absolute path.
	WaveFile string `json:"wave_file"`
	// WaveDigest and StateDigest identify the bytes planned from ("" for no
	// state file yet).
	WaveDigest  string `json:"wave_digest"`
	StateDigest string `json:"state_digest"`
	// BaseSHAs are the base commits of the repositories, by repo name.
	BaseSHAs map[string]string `json:"base_shas"`
	// Vars, VarFiles, Targets, Replace, Budget, BudgetUSD (micro-dollars),
	// MaxSessions and Jobs are the plan's options, so that apply plans the
	// same way.
	Vars        []string `json:"vars,omitempty"`
	VarFiles    []string `json:"var_files,omitempty"`
	Targets     []string `json:"targets,omitempty"`
	Replace     []string `json:"replace,omitempty"`
	Budget      int64    `json:"budget,omitempty"`
	BudgetUSD   int64    `json:"budget_usd_micros,omitempty"`
	MaxSessions int      `json:"max_sessions,omitempty"`
	Jobs        int      `json:"jobs,omitempty"`
	Offline     bool     `json:"offline,omitempty"`
	// Variables are the wave's declared variables (a CADENCE_VAR_ of
	// another name is no input) and SensitiveVars those declared
	// sensitive = true (a -var of theirs given to apply is shown by digest).
	Variables     []string  `json:"variables,omitempty"`
	SensitiveVars []string  `json:"sensitive_vars,omitempty"`
	Created       time.Time `json:"created"`

	// Files are the files file() and templatefile() read, VarFileDigests
	// the var files: absolute path to digest ("sha256:" and hex). The
	// wave's auto-loaded var files that were not there are recorded with
	// "": one that appears since makes the plan stale.
	Files          map[string]string `json:"files,omitempty"`
	VarFileDigests map[string]string `json:"var_file_digests,omitempty"`
	// Templates is the wave's brief templates folder (absolute; "" for
	// none) and TemplatesDigest the digest of its *.tmpl files ("" when
	// there is none).
	Templates       string `json:"templates,omitempty"`
	TemplatesDigest string `json:"templates_digest,omitempty"`
	// Env is what env() returned, by variable name: the digest of the
	// value, never the value (it may be a secret); "" when it was unset.
	Env map[string]string `json:"env,omitempty"`
	// ToolchainFiles are the digests of the toolchain files
	// (internal/toolchain.Files: .nvmrc, .tool-versions, mise.toml, …) of
	// every repository the plan inspected, keyed "repo/file" (a repo's
	// name, never its path, which may be sensitive); "" for a file that
	// was not there (one that appears makes the plan stale).
	ToolchainFiles map[string]string `json:"toolchain_files,omitempty"`
	// Toolchains are what each inspected repository's toolchain resolved
	// to, by repo name (SavedToolchain): a new Node installed, a mise
	// tool upgraded or uninstalled makes the plan stale.
	Toolchains map[string]SavedToolchain `json:"toolchains,omitempty"`
	// CopyFiles are the digests of the files the lots' copy attributes
	// bring into their worktrees (spec.Bootstrap.Copy), as they are in
	// the lead's checkout, keyed "repo/path" (a repo's name, never its
	// path); "" for a file that was not there.
	CopyFiles map[string]string `json:"copy_files,omitempty"`

	// Summary is the plan's one-line summary, for people reading the file.
	Summary string `json:"summary"`
	// Plan is the plan itself in its JSON form (plan -json,
	// schemas/plan.schema.json; sensitive values already (sensitive)), for
	// cadence show; absent in plans saved before show existed.
	Plan json.RawMessage `json:"plan,omitempty"`
}

// SavedToolchain is what a repository's toolchain resolved to at plan
// time: RepoPlan.Toolchain, or "cannot be resolved: " and its
// ToolchainErr ("" for none), and the digest of its folders and variables
// (keyed: a variable of mise may be a secret), so that a change of either
// shows.
type SavedToolchain struct {
	Resolved string `json:"resolved"`
	Digest   string `json:"digest"`
}

// Inputs are the current values of what a saved plan recorded, for Stale:
// digests as in SavedPlan ("" for a missing file, an unset variable, no
// state file).
type Inputs struct {
	WaveDigest, StateDigest string
	// BaseSHAs are the base commits by repo name ("" when the base branch
	// or the repo is missing).
	BaseSHAs map[string]string
	// Files, VarFiles, Env and ToolchainFiles are by the saved plan's
	// keys.
	Files, VarFiles, Env, ToolchainFiles map[string]string
	// Toolchains are by repo name, for the repositories inspected now (a
	// repository missing from it is not compared).
	Toolchains map[string]SavedToolchain
	// CopyFiles are by the saved plan's keys; a key missing from it is
	// not compared.
	CopyFiles       map[string]string
	TemplatesDigest string
	// Vars are -var assignments given again to apply, if any: each name
	// given must keep its saved value.
	Vars []string
	// Sensitive says whether a variable is sensitive: its -var values are
	// then shown as digests (nil: none is).
	Sensitive func(name string) bool
}

// Stale compares a saved plan with the current inputs and returns what
// changed, each with its value at plan time and now (empty when the plan
// still holds). Paths are shown relative to the wave file's folder when
// inside it. env() values are compared and shown by digest only.
func (s *SavedPlan) Stale(now Inputs) []string {
	var why []string
	dir := filepath.Dir(s.WaveFile)
	if s.WaveDigest != now.WaveDigest {
		why = append(why, fmt.Sprintf("the wave file %s changed since the plan (digest %s → %s)", s.WaveFile, short(s.WaveDigest), short(now.WaveDigest)))
	}
	for _, p := range sortedKeys(s.Files) {
		if was, is := s.Files[p], now.Files[p]; was != is {
			why = append(why, fmt.Sprintf("file %s changed since the plan (digest %s → %s)", rel(dir, p), short(was), short(is)))
		}
	}
	for _, p := range sortedKeys(s.VarFileDigests) {
		switch was, is := s.VarFileDigests[p], now.VarFiles[p]; {
		case was == is:
		case was == "":
			// an auto-loaded var file, absent at plan time
			why = append(why, fmt.Sprintf("var file %s appeared since the plan (digest none → %s)", rel(dir, p), short(is)))
		case is == "":
			why = append(why, fmt.Sprintf("var file %s is gone since the plan (digest %s → none)", rel(dir, p), short(was)))
		default:
			why = append(why, fmt.Sprintf("var file %s changed since the plan (digest %s → %s)", rel(dir, p), short(was), short(is)))
		}
	}
	if s.TemplatesDigest != now.TemplatesDigest {
		why = append(why, fmt.Sprintf("the templates folder %s changed since the plan (digest %s → %s)", rel(dir, s.Templates), short(s.TemplatesDigest), short(now.TemplatesDigest)))
	}
	saved := lastValues(s.Vars)
	given := lastValues(now.Vars)
	for _, n := range sortedKeys(given) {
		was, ok := saved[n]
		switch {
		case ok && was == given[n]:
		case now.Sensitive != nil && now.Sensitive(n):
			wasD := ""
			if ok {
				wasD = valueDigest(was)
			}
			why = append(why, fmt.Sprintf("-var %s changed (digest %s → %s; the variable is sensitive)", n, short(wasD), short(valueDigest(given[n]))))
		case !ok:
			why = append(why, fmt.Sprintf("-var %s changed (not set → %q)", n, given[n]))
		default:
			why = append(why, fmt.Sprintf("-var %s changed (%q → %q)", n, was, given[n]))
		}
	}
	for _, n := range sortedKeys(s.Env) {
		if was, is := s.Env[n], now.Env[n]; was != is {
			why = append(why, fmt.Sprintf("env(%q) changed since the plan (digest %s → %s; values are not shown)", n, envShort(was), envShort(is)))
		}
	}
	for _, k := range sortedKeys(s.ToolchainFiles) {
		switch was, is := s.ToolchainFiles[k], now.ToolchainFiles[k]; {
		case was == is:
		case was == "":
			why = append(why, fmt.Sprintf("toolchain file %s appeared since the plan (digest none → %s)", k, short(is)))
		case is == "":
			why = append(why, fmt.Sprintf("toolchain file %s is gone since the plan (digest %s → none)", k, short(was)))
		default:
			why = append(why, fmt.Sprintf("toolchain file %s changed since the plan (digest %s → %s)", k, short(was), short(is)))
		}
	}
	for _, n := range sortedKeys(s.Toolchains) {
		was, is := s.Toolchains[n], now.Toolchains[n]
		if _, ok := now.Toolchains[n]; !ok || was == is {
			continue
		}
		if was.Resolved == is.Resolved {
			why = append(why, fmt.Sprintf("the toolchain of repo %s changed since the plan (%s: its folders or variables differ)", n, noneIfEmpty(is.Resolved)))
			continue
		}
		why = append(why, fmt.Sprintf("the toolchain of repo %s changed since the plan (%s → %s)", n, noneIfEmpty(was.Resolved), noneIfEmpty(is.Resolved)))
	}
	for _, k := range sortedKeys(s.CopyFiles) {
		was, is := s.CopyFiles[k], now.CopyFiles[k]
		if _, ok := now.CopyFiles[k]; !ok || was == is {
			continue
		}
		why = append(why, fmt.Sprintf("copied file %s changed since the plan (digest %s → %s)", k, short(was), short(is)))
	}
	if s.StateDigest != now.StateDigest {
		why = append(why, fmt.Sprintf("the state file changed since the plan (another apply ran: digest %s → %s)", short(s.StateDigest), short(now.StateDigest)))
	}
	for _, n := range sortedKeys(s.BaseSHAs) {
		if was, is := s.BaseSHAs[n], now.BaseSHAs[n]; is != was {
			if is == "" {
				why = append(why, fmt.Sprintf("the base of repo %s is gone (was %.12s)", n, was))
				continue
			}
			why = append(why, fmt.Sprintf("the base of repo %s moved from %.12s to %.12s", n, was, is))
		}
	}
	return why
}

// short is a digest cut to its first 12 hex digits, or "none" for "".
func short(d string) string {
	if d == "" {
		return "none"
	}
	if _, hex, ok := strings.Cut(d, ":"); ok {
		d = hex // "sha256:…", "hmac-sha256:…"
	}
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

// valueDigest is the digest of a -var value (state.Digest).
func valueDigest(v string) string { return state.Digest([]byte(v)) }

// envShort is short for an env() value's digest, "unset" for "".
func envShort(d string) string {
	if d == "" {
		return "unset"
	}
	return short(d)
}

// rel is p relative to dir when it is inside it, else p.
func rel(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		return r
	}
	return p
}

// lastValues maps -var name=value assignments to each name's last value.
func lastValues(kvs []string) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		if n, v, ok := strings.Cut(kv, "="); ok {
			m[n] = v
		}
	}
	return m
}

// noneIfEmpty is s, or "none" for "".
func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ErrNotSaved is ReadSaved's error for a file that is not a saved plan (a
// wave file, say).
var ErrNotSaved = errors.New("not a saved cadence plan")

// WriteSaved writes a saved plan file, readable by its owner only (mode
// 0600, also when it replaces a file of another mode): it holds the plan's
// wave file and variables.
func WriteSaved(path string, s *SavedPlan) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

// maxSavedBytes is the largest saved plan ReadSaved reads: 64 MiB.
const maxSavedBytes = 64 << 20

// ReadSaved reads a saved plan file, refusing files that are not one
// (ErrNotSaved) and saved plans of another format version.
func ReadSaved(path string) (*SavedPlan, error) {
	b, err := safefile.Read(path, maxSavedBytes)
	if err != nil {
		return nil, err
	}
	var s SavedPlan
	err = json.Unmarshal(b, &s)
	if err != nil && bytes.Contains(b, []byte(`"kind": "`+SavedPlanKind+`"`)) {
		return nil, fmt.Errorf("%s is a damaged saved plan: %v; run cadence plan -out again", path, err)
	}
	if err != nil || s.Kind != SavedPlanKind {
		return nil, fmt.Errorf("%s is %w", path, ErrNotSaved)
	}
	if s.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%s is a saved plan of format %d; this cadence reads %d", path, s.FormatVersion, FormatVersion)
	}
	if s.WaveFile == "" || !filepath.IsAbs(s.WaveFile) || s.WaveDigest == "" {
		return nil, fmt.Errorf("%s is a damaged saved plan: it names no wave file (an absolute path) or wave digest; run cadence plan -out again", path)
	}
	return &s, nil
}
