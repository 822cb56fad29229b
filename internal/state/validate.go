package state

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// The values the schema (schemas/state.schema.json) allows for each typed
// field; Validate checks them.
var (
	waveStatuses = []WaveStatus{"", WaveRunning, WaveDone, WaveNeedsLead, WaveSuspendedBudget, WaveSuspendedQuota, WaveSuspendedAPI, WaveInterrupted, WavePartial}
	lotStatuses  = []LotStatus{LotQueued, LotRunning, LotQuestion, LotDone, LotHandedBack, LotFailed, LotBlocked, LotSuspended, LotInterrupted}
	stepStatuses = []StepStatus{StepRunning, StepOK, StepFailed, StepTimedOut, StepQuota, StepCut, StepInterrupted}
	// setupStatuses are those a Setup may have (no session: no quota, no cut).
	setupStatuses = []StepStatus{StepRunning, StepOK, StepFailed, StepTimedOut, StepInterrupted}
	severities    = []Severity{SeverityBlocking, SeverityMajor, SeverityMinor}
)

// Validate checks what the schema says and the code relies on, so that no
// reader of a state (status, plan, apply) can panic on it: every lot is an
// object with a non-empty id and a known status; steps, findings and wave
// status hold known values; counts are not negative; It returns every problem found, joined, each naming
// the lot and field.
func Validate(s *State) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if s == nil {
		return errors.New("no state")
	}
	if !slices.Contains(waveStatuses, s.Status) {
		bad("status %q is not a wave status", s.Status)
	}
	if len(s.CadenceVersion) > MaxVersionBytes || len(s.AgentVersion) > MaxVersionBytes {
		bad("cadence_version and agent_version must be at most %d bytes", MaxVersionBytes)
	}
	if s.Serial < 0 || s.Budget < 0 || s.BudgetMicros < 0 || s.Consumed.Counted < 0 || s.Consumed.CacheRead < 0 || s.Consumed.CostMicros < 0 {
		bad("serial, budget, budget_micro_usd and consumed must not be negative")
	}
	ids := make([]string, 0, len(s.Lots))
	for id := range s.Lots {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		l := s.Lots[id]
		switch {
		case id == "":
			bad("a lot has an empty id")
			continue
		case l == nil:
			bad("lot %q is null, not an object", id)
			continue
		}
		if !slices.Contains(lotStatuses, l.Status) {
			bad("lot %q: status %q is not a lot status", id, l.Status)
		}
		for i, st := range l.Steps {
			if _, ok := Info(st.Kind); !ok {
				bad("lot %q step %d: kind %q is not a step kind", id, i, st.Kind)
			}
			if !slices.Contains(stepStatuses, st.Status) {
				bad("lot %q step %d: status %q is not a step status", id, i, st.Status)
			}
			if st.Pass < 0 || st.CostMicros < 0 || st.OutputCut < 0 || st.Usage.Input < 0 || st.Usage.CacheWrite < 0 || st.Usage.CacheRead < 0 || st.Usage.Output < 0 {
				bad("lot %q step %d: pass, usage and cost must not be negative", id, i)
			}
			if (st.Agent != "" || st.Vendor != "" || st.RawUsage != nil) && !st.Kind.Session() {
				bad("lot %q step %d: agent, vendor and raw_usage are for session steps; %s runs none", id, i, st.Kind)
			}
			if (st.Agent == "") != (st.Vendor == "") {
				bad("lot %q step %d: agent and vendor are recorded together (agent %q, vendor %q)", id, i, st.Agent, st.Vendor)
			}
			for k, v := range st.RawUsage {
				if k == "" || v < 0 {
					bad("lot %q step %d: raw_usage needs non-empty names and counts not negative (%q: %d)", id, i, k, v)
				}
			}
			if info, _ := Info(st.Kind); !info.Browser && (st.NotVerified != "" || len(st.Screenshots) > 0) {
				bad("lot %q step %d: not_verified and screenshots are a UX review's; %s is not one", id, i, st.Kind)
			}
			if len(st.Screenshots) > MaxScreenshots {
				bad("lot %q step %d: %d screenshots, at most %d are kept", id, i, len(st.Screenshots), MaxScreenshots)
			}
			for _, p := range st.Screenshots {
				if !filepath.IsAbs(p) || filepath.Clean(p) != p || !strings.HasSuffix(p, ".png") {
					bad("lot %q step %d: screenshot %q is not the absolute, clean path of a .png file", id, i, p)
				}
			}
			for repo := range st.AlsoCommits {
				if repo == "" {
					bad("lot %q step %d: also_commits has an empty repository name", id, i)
				}
			}
		}
		if l.Setup != nil && !slices.Contains(setupStatuses, l.Setup.Status) {
			bad("lot %q: setup status %q is not a setup status", id, l.Setup.Status)
		}
		if l.Integrating != nil {
			if len(l.Integrating.Repos) == 0 {
				bad("lot %q: integrating names no repository", id)
			}
			for i, m := range l.Integrating.Repos {
				if m.Repo == "" || m.Base == "" || m.Old == "" || m.New == "" {
					bad("lot %q: integrating repo %d needs repo, base, old and new", id, i)
				} else if !objectID(m.Old) || !objectID(m.New) {
					bad("lot %q: integrating repo %d: old and new must be full object ids (40 or 64 hex digits), got %q and %q", id, i, m.Old, m.New)
				}
			}
		}
		for i, f := range l.UXFindings {
			if !slices.Contains(severities, f.Severity) {
				bad("lot %q ux finding %d: severity %q is not a severity", id, i, f.Severity)
			}
		}
		for i, f := range l.Findings {
			if !slices.Contains(severities, f.Severity) {
				bad("lot %q finding %d: severity %q is not a severity", id, i, f.Severity)
			}
		}
	}
	validateQueue(s, bad)
	return errors.Join(errs...)
}

// MaxVersionBytes bounds the recorded cadence_version and agent_version
// (a plan shows them; a pull-request comment must stay small).
const MaxVersionBytes = 256

// ClipVersion is v as the state records and compares a version: its first
// line, without surrounding space, cut to MaxVersionBytes at a character
// boundary.
func ClipVersion(v string) string {
	v, _, _ = strings.Cut(strings.TrimSpace(v), "\n")
	v = strings.TrimSpace(v)
	if len(v) <= MaxVersionBytes {
		return v
	}
	cut := MaxVersionBytes
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut]
}

// objectID reports whether s is a full git object id: 40 (SHA-1) or 64
// (SHA-256) lower-case hex digits (gitformat-hash).
func objectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
