package spec

import (
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// ExecutorNATS is the one label an executor block takes: steps run on
// remote workers through a NATS JetStream engine (docs/remote.md).
const ExecutorNATS = "nats"

// What an executor block's remote list may name: the step classes that
// may leave the lead's machine (internal/state/kinds.go classes the kinds).
const (
	RemoteSessions = "sessions" // agent sessions (state.KindInfo.RunsAgent)
	RemoteTests    = "tests"    // test gates (state.StepTest)
)

// DefaultLease is an executor's lease when the block sets none: how long a
// worker holds a step without extending it before the engine hands the
// step to another worker. MinLease is the shortest one accepted.
const (
	DefaultLease = 30 * time.Second
	MinLease     = 2 * time.Second
)

// Executor is the wave's executor block: where its steps run. Nil in
// Config when the block is absent: every step runs on this machine.
type Executor struct {
	// Kind is the block's label: ExecutorNATS.
	Kind string
	// URL is the engine's address, nats:// or tls://.
	URL string
	// Credentials is the path of the NATS credentials file ("" for
	// none), absolute; its value may come from env() (Sensitive).
	Credentials string
	// Queue names the engine's work queue the steps are submitted to.
	Queue string
	// Remote are the step classes that leave the machine (RemoteSessions,
	// RemoteTests), in the order written; integration never does.
	Remote []string
	// Lease is how long a worker holds a step without extending it.
	Lease time.Duration
	// Sensitive names the block's attributes whose values derive from a
	// sensitive value ("url", "credentials"): a plan shows them Redacted.
	Sensitive Fields
	// DeclRange is the range of the block header.
	DeclRange hcl.Range
}

// Remotes reports whether steps of the class (RemoteSessions,
// RemoteTests) run remotely; false on a nil Executor.
func (e *Executor) Remotes(class string) bool {
	if e == nil {
		return false
	}
	for _, r := range e.Remote {
		if r == class {
			return true
		}
	}
	return false
}

// Loopback reports whether the URL's host is a loopback address or
// "localhost": a nats:// URL elsewhere sends source code in clear.
func (e *Executor) Loopback() bool {
	u, err := url.Parse(e.URL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

var executorSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "url", Required: true}, {Name: "credentials"}, {Name: "queue", Required: true}, {Name: "remote"}, {Name: "lease"},
}}

// queuePattern is a queue's name: it names a JetStream stream, a consumer
// and KV buckets, which take no '.', '*', '>', spaces or path separators.
var queuePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// secretLooking match values that are a secret themselves rather than the
// path of a file holding one: a NATS credentials file's armour, a PEM
// block, an nkey seed (S + a role letter + base32), a JWT.
var secretLooking = []*regexp.Regexp{
	regexp.MustCompile(`-----BEGIN `),
	regexp.MustCompile(`^S[A-Z][A-Z2-7]{50,}$`),
	regexp.MustCompile(`^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`),
	regexp.MustCompile(`[\r\n]`),
}

func (d *decoder) decodeExecutors(blocks hcl.Blocks) {
	for i, b := range blocks {
		if i > 0 {
			d.errorf(b.DefRange, "Duplicate executor block", "A wave file has at most one executor block; the first is at %s.", blocks[0].DefRange)
			continue
		}
		if b.Labels[0] != ExecutorNATS {
			d.errorf(b.LabelRanges[0], "Unknown executor", "The executor %q is not known: the one executor is %q (steps on remote workers through a NATS JetStream engine, docs/remote.md). Without an executor block, steps run on this machine.", b.Labels[0], ExecutorNATS)
			continue
		}
		d.cfg.Executor = d.decodeExecutor(b)
	}
}

