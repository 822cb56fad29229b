package spec

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Env is the environment a block (defaults, a repo, a lot) sets for the
// child processes of a lot: agent sessions, test gates and command lots,
// never cadence itself. Both fields are nil when the block sets none.
type Env struct {
	// Vars are the variables env = { NAME = "value" } sets, by name. A
	// value may be sensitive (Fields "env"): a plan shows names only.
	Vars map[string]string
	// Secret names the entries of Vars whose value (or name) derives
	// from a sensitive value (env(), a variable declared sensitive =
	// true), or all of them when the whole map does; nil when none. A
	// remote step's job never carries them (docs/remote.md, Worker).
	Secret map[string]bool
	// PathPrepend are the entries path_prepend = [...] puts before PATH,
	// in the order written, each absolute (a relative entry is relative to
	// the wave file's folder).
	PathPrepend []string
}

// Names returns the names of e.Vars, sorted: what a plan shows of them.
func (e Env) Names() []string {
	names := make([]string, 0, len(e.Vars))
	for n := range e.Vars {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Empty reports whether e sets nothing.
func (e Env) Empty() bool { return len(e.Vars) == 0 && len(e.PathPrepend) == 0 }

// over returns the environment of e over base: e's variables win per name;
// e's path entries come first, then base's.
func (e Env) over(base Env) Env {
	var out Env
	if len(e.Vars)+len(base.Vars) > 0 {
		out.Vars = make(map[string]string, len(e.Vars)+len(base.Vars))
		for n, v := range base.Vars {
			out.Vars[n] = v
		}
		for n, v := range e.Vars {
			out.Vars[n] = v
		}
		for n := range out.Vars {
			if (e.Secret[n] && hasKey(e.Vars, n)) || (base.Secret[n] && !hasKey(e.Vars, n)) {
				if out.Secret == nil {
					out.Secret = map[string]bool{}
				}
				out.Secret[n] = true
			}
		}
	}
	if len(e.PathPrepend)+len(base.PathPrepend) > 0 {
		out.PathPrepend = append(slices.Clone(e.PathPrepend), base.PathPrepend...)
	}
	return out
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// envNamePattern is a POSIX environment variable name (IEEE Std 1003.1,
// 8.1: letters, digits and '_', not starting with a digit).
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedEnv are the names env may not set, with the reason: cadence sets
// them for every child process, or the agent CLI's login, its sandbox and
// the git guards depend on them. PATH is changed with path_prepend.
var reservedEnv = map[string]string{
	"PATH":                                 "PATH is changed with path_prepend = [\"dir\", ...], whose entries come before the inherited PATH",
	"HOME":                                 "the agent CLI's login and settings, and git's configuration, are found through HOME",
	"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "cadence sets it for every Claude Code session",
	"CLAUDE_CODE_MAX_RETRIES":              "cadence sets it from the agent's max_retries",
}

// reservedEnvPrefixes are name prefixes env may not set: CADENCE_ marks a
// step's processes (the wave, the lot, the session) and configures cadence;
// GIT_CONFIG_ carries the push guards (gitint).
var reservedEnvPrefixes = map[string]string{
	"CADENCE_":    "cadence owns the CADENCE_ variables (they mark every process of a step)",
	"GIT_CONFIG_": "cadence's push guards are set through GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n",
}

// envNameProblem says why name cannot be set by env ("" when it can).
func envNameProblem(name string) string {
	if !envNamePattern.MatchString(name) {
		return "it is not a variable name (letters, digits and '_', not starting with a digit)"
	}
	if why, ok := reservedEnv[strings.ToUpper(name)]; ok {
		return why
	}
	for p, why := range reservedEnvPrefixes {
		if strings.HasPrefix(strings.ToUpper(name), p) {
			return why
		}
	}
	return ""
}

// decodeEnv reads the env and path_prepend attributes of one block (what
// is its name in messages: "repo \"api\"", "the defaults block").
// A sensitive map, or one with a sensitive name, adds EnvNames to *sens.
func (d *decoder) decodeEnv(attrs hcl.Attributes, what string, sens *Fields) Env {
	var e Env
	if a := attrs["env"]; a != nil {
		val, ok := d.eval(a, cty.Map(cty.String), "an object of strings")
		if d.sensitiveWhole[a] {
			*sens = sens.add(EnvNames)
		}
		var secret func(string) bool
		if d.sensitive[a] {
			secret = d.secretEntries(a)
		}
		if ok {
			for name, v := range val.AsValueMap() {
				if v.IsNull() {
					d.errorf(a.Expr.Range(), "Invalid env value", "env of %s: %s is null; give it a string (\"\" for empty).", what, d.envName(a, name))
					continue
				}
				if why := envNameProblem(name); why != "" {
					d.errorf(a.Expr.Range(), "Invalid env name", "env of %s cannot set %s: %s.", what, d.envName(a, name), why)
					continue
				}
				if strings.ContainsRune(v.AsString(), 0) {
					d.invalid(a, "Invalid env value", "env of %s: the value of %s contains a NUL byte.", what, name)
					continue
				}
				if e.Vars == nil {
					e.Vars = map[string]string{}
				}
				e.Vars[name] = v.AsString()
				if secret != nil && secret(name) {
					if e.Secret == nil {
						e.Secret = map[string]bool{}
					}
					e.Secret[name] = true
				}
			}
		}
	}
	if a := attrs["path_prepend"]; a != nil {
		if list, ok := d.strList(a); ok {
			for _, p := range list {
				if p == "" || strings.ContainsAny(p, ":\x00") {
					d.invalid(a, "Invalid path_prepend entry", "path_prepend of %s: %q is not a folder PATH can hold (empty, or holds ':' or a NUL byte).", what, p)
					continue
				}
				e.PathPrepend = append(e.PathPrepend, d.abs(p))
			}
		}
	}
	return e
}

// secretEntries says which entries of the env attribute a, whose value
// derives from a sensitive one, do: every entry when the whole value (or
// a key) is marked, else those whose value is. It evaluates a again for
// its marks (eval unmarks what it returns); what it cannot tell is
// secret.
func (d *decoder) secretEntries(a *hcl.Attribute) func(string) bool {
	all := func(string) bool { return true }
	raw, diags := a.Expr.Value(d.ctx)
	if diags.HasErrors() || raw.HasMark(Sensitive) || !raw.IsWhollyKnown() || raw.IsNull() ||
		!(raw.Type().IsObjectType() || raw.Type().IsMapType()) {
		return all
	}
	names := map[string]bool{}
	for it := raw.ElementIterator(); it.Next(); {
		k, v := it.Element()
		if k.ContainsMarked() {
			return all // a sensitive name: no entry can be told apart
		}
		if _, marks := v.UnmarkDeep(); hasSensitive(marks) {
			names[k.AsString()] = true
		}
	}
	return func(name string) bool { return names[name] }
}

// envName quotes name for a message, unless a's value is sensitive.
func (d *decoder) envName(a *hcl.Attribute, name string) string {
	if d.sensitiveWhole[a] {
		return "a variable (its name is not shown: env is sensitive)"
	}
	return "\"" + name + "\""
}

// mergeEnvs fills every lot's Env: the lot's own over its repository's
// over the defaults block's, per variable; PATH entries the lot's first,
// then the repository's, then the defaults'. A lot's "env" and
// "path_prepend" are sensitive when any of the three is.
func (d *decoder) mergeEnvs() {
	for _, l := range d.cfg.Lots {
		var repo Env
		var repoSens Fields
		if l.Repo != nil {
			repo, repoSens = l.Repo.Env, l.Repo.Sensitive
		}
		l.Env = d.lotEnv[l].over(repo.over(d.defaultsEnv))
		for _, attr := range []string{"env", EnvNames, "path_prepend"} {
			if repoSens.Has(attr) || d.defaultsSensitive.Has(attr) {
				l.Sensitive = l.Sensitive.add(attr)
			}
		}
	}
}

// add returns f with name added (f itself when not nil).
func (f Fields) add(name string) Fields {
	if f == nil {
		f = Fields{}
	}
	f[name] = true
	return f
}

// with returns f with the names of g added (f itself when not nil).
func (f Fields) with(g Fields) Fields {
	for name := range g {
		f = f.add(name)
	}
	return f
}
