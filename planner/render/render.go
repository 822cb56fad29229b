// Package render writes a planner.Plan for people and programs: Text for a
// terminal (cadence plan), JSON for machines (plan -json, described by
// schemas/plan.schema.json), Markdown for a pull-request comment, and DOT or
// Mermaid for cadence graph.
//
// Every renderer is deterministic: the same plan gives the same bytes (no
// map iteration order, no clock, no terminal probing). Whether to colour is
// the caller's decision (Options.Color: a TTY and no -no-color).
//
// Paths. Plan.File is written as the caller gave it. Repository paths, which
// the planner holds as absolute paths, appear only in JSON, and there
// relative to the wave file's folder with forward slashes (as they are written
// in the wave file, cleaned), so that a plan made on a CI runner does not leak
// the runner's folders and goldens are the same on every machine; a path that
// cannot be made relative stays absolute.
//
// Conventions shared by the human formats: a lot's steps read
// "implement (sonnet) → review (opus) → fix ≤2" (a repeated step shows its
// model only when no earlier step showed it); a command lot's step reads
// "command"; an estimate written "~1h" is the built-in default of a lot that
// sets none; estimates are shown for pending lots only; a lot's
// fallback_model is shown beside its step models: "implement (sonnet,
// fallback haiku)".
package render

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// Options shape the text output.
type Options struct {
	// Color turns on ANSI colours. The caller decides: a TTY and no -no-color.
	Color bool
	// CompactWarnings sums up the warnings that do not refuse on one line
	// ("⚠ 2 warnings (…)"); those that refuse are shown whole (plan and
	// apply -compact-warnings, Terraform's flag).
	CompactWarnings bool
}

// stepsLabel renders a lot's steps: "implement (sonnet) → review (opus) →
// fix ≤2", or "command" for a command lot. fallback is the lot's
// fallback_model ("" for none), shown beside each model shown that is not
// itself: "implement (sonnet, fallback haiku)" (the agent CLI gets no
// fallback for a step whose model it is).
func stepsLabel(steps []planner.Step, fallback string) string {
	var b strings.Builder
	var shown []string // the agents and models shown so far
	agents := showAgents(steps)
	for i, s := range steps {
		if i > 0 {
			b.WriteString(" → ")
		}
		if s.Kind == state.StepRun {
			b.WriteString("command")
			continue
		}
		b.WriteString(string(s.Kind))
		by := ""
		if agents {
			by = agentLabel(s)
		}
		if (s.Model != "" || by != "") && (s.Max == 0 || !slices.Contains(shown, by+"\x00"+s.Model)) {
			inner := s.Model
			if inner == spec.Redacted {
				// "(sensitive)" already has its parentheses
				inner = strings.Trim(spec.Redacted, "()")
			}
			if by != "" {
				inner = strings.TrimSpace(inner + " by " + by)
			}
			fb := fallback
			if s.Agent != "" {
				fb = s.Fallback
			}
			if fb != "" && fb != s.Model {
				inner += ", fallback " + fb
			}
			b.WriteString(" (" + inner + ")")
			shown = append(shown, by+"\x00"+s.Model)
		}
		if s.Max > 0 {
			b.WriteString(" ≤" + strconv.Itoa(s.Max))
		}
	}
	return b.String()
}

// showAgents says whether a lot's steps name their agents: when they run
// with more than one agent, or with another than the built-in claude.
func showAgents(steps []planner.Step) bool {
	first := ""
	for _, s := range steps {
		if s.Agent == "" {
			continue
		}
		if first == "" {
			first = s.Agent
		}
		if s.Agent != first || s.Agent != spec.BuiltinAgent || s.AgentKind != spec.AgentKindClaude {
			return true
		}
	}
	return false
}

// agentLabel names a step's agent: "codex" when its name is its kind,
// else "reviewer, codex" (name, kind).
func agentLabel(s planner.Step) string {
	if s.Agent == s.AgentKind || s.AgentKind == "" {
		return s.Agent
	}
	return s.Agent + ", " + s.AgentKind
}

// resumeLabel renders where a lot resumes: "fix (pass 2)", "review".
func resumeLabel(r *planner.Resume) string {
	if r == nil {
		return ""
	}
	if r.Pass > 0 {
		return string(r.Step) + " (pass " + strconv.Itoa(r.Pass) + ")"
	}
	return string(r.Step)
}

