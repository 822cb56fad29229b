package spec

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// IDPattern is the form of lot ids and wave names: they name branches, folders
// and state keys. A name of this form must also pass git's rules for ref
// names and fit in a file name (names.go: no "..", no ".lock" or, for a
// lot, "." at the end, at most NameMax-NameReserve bytes).
var IDPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// isID is IDPattern.MatchString without the regexp machinery (the check
// of every lot id).
func isID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		if i == 0 && !letter {
			return false
		}
		if !letter && !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// SchemaKey is the top-level property of a *.hcl.json wave file that names
// its JSON Schema for editors ("$schema": "…/wave.schema.json"); the decoder
// accepts it with any value and ignores it. (HCL's native syntax cannot
// spell the name, so there it never occurs.)
const SchemaKey = "$schema"

var rootSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: SchemaKey}}, Blocks: []hcl.BlockHeaderSchema{
	{Type: "wave", LabelNames: []string{"name"}},
	{Type: "defaults"},
	{Type: "agent", LabelNames: []string{"name"}},
	{Type: "repo", LabelNames: []string{"name"}},
	{Type: "lot", LabelNames: []string{"id"}},
	{Type: "locals"},
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "executor", LabelNames: []string{"kind"}},
}}

var waveSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "budget"}, {Name: "budget_usd"}, {Name: "max_sessions"}, {Name: "on_quota"}, {Name: "templates"},
	{Name: "worktrees"}, {Name: "log_limit"},
}}

// lotSettings are the attributes a lot shares with the defaults block.
var lotSettings = []hcl.AttributeSchema{
	{Name: "agent"}, {Name: "review_agent"}, {Name: "model"}, {Name: "review_model"}, {Name: "fallback_model"}, {Name: "fix_passes"},
	{Name: "timeout"}, {Name: "review_timeout"}, {Name: "estimate"}, {Name: "budget"},
	{Name: "precheck"}, {Name: "small"}, {Name: "on_conflict"},
	{Name: "env"}, {Name: "path_prepend"}, {Name: "limits"},
}

var defaultsSchema = &hcl.BodySchema{Attributes: lotSettings}

var lotSchema = &hcl.BodySchema{Attributes: append(append([]hcl.AttributeSchema{
	{Name: "repo"}, {Name: "title"}, {Name: "brief"}, {Name: "run"}, {Name: "depends_on"}, {Name: "also"},
	{Name: "log_limit"}, {Name: "sandbox"}, {Name: "sandbox_writable"}, {Name: "visible"}, {Name: "ux"},
}, lotSettings...), bootstrapAttrs...), Blocks: []hcl.BlockHeaderSchema{uxBlock}}

var repoSchema = &hcl.BodySchema{Attributes: append([]hcl.AttributeSchema{
	{Name: "path", Required: true}, {Name: "base"}, {Name: "test"}, {Name: "parallel"}, {Name: "changelog"},
	{Name: "merge_queue"}, {Name: "env"}, {Name: "path_prepend"}, {Name: "log_limit"}, {Name: "test_timeout"}, {Name: "limits"},
	{Name: "sandbox"}, {Name: "sandbox_writable"},
}, bootstrapAttrs...), Blocks: []hcl.BlockHeaderSchema{uxBlock}}

// agentOnly are the lot settings that make no sense for a command lot.
var agentOnly = []string{"agent", "review_agent", "model", "review_model", "fallback_model", "fix_passes", "review_timeout", "budget", "precheck", "small", "on_conflict", "visible", "ux"}