func (d *decoder) decodeExecutor(b *hcl.Block) *Executor {
	c, diags := b.Body.Content(executorSchema)
	d.values.diags = append(d.values.diags, diags...)
	x := &Executor{Kind: b.Labels[0], Remote: []string{RemoteSessions, RemoteTests}, Lease: DefaultLease, DeclRange: b.DefRange}
	if a := c.Attributes["url"]; a != nil {
		if s, ok := d.str(a); ok {
			x.URL = s
			d.checkEngineURL(a, s)
		}
	}
	if a := c.Attributes["credentials"]; a != nil {
		if s, ok := d.str(a); ok {
			switch {
			case s == "":
				d.errorf(a.Expr.Range(), "Invalid credentials", "credentials is the path of a NATS credentials file, or env(\"NAME\") of a variable holding that path; remove the attribute for none.")
			case looksSecret(s) && !d.sensitive[a]:
				d.errorf(a.Expr.Range(), "Secret in the wave file", "credentials looks like a secret itself (a credentials file's content, an nkey seed or a JWT): a wave file is committed and shown by plan. Give the path of the credentials file, or env(\"NAME\") of a variable holding that path.")
			case looksSecret(s):
				d.errorf(a.Expr.Range(), "Invalid credentials", "credentials comes from a sensitive value that holds a secret itself, not a path: give the path of the credentials file (env(\"NAME\") of a variable holding that path).")
			default:
				x.Credentials = d.abs(s)
			}
		}
	}
	if a := c.Attributes["queue"]; a != nil {
		if s, ok := d.str(a); ok {
			if !queuePattern.MatchString(s) {
				d.invalid(a, "Invalid queue name", "%q cannot name a JetStream queue: use letters, digits, '_' and '-', starting with a letter, at most 64 bytes.", s)
			}
			x.Queue = s
		}
	}
	if a := c.Attributes["remote"]; a != nil {
		if list, ok := d.strList(a); ok {
			x.Remote = d.remoteClasses(a, list)
		}
	}
	if dur, ok := d.duration(c.Attributes["lease"]); ok {
		if dur < MinLease {
			d.errorf(c.Attributes["lease"].Expr.Range(), "Invalid lease", "lease must be at least %s: a worker extends its lease a few times within one.", MinLease)
		}
		x.Lease = dur
	}
	x.Sensitive = d.fields(c.Attributes, nil)
	return x
}

// remoteClasses checks the remote list: only RemoteSessions and
// RemoteTests, each once; integration stays on the lead's machine.
func (d *decoder) remoteClasses(a *hcl.Attribute, list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		switch s {
		case RemoteSessions, RemoteTests:
			if seen[s] {
				d.errorf(a.Expr.Range(), "Duplicate remote class", "remote names %q twice.", s)
				continue
			}
			seen[s] = true
			out = append(out, s)
		case "integration", "integrate", "merge", "merge_queue":
			d.errorf(a.Expr.Range(), "Integration never leaves the machine", "remote cannot name %q: integration (rebase, the base's test gate on the rebased tree, the fast-forward of the base) runs on the lead's machine, where the repositories are, so that agent work reaches the base only through the lead's merge queue. remote takes %q and %q.", s, RemoteSessions, RemoteTests)
		default:
			detail := "remote takes " + quoteList([]string{RemoteSessions, RemoteTests}) + "; got " + `"` + s + `".`
			if sug := Suggest(s, []string{RemoteSessions, RemoteTests}); sug != "" {
				detail += ` Did you mean "` + sug + `"?`
			}
			d.errorf(a.Expr.Range(), "Invalid remote class", "%s", detail)
		}
	}
	return out
}

// checkEngineURL reports a URL that is not nats:// or tls:// with a host,
// or that carries a user or password (secrets go in the credentials file).
func (d *decoder) checkEngineURL(a *hcl.Attribute, s string) {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || u.Hostname() == "":
		d.invalid(a, "Invalid engine URL", "%q is not an engine URL: write nats://HOST:PORT, or tls://HOST:PORT for an engine on another machine.", s)
	case u.Scheme != "nats" && u.Scheme != "tls":
		d.invalid(a, "Invalid engine URL", "%q: the scheme must be nats:// or tls://, got %q.", s, u.Scheme+"://")
	case u.User != nil:
		d.errorf(a.Expr.Range(), "Secret in the wave file", "The engine URL carries a user or a password: a wave file is committed and shown by plan. Put them in a NATS credentials file and name it with credentials.")
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "":
		d.invalid(a, "Invalid engine URL", "%q: an engine URL is a scheme, a host and a port, nothing after.", s)
	}
}

func looksSecret(s string) bool {
	for _, re := range secretLooking {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