// whatLabel is the middle of a lot's line: its steps when apply works on it,
// else why it does not.
func whatLabel(lp *planner.LotPlan) string {
	switch lp.Action {
	case planner.ActionResume:
		return "resume at " + resumeLabel(lp.ResumeAt) + ": " + stepsLabel(lp.Steps, lp.FallbackModel)
	case planner.ActionAnswer:
		return "waiting for an answer: " + oneLine(lp.Reason)
	case planner.ActionHeld:
		return oneLine(lp.Reason) + " (apply -replace " + lp.ID + " runs it again)"
	case planner.ActionRefused:
		return "refused: " + oneLine(lp.Reason)
	case planner.ActionBlocked:
		return "blocked: " + oneLine(lp.Reason)
	case planner.ActionDone:
		return "done"
	}
	return stepsLabel(lp.Steps, lp.FallbackModel)
}

// repoLabel renders a lot's repositories: "api", "api+web", or "-".
func repoLabel(lp *planner.LotPlan) string {
	r := lp.Repo
	if r == "" {
		r = "-"
	}
	for _, a := range lp.Also {
		r += "+" + a
	}
	return r
}

// budgetLabel renders a lot's budget and what it spent: "300k",
// "120k of 300k", "120k spent", "no budget"; "" for a command lot.
func budgetLabel(lp *planner.LotPlan) string {
	spent := spec.Tokens(lp.Spent)
	switch {
	case lp.Kind == spec.CommandLot && lp.Budget == 0:
		return ""
	case lp.Budget > 0 && spent > 0:
		return spent.String() + " of " + lp.Budget.String()
	case lp.Budget > 0:
		return lp.Budget.String()
	case spent > 0:
		return spent.String() + " spent"
	}
	return "no budget"
}

// estimateLabel renders a pending lot's estimate, "~" marking the default;
// "" for a lot apply does not work on.
func estimateLabel(lp *planner.LotPlan) string {
	if !lp.Action.Pending() {
		return ""
	}
	d := spec.FormatDuration(lp.Estimate)
	if !lp.EstimateSet {
		return "~" + d
	}
	return d
}

// titleLabel is a lot's title on one line: the id when the lot sets none
// (spec's default; docs/wave-file.md, `lot "ID"`).
func titleLabel(lp *planner.LotPlan) string {
	if t := oneLine(lp.Title); t != "" {
		return t
	}
	return lp.ID
}

// oneLine folds every run of white space (newlines included) into one space.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\t\n\r\v\f") && !strings.Contains(s, "  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// clip shortens s to at most n runes, ending with "…" when it cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
			break
		}
		count++
	}
	return s[:i] + "…"
}

// escaper maps ASCII bytes to their escapes ("" for a byte kept as is). A
// "\r\n" pair is escaped as one '\n'.
type escaper [128]string

// newEscaper builds an escaper from byte, escape pairs.
func newEscaper(pairs ...string) *escaper {
	var e escaper
	for i := 0; i+1 < len(pairs); i += 2 {
		e[pairs[i][0]] = pairs[i+1]
	}
	return &e
}