// decoder carries the state of one decoding run.
type decoder struct {
	values
	cfg      *Config
	filename string
	// agentKinds are the kinds an agent block may name (Options.AgentKinds).
	agentKinds []string
	// settingsDecoder decodes an agent's own settings
	// (Options.AgentSettings); nil: not decoded.
	settingsDecoder func(kind string, body hcl.Body, ctx *hcl.EvalContext) (AgentSettings, hcl.Diagnostics)
	// agentCommand is a kind's default command (Options.AgentCommand).
	agentCommand func(kind string) string
	defaults     settings
	// defaultsSensitive are the defaults block's sensitive attributes.
	defaultsSensitive Fields
	// defaultsEnv and lotEnv are the env and path_prepend of the defaults
	// block and of each lot, merged by mergeEnvs once repos are resolved.
	defaultsEnv Env
	lotEnv      map[*Lot]Env
	// defaultsLimits are the defaults block's limits, merged by
	// mergeLimits under each lot's and its repo's.
	defaultsLimits Limits
	lotAttrs       map[*Lot]hcl.Attributes
	lotAgent       map[*Lot]*hcl.Attribute
	// lotReviewAgent is a lot's effective review_agent attribute (its
	// own, else the defaults'), resolved in the second pass; lotWritten
	// says which of its models and fallback were written (lot or
	// defaults), for the defaults that depend on its agents' kinds.
	lotReviewAgent map[*Lot]*hcl.Attribute
	lotWritten     map[*Lot]written
	lotBudget      map[*Lot]hcl.Range
	// lotBoot are each lot's own submodules, copy and setup, merged over
	// its repository's by mergeBootstraps.
	lotBoot map[*Lot]lotBootstrap
	// lotLogLimit are each lot's own log_limit, nil when it wrote none,
	// merged by mergeLogLimits.
	lotLogLimit map[*Lot]*Bytes
	// writable are the sandbox_writable lists of repos and lots, checked
	// once every repository is decoded (checkSandboxWritable).
	writable []writableList
	// lotUX are each lot's own ux block (nil: none), merged over its
	// repository's by mergeUX.
	lotUX map[*Lot]*UX
	// lotCase and repoCase find names that differ only in case.
	lotCase, repoCase caseFold
}

func (d *decoder) errorf(rng hcl.Range, summary, format string, args ...any) {
	d.values.errorf(rng, summary, format, args...)
}

func (d *decoder) duplicate(rng hcl.Range, kind, name string, first hcl.Range) {
	d.errorf(rng, "Duplicate "+kind, "A %s named %q was already declared at %s. Each %s needs a unique name.", kind, name, first.String(), kind)
}

func (d *decoder) decode(body hcl.Body, l *Loader, opts Options) {
	content, diags := body.Content(rootSchema)
	d.values.diags = append(d.values.diags, diags...)
	byType := map[string]hcl.Blocks{}
	for _, b := range content.Blocks {
		byType[b.Type] = append(byType[b.Type], b)
	}
	d.ctx.Variables["var"] = d.decodeVariables(byType["variable"], l, opts)
	d.ctx.Variables["local"] = d.decodeLocals(byType["locals"])

	d.decodeWave(byType["wave"], body)
	d.decodeExecutors(byType["executor"])
	for i, b := range byType["defaults"] {
		if i > 0 {
			d.duplicate(b.DefRange, "defaults block", "defaults", byType["defaults"][0].DefRange)
			continue
		}
		c, diags := b.Body.Content(defaultsSchema)
		d.values.diags = append(d.values.diags, diags...)
		d.defaults = d.decodeSettings(c.Attributes)
		var names Fields
		d.defaultsEnv = d.decodeEnv(c.Attributes, "the defaults block", &names)
		d.defaultsLimits, _ = d.limits(c.Attributes["limits"])
		d.defaultsSensitive = d.fields(c.Attributes, nil).with(names)
	}
	d.agentKinds = opts.AgentKinds
	if len(d.agentKinds) == 0 {
		d.agentKinds = DefaultAgentKinds
	}
	d.settingsDecoder = opts.AgentSettings
	d.agentCommand = opts.AgentCommand
	d.cfg.agentsByName = map[string]*Agent{}
	builtin := d.defaultAgent(AgentKindClaude)
	builtin.Name = BuiltinAgent
	d.cfg.Agents = []*Agent{builtin}
	d.cfg.agentsByName[builtin.Name] = builtin
	for _, b := range byType["agent"] {
		d.decodeAgent(b)
	}
	if builtin.Builtin {
		d.agentSettings(builtin) // no block of its name: the kind's defaults
	}
	d.cfg.reposByName = map[string]*Repo{}
	d.lotCase, d.repoCase = make(caseFold, len(byType["lot"])), caseFold{}
	for _, b := range byType["repo"] {
		d.decodeRepo(b)
	}
	d.cfg.lotsByID = make(map[string]*Lot, len(byType["lot"]))
	d.lotAttrs = make(map[*Lot]hcl.Attributes, len(byType["lot"]))
	d.lotAgent = make(map[*Lot]*hcl.Attribute, len(byType["lot"]))
	d.lotReviewAgent = make(map[*Lot]*hcl.Attribute, len(byType["lot"]))
	d.lotWritten = make(map[*Lot]written, len(byType["lot"]))
	d.lotBudget = make(map[*Lot]hcl.Range, len(byType["lot"]))
	d.lotEnv = make(map[*Lot]Env, len(byType["lot"]))
	d.lotBoot = make(map[*Lot]lotBootstrap, len(byType["lot"]))
	d.lotLogLimit = make(map[*Lot]*Bytes, len(byType["lot"]))
	d.lotUX = make(map[*Lot]*UX, len(byType["lot"]))
	for _, b := range byType["lot"] {
		d.decodeLot(b)
	}
	d.checkSandboxWritable()
	d.resolve()
	d.mergeEnvs()
	d.mergeLimits()
	d.mergeBootstraps()
	d.mergeLogLimits()
	d.mergeUX()
}

// mergeLogLimits fills every lot's LogLimit: its own, else its
// repository's, else the wave's, else DefaultLogLimit.
func (d *decoder) mergeLogLimits() {
	for _, l := range d.cfg.Lots {
		switch {
		case d.lotLogLimit[l] != nil:
			l.LogLimit = *d.lotLogLimit[l]
		case l.Repo != nil && l.Repo.LogLimit > 0:
			l.LogLimit = l.Repo.LogLimit
		case d.cfg.Wave.LogLimit > 0:
			l.LogLimit = d.cfg.Wave.LogLimit
		default:
			l.LogLimit = DefaultLogLimit
		}
	}
}

func (d *decoder) decodeWave(blocks hcl.Blocks, body hcl.Body) {
	w := &d.cfg.Wave
	w.MaxSessions, w.OnQuota = DefaultMaxSessions, OnQuotaSuspend
	if len(blocks) == 0 {
		rng := body.MissingItemRange()
		d.errorf(rng, "Missing wave block", `A wave file needs one wave block, like: wave "my-wave" { budget = "2M" }.`)
		return
	}
	for _, b := range blocks[1:] {
		d.errorf(b.DefRange, "Duplicate wave block", "A wave file has exactly one wave block; the first is at %s.", blocks[0].DefRange)
	}
	b := blocks[0]
	w.Name, w.DeclRange = b.Labels[0], b.DefRange
	if !IDPattern.MatchString(w.Name) {
		d.errorf(b.LabelRanges[0], "Invalid wave name", "%q cannot name branches and folders: use letters, digits, '_', '.' and '-', starting with a letter.", w.Name)
	} else {
		d.checkName(waveName, w.Name, b.LabelRanges[0])
	}
	c, diags := b.Body.Content(waveSchema)
	d.values.diags = append(d.values.diags, diags...)
	if t, ok := d.tokens(c.Attributes["budget"]); ok {
		w.Budget, w.BudgetRange = t, c.Attributes["budget"].Expr.Range()
	}
	if u, ok := d.usd(c.Attributes["budget_usd"]); ok {
		w.BudgetUSD = u
	}
	if n, ok := d.whole(c.Attributes["max_sessions"], 1); ok {
		w.MaxSessions = n
	}
	if s, ok := d.enum(c.Attributes["on_quota"], string(OnQuotaSuspend), string(OnQuotaWait)); ok {
		w.OnQuota = OnQuota(s)
	}
	if s, ok := d.str(c.Attributes["templates"]); ok {
		w.Templates = d.abs(s)
		if err := templatesFolder(d.cfg.Dir, w.Templates); err != nil {
			d.invalid(c.Attributes["templates"], "Invalid templates folder", "%s.", err)
		}
	}
	if s, ok := d.str(c.Attributes["worktrees"]); ok && s != "" {
		w.Worktrees = d.abs(s)
	}
	if b, ok := d.size(c.Attributes["log_limit"], MinLogLimit); ok {
		w.LogLimit = b
	}
}