// escape returns s with its bytes escaped; s itself when nothing needs it.
func (e *escaper) escape(s string) string {
	i := 0
	for i < len(s) && (s[i] >= 128 || e[s[i]] == "") {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\r' && i+1 < len(s) && s[i+1] == '\n' && e['\n'] != "":
			// the '\n' that follows is escaped alone
		case c < 128 && e[c] != "":
			b.WriteString(e[c])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// plural returns "1 lot", "2 lots".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// thousands renders n with comma separators: 9,123.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// seconds is a duration in whole seconds, rounded.
func seconds(d time.Duration) int64 {
	return int64(d.Round(time.Second) / time.Second)
}

// repoPath makes a repository's absolute path relative to the wave file's
// folder, with forward slashes; it stays absolute when that is impossible.
func repoPath(p *planner.Plan, path string) string {
	if path == "" || !filepath.IsAbs(path) {
		return filepath.ToSlash(path)
	}
	dir, err := filepath.Abs(filepath.Dir(p.File))
	if err != nil {
		return filepath.ToSlash(path)
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}

// totalsLine is one labelled line of the totals.
type totalsLine struct{ label, value string }

// totalsLines sums a plan up in words, for the text and Markdown renderers.
func totalsLines(p *planner.Plan) []totalsLine {
	t := p.Totals
	lots := p.Summary()
	if t.Outside > 0 {
		lots += "; " + plural(t.Outside, "lot", "lots") + " outside -target"
	}
	out := []totalsLine{{"Lots", lots}}
	if showBudget(p) {
		out = append(out, totalsLine{"Budget", budgetSummary(t)})
	}
	if l, ok := concurrencyLine(p); ok {
		out = append(out, l)
	}
	if t.PendingAgent+t.PendingCommand == 0 {
		out = append(out, totalsLine{"Time", "nothing to run"})
	} else {
		out = append(out, totalsLine{"Time", "critical path " + spec.FormatDuration(t.CriticalPath) +
			"; about " + spec.FormatDuration(t.Estimate) + " " + capsLabel(t)})
	}
	if pushes := pushesSummary(p); pushes != "" {
		out = append(out, totalsLine{"Pushes", pushes})
	}
	if tc := toolchainSummary(p); tc != "" {
		out = append(out, totalsLine{"Tools", tc})
	}
	if env := envSummary(p); env != "" {
		out = append(out, totalsLine{"Env", env})
	}
	if t := timeoutsSummary(p); t != "" {
		out = append(out, totalsLine{"Timeouts", t})
	}
	if l := limitsSummary(p); l != "" {
		out = append(out, totalsLine{"Limits", l})
	}
	if setup := setupSummary(p); setup != "" {
		out = append(out, totalsLine{"Setup", setup})
	}
	if q := quotaSummary(p, now()); q != "" {
		out = append(out, totalsLine{"Quota", q})
	}
	if p.APIFailure != "" {
		out = append(out, totalsLine{"Suspended", "the last apply stopped on an API failure: " + oneLine(p.APIFailure) + "; then cadence apply resumes"})
	}
	if s := PinnedSummary(p.Pinned); s != "" {
		out = append(out, totalsLine{"Tool", s})
	}
	return out
}

// PinnedSummary is the tool the wave was started with: "cadence v1.2.3,
// agent CLI 2.1.3 (Claude Code) (pinned by the wave's first apply)"; ""
// when none is recorded.
func PinnedSummary(pv *planner.Pinned) string {
	if pv == nil {
		return ""
	}
	var parts []string
	if pv.Cadence != "" {
		parts = append(parts, "cadence "+pv.Cadence)
	}
	if pv.Agent != "" {
		parts = append(parts, "agent CLI "+pv.Agent)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " (pinned by the wave's first apply; apply -upgrade changes it)"
}

// now is the clock of the quota line (tests set it).
var now = time.Now

// quotaSummary is the recorded usage limit while it lasts: "usage limit
// until 15:00 (in 42m): apply starts no session before (-ignore-quota to
// try anyway)"; "" when none is recorded or its time has passed.
func quotaSummary(p *planner.Plan, at time.Time) string {
	if p.ResetAt == nil || !p.ResetAt.After(at) {
		return ""
	}
	s := "usage limit until " + ResetLabel(*p.ResetAt, at)
	if p.OnQuota == spec.OnQuotaWait {
		return s + `: apply waits for it before any session (on_quota = "wait")`
	}
	return s + ": apply starts no session before (-ignore-quota to try anyway)"
}

// ResetLabel renders a reset time for people, in the local zone, with how
// far off it is: "15:00 (in 42m)", "Dec 3 09:00 (in 42h30m)" beyond a
// day, "15:00 (passed)" once it has passed.
func ResetLabel(t, at time.Time) string {
	l := t.Local()
	s := l.Format("15:04")
	if d := t.Sub(at); d > 24*time.Hour || l.Year() != at.Local().Year() {
		s = l.Format("Jan 2 15:04")
	}
	if !t.After(at) {
		return s + " (passed)"
	}
	d := t.Sub(at)
	if d >= time.Minute {
		d = d.Round(time.Minute)
	}
	return s + " (in " + spec.FormatDuration(d) + ")"
}

// maxPushRepos is how many repositories a group of the pushes line names.
const maxPushRepos = 10

// pushesSummary says per repository whether a push from its lots is
// prevented or only detected: "prevented in api; only detected in ops
// (command lot c)"; "" when no pending lot works in any repository. A
// detected repository gives its reason; an offline plan says "unknown
// (offline)" where only the machine could tell.
func pushesSummary(p *planner.Plan) string {
	groups := []struct {
		pushes planner.Pushes
		label  string
	}{
		{planner.PushesPrevented, "prevented in "},
		{planner.PushesDetected, "only detected in "},
		{planner.PushesUnknown, "unknown (offline) in "},
	}
	var parts []string
	for _, g := range groups {
		var names []string
		n := 0
		for _, r := range p.Repos {
			if r.Pushes != g.pushes {
				continue
			}
			n++
			if len(names) == maxPushRepos {
				continue
			}
			name := r.Name
			if g.pushes == planner.PushesDetected && r.PushesReason != "" {
				name += " (" + r.PushesReason + ")"
			}
			names = append(names, name)
		}
		if n > len(names) {
			names = append(names, "and "+plural(n-len(names), "more", "more"))
		}
		if len(names) > 0 {
			parts = append(parts, g.label+strings.Join(names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// capsLabel names the caps the duration estimate assumes: "at a cap of 2
// sessions", "at a cap of 1 session and 4 jobs", "at a cap of 4 jobs". The
// session cap is less the live holds, at least 1 (with every slot held,
// "1 session (once a hold ends)").
func capsLabel(t planner.Totals) string {
	var caps []string
	if t.PendingAgent > 0 {
		c := plural(max(1, t.MaxSessions-t.Holds), "session", "sessions")
		if t.MaxSessions-t.Holds < 1 {
			c += " (once a hold ends)"
		}
		caps = append(caps, c)
	}
	if t.PendingCommand > 0 {
		caps = append(caps, plural(t.Jobs, "job", "jobs"))
	}
	return "at a cap of " + strings.Join(caps, " and ")
}

// targetsLabel says what -target selected: "login, and the lots it depends
// on".
func targetsLabel(ids []string) string {
	if len(ids) == 1 {
		return ids[0] + ", and the lots it depends on"
	}
	return strings.Join(ids, ", ") + ", and the lots they depend on"
}

// budgetSummary is the budget line: lot budgets against the wave budget,
// lots without a lot budget, what was spent, the dollar ceiling.
func budgetSummary(t planner.Totals) string {
	var parts []string
	var b string
	switch {
	case t.PendingAgent == 0:
		b = "no agent lot to run"
	case t.Ceiling > 0:
		b = "lot budgets add up to " + t.Ceiling.String()
	default:
		b = "no lot budgets"
	}
	if t.Unbounded > 0 && t.Ceiling > 0 {
		b += " (+" + plural(t.Unbounded, "pending agent lot", "pending agent lots") + " without one)"
	}
	if t.Budget > 0 {
		b += " against a wave budget of " + t.Budget.String()
	} else {
		b += "; no wave budget"
	}
	parts = append(parts, b)
	if t.Spent > 0 || t.SpentMicro > 0 {
		s := "spent " + spec.Tokens(t.Spent).String()
		switch {
		case t.SpentMicro > 0 && t.SpentEstimated:
			s += " (~" + spec.USD(t.SpentMicro).String() + ", estimated)"
		case t.SpentMicro > 0:
			s += " (" + spec.USD(t.SpentMicro).String() + ")"
		}
		parts = append(parts, s)
	}
	if t.BudgetUSD > 0 {
		parts = append(parts, "USD ceiling "+t.BudgetUSD.String())
	}
	return strings.Join(parts, "; ")
}

// warningText is a warning's message, prefixed "apply refuses: " when apply
// will not start until it is dealt with and the message does not say so.
func warningText(w planner.Warning) string {
	if w.Refuses && !strings.Contains(w.Message, "apply refuses") {
		return "apply refuses: " + w.Message
	}
	return w.Message
}

// maxFiles is how many of a warning's files are listed.
const maxFiles = 10

// warningFiles returns the files listed under a warning (at most maxFiles)
// and how many more there are. An overlap warning names its file in its
// message already.
func warningFiles(w planner.Warning) ([]string, int) {
	if w.Kind == planner.WarnOverlap || len(w.Files) == 0 {
		return nil, 0
	}
	if len(w.Files) <= maxFiles {
		return w.Files, 0
	}
	return w.Files[:maxFiles], len(w.Files) - maxFiles
}