func (d *decoder) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(d.cfg.Dir, p)
}

func (d *decoder) decodeRepo(b *hcl.Block) {
	name := b.Labels[0]
	if !hclsyntax.ValidIdentifier(name) {
		d.errorf(b.LabelRanges[0], "Invalid repo name", "%q is not a valid name: use letters, digits, underscores and dashes, starting with a letter or underscore.", name)
		return
	}
	if prev := d.cfg.reposByName[name]; prev != nil {
		d.duplicate(b.DefRange, "repo", name, prev.DeclRange)
		return
	}
	d.repoCase.check(d, "repo name", name, b.LabelRanges[0])
	r := &Repo{Name: name, Base: DefaultBase, Parallel: 1, TestTimeout: DefaultTestTimeout, DeclRange: b.DefRange}
	d.cfg.Repos = append(d.cfg.Repos, r)
	d.cfg.reposByName[name] = r
	c, diags := b.Body.Content(repoSchema)
	d.values.diags = append(d.values.diags, diags...)
	// A missing path attribute is reported by Content; a null or empty one here.
	pathAttr := c.Attributes["path"]
	if s, ok, written := d.strWritten(pathAttr); ok && s != "" {
		r.RawPath, r.Path = s, d.abs(s)
	} else if pathAttr != nil && !(written && !ok) {
		d.errorf(b.DefRange, "Missing repo path", "Repo %q needs a path to the repository's folder (relative to the wave file).", name)
	}
	if s, ok := d.str(c.Attributes["base"]); ok {
		r.Base = s
	}
	if s, ok := d.str(c.Attributes["test"]); ok {
		r.Test = commandLineEnds(s)
		d.warnLongCommand(c.Attributes["test"], fmt.Sprintf("Repo %q's test", name), r.Test)
	}
	if t, ok := d.timeout(c.Attributes["test_timeout"]); ok {
		r.TestTimeout = t
	}
	r.Limits, _ = d.limits(c.Attributes["limits"])
	if n, ok := d.whole(c.Attributes["parallel"], 1); ok {
		r.Parallel = n
	}
	if s, ok := d.str(c.Attributes["changelog"]); ok {
		r.Changelog = s
	}
	if on, ok := d.boolean(c.Attributes["merge_queue"]); ok {
		r.NoMergeQueue = !on
	}
	if on, ok := d.boolean(c.Attributes["sandbox"]); ok {
		r.NoSandbox = !on
	}
	r.SandboxWritable = d.sandboxWritable(c.Attributes, fmt.Sprintf("repo %q", name))
	if b, ok := d.size(c.Attributes["log_limit"], MinLogLimit); ok {
		r.LogLimit = b
	}
	r.Bootstrap, _ = d.decodeBootstrap(c.Attributes, fmt.Sprintf("repo %q", name))
	var names Fields
	r.Env = d.decodeEnv(c.Attributes, fmt.Sprintf("repo %q", name), &names)
	r.Sensitive = d.fields(c.Attributes, nil).with(names)
	r.UX = d.uxBlocks(c.Blocks, fmt.Sprintf("repo %q", name))
}

func (d *decoder) decodeLot(b *hcl.Block) {
	id := b.Labels[0]
	if !isID(id) {
		d.errorf(b.LabelRanges[0], "Invalid lot id", "%q cannot be a lot id: ids name branches, folders and state keys, so they use letters, digits, '_', '.' and '-', starting with a letter.", id)
		return
	}
	if !d.checkName(lotName, id, b.LabelRanges[0]) {
		return
	}
	if prev := d.cfg.lotsByID[id]; prev != nil {
		d.duplicate(b.DefRange, "lot", id, prev.DeclRange)
		return
	}
	d.lotCase.check(d, "lot id", id, b.LabelRanges[0])
	l := &Lot{ID: id, Index: len(d.cfg.Lots), Title: id, DeclRange: b.DefRange}
	d.cfg.Lots = append(d.cfg.Lots, l)
	d.cfg.lotsByID[id] = l
	c, diags := b.Body.Content(lotSchema)
	d.values.diags = append(d.values.diags, diags...)
	d.lotAttrs[l] = c.Attributes
	if s, ok := d.str(c.Attributes["title"]); ok {
		l.Title = s
	}
	brief, hasBrief, briefWritten := d.strWritten(c.Attributes["brief"])
	run, hasRun, runWritten := d.strWritten(c.Attributes["run"])
	switch {
	case briefWritten && runWritten:
		d.errorf(c.Attributes["run"].NameRange, "Both brief and run",
			"Lot %q has a brief (an agent lot) and a run command (a command lot); a lot has exactly one of them. Split it into two lots with depends_on.", id)
	case !briefWritten && !runWritten:
		d.errorf(b.DefRange, "Neither brief nor run",
			"Lot %q needs a brief (work for an agent) or a run command (a plain shell command).", id)
	case runWritten:
		l.Kind = CommandLot
		for _, name := range agentOnly {
			if a := c.Attributes[name]; a != nil {
				d.errorf(a.NameRange, "Not for a command lot", "%q applies to agent lots only; lot %q is a command lot (it has run).", name, id)
			}
		}
	}
	if hasBrief {
		l.Brief = brief
	}
	if hasRun {
		l.Run = commandLineEnds(run)
		if CommandTooLong(l.Run) {
			d.warnLongCommand(c.Attributes["run"], fmt.Sprintf("Lot %q's run", id), l.Run)
		}
	}
	if (hasBrief && brief == "") || (hasRun && run == "") {
		d.errorf(b.DefRange, "Empty lot", "Lot %q has an empty %s.", id, map[bool]string{true: "brief", false: "run command"}[hasBrief])
	}
	d.applySettings(l, d.decodeSettings(c.Attributes))
	d.lotLogLimit[l] = ptr(d.size(c.Attributes["log_limit"], MinLogLimit))
	if on, ok := d.boolean(c.Attributes["sandbox"]); ok {
		l.NoSandbox = !on
	}
	where := "lot " + strconv.Quote(id) // %q's form, built once per lot
	l.SandboxWritable = d.sandboxWritable(c.Attributes, where)
	l.Limits, _ = d.limits(c.Attributes["limits"])
	var inherited Fields
	if l.Kind == AgentLot {
		inherited = d.defaultsSensitive
	}
	var boot lotBootstrap
	boot.b, boot.set = d.decodeBootstrap(c.Attributes, where)
	d.lotBoot[l] = boot
	var names Fields
	d.lotEnv[l] = d.decodeEnv(c.Attributes, where, &names)
	l.Sensitive = d.fields(c.Attributes, inherited).with(names)
	if on, ok := d.boolean(c.Attributes["visible"]); ok {
		l.Visible = on
	}
	own, skip := d.uxObject(c.Attributes["ux"], fmt.Sprintf("lot %q", id))
	if blk := d.uxBlocks(c.Blocks, fmt.Sprintf("lot %q", id)); blk != nil {
		if own != nil || skip {
			d.errorf(blk.DeclRange, "Duplicate ux block", "Lot %q has one ux block at most, and ux = false skips the review: write one of them.", id)
		}
		own = blk
	}
	d.lotUX[l], l.NoUX = own, skip
}

// settings are the lot settings written in one block (a lot or defaults);
// nil fields were not written.
type settings struct {
	agent, reviewAgent               *hcl.Attribute // references, resolved in the second pass
	model, reviewModel, fallback     *string
	fixPasses                        *int
	timeout, reviewTimeout, estimate *time.Duration
	budget                           *Tokens
	budgetRange                      hcl.Range
	precheck, small                  *bool
	onConflict                       *OnConflict
}

// written says which of a lot's model settings were written, in the lot
// or the defaults block.
type written struct{ model, reviewModel, fallback bool }

func ptr[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}

func (d *decoder) decodeSettings(attrs hcl.Attributes) settings {
	s := settings{agent: attrs["agent"], reviewAgent: attrs["review_agent"]}
	s.model = ptr(d.str(attrs["model"]))
	s.reviewModel = ptr(d.str(attrs["review_model"]))
	s.fallback = ptr(d.fallbackModel(attrs["fallback_model"]))
	s.fixPasses = ptr(d.whole(attrs["fix_passes"], 0))
	s.timeout = ptr(d.timeout(attrs["timeout"]))
	s.reviewTimeout = ptr(d.timeout(attrs["review_timeout"]))
	s.estimate = ptr(d.duration(attrs["estimate"]))
	s.budget = ptr(d.tokens(attrs["budget"]))
	if s.budget != nil {
		s.budgetRange = attrs["budget"].Expr.Range()
	}
	s.precheck = ptr(d.boolean(attrs["precheck"]))
	s.small = ptr(d.boolean(attrs["small"]))
	if v, ok := d.enum(attrs["on_conflict"], string(OnConflictHandBack), string(OnConflictFix)); ok {
		s.onConflict = ptr(OnConflict(v), true)
	}
	return s
}

// fallbackModel reads a fallback_model attribute (a lot's, the defaults',
// an agent's): a model name, as model takes; an empty one is an error.
func (d *decoder) fallbackModel(attr *hcl.Attribute) (string, bool) {
	s, ok := d.str(attr)
	if ok && strings.TrimSpace(s) == "" {
		d.invalid(attr, "Empty fallback_model", "%s", "fallback_model names the model the agent switches to when the lot's model is overloaded, such as \"sonnet\"; leave it out for none.")
		return "", false
	}
	return s, ok
}

// over returns s with every field it lacks taken from base.
func (s settings) over(base settings) settings {
	if s.agent == nil {
		s.agent = base.agent
	}
	if s.reviewAgent == nil {
		s.reviewAgent = base.reviewAgent
	}
	s.model = first(s.model, base.model)
	s.reviewModel = first(s.reviewModel, base.reviewModel)
	s.fallback = first(s.fallback, base.fallback)
	s.fixPasses = first(s.fixPasses, base.fixPasses)
	s.timeout = first(s.timeout, base.timeout)
	s.reviewTimeout = first(s.reviewTimeout, base.reviewTimeout)
	s.estimate = first(s.estimate, base.estimate)
	if s.budget == nil {
		s.budget, s.budgetRange = base.budget, base.budgetRange
	}
	s.precheck = first(s.precheck, base.precheck)
	s.small = first(s.small, base.small)
	s.onConflict = first(s.onConflict, base.onConflict)
	return s
}

func first[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// applySettings fills a lot's effective settings: its own, else the defaults
// block's (agent lots only), else the built-in defaults.
func (d *decoder) applySettings(l *Lot, own settings) {
	s := own.over(d.defaults)
	if l.Kind == CommandLot {
		// Of the settings, only timeout and estimate mean something for a
		// command lot.
		l.Timeout, l.Estimate = DefaultCommandTimeout, DefaultCommandEstimate
		set(&l.Timeout, s.timeout)
		set(&l.Estimate, s.estimate)
		l.EstimateSet = s.estimate != nil
		return
	}
	l.Model, l.ReviewModel, l.FixPasses = DefaultModel, DefaultReviewModel, DefaultFixPasses
	l.Timeout, l.ReviewTimeout, l.OnConflict = DefaultTimeout, DefaultReviewTimeout, OnConflictHandBack
	l.Estimate = DefaultAgentEstimate
	set(&l.Model, s.model)
	set(&l.ReviewModel, s.reviewModel)
	set(&l.FallbackModel, s.fallback)
	set(&l.FixPasses, s.fixPasses)
	set(&l.Timeout, s.timeout)
	set(&l.ReviewTimeout, s.reviewTimeout)
	set(&l.Estimate, s.estimate)
	l.EstimateSet = s.estimate != nil
	set(&l.Budget, s.budget)
	set(&l.Precheck, s.precheck)
	set(&l.Small, s.small)
	set(&l.OnConflict, s.onConflict)
	d.lotAgent[l] = s.agent
	d.lotReviewAgent[l] = s.reviewAgent
	d.lotWritten[l] = written{model: s.model != nil, reviewModel: s.reviewModel != nil, fallback: s.fallback != nil}
	d.lotBudget[l] = s.budgetRange
}
