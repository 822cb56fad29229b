package spec

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const executorLots = `
repo "r" {
  path = "."
}
lot "a" {
  repo = repo.r
  run  = "true"
}
`

// TestExecutorBlock: an executor "nats" block decodes into Config.Executor
// with its defaults (both classes remote, DefaultLease); without the block
// Executor is nil (every step local); credentials from env() is accepted
// and marked sensitive, a relative path is made absolute.
func TestExecutorBlock(t *testing.T) {
	cfg, diags := load(t, `wave "w" {}`+executorLots, Options{})
	if diags.HasErrors() || cfg.Executor != nil {
		t.Fatalf("no block: %v, executor %+v", diags, cfg.Executor)
	}
	if cfg.Executor.Remotes(RemoteSessions) {
		t.Error("a nil executor runs sessions remotely")
	}
	cfg, diags = load(t, `wave "w" {}
executor "nats" {
  url   = "nats://127.0.0.1:4222"
  queue = "team"
}`+executorLots, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	x := cfg.Executor
	if x == nil || x.Kind != "nats" || x.URL != "nats://127.0.0.1:4222" || x.Queue != "team" || x.Lease != DefaultLease ||
		!slices.Equal(x.Remote, []string{"sessions", "tests"}) || x.Credentials != "" || !x.Loopback() {
		t.Fatalf("executor = %+v", x)
	}
	cfg, diags = load(t, `wave "w" {}
executor "nats" {
  url         = "tls://engine.example:4222"
  queue       = "team-2"
  credentials = env("NATS_CREDS")
  remote      = ["tests"]
  lease       = "1m"
}`+executorLots, Options{LookupEnv: func(n string) (string, bool) { return "/etc/nats/worker.creds", n == "NATS_CREDS" }})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	x = cfg.Executor
	if x.Credentials != "/etc/nats/worker.creds" || !x.Sensitive.Has("credentials") || x.Lease != time.Minute ||
		!x.Remotes(RemoteTests) || x.Remotes(RemoteSessions) || x.Loopback() {
		t.Fatalf("executor = %+v", x)
	}
	cfg, diags = load(t, `wave "w" {}
executor "nats" {
  url         = "nats://localhost:4222"
  queue       = "q"
  credentials = "creds/lead.creds"
}`+executorLots, Options{})
	if diags.HasErrors() || !strings.HasSuffix(cfg.Executor.Credentials, "/creds/lead.creds") || !strings.HasPrefix(cfg.Executor.Credentials, "/") {
		t.Fatalf("%v: credentials %q", diags, cfg.Executor.Credentials)
	}
}

// TestExecutorBlockErrors: each bad executor block is one error at the
// attribute's line (4: the attribute under test), saying why.
func TestExecutorBlockErrors(t *testing.T) {
	for _, c := range []struct{ name, attr, want string }{
		{"integration", `remote = ["sessions", "integration"]`, "Integration never leaves the machine"},
		{"unknown class", `remote = ["sesions"]`, `Did you mean "sessions"`},
		{"inline creds", `credentials = "-----BEGIN NATS USER JWT-----"`, "Secret in the wave file"},
		{"inline seed", `credentials = "SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTAM"`, "Secret in the wave file"},
		{"jwt", `credentials = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiJ"`, "Secret in the wave file"},
		{"password in url", `url = "nats://lead:hunter2@127.0.0.1:4222"`, "Secret in the wave file"},
		{"scheme", `url = "http://127.0.0.1:4222"`, "scheme must be nats:// or tls://"},
		{"queue name", `queue = "team.a"`, "Invalid queue name"},
		{"short lease", `lease = "1s"`, "lease must be at least"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := map[string]string{"url": `url = "nats://127.0.0.1:4222"`, "queue": `queue = "team"`}
			lines[strings.Fields(c.attr)[0]] = c.attr
			src := "wave \"w\" {}\nexecutor \"nats\" {\n  " + lines["url"] + "\n  " + lines["queue"] + "\n"
			if _, ok := map[string]bool{"url": true, "queue": true}[strings.Fields(c.attr)[0]]; !ok {
				src += "  " + c.attr + "\n"
			}
			src += "}" + executorLots
			_, diags := load(t, src, Options{})
			if !diags.HasErrors() || !strings.Contains(diags.Error(), c.want) {
				t.Fatalf("%s\n→ %v, want %q", src, diags, c.want)
			}
			if s := diags[0].Subject; s == nil || s.Start.Line < 3 || s.Start.Line > 5 || !strings.HasSuffix(s.Filename, "wave.hcl") {
				t.Errorf("error at %v, want the block's attribute in wave.hcl", s)
			}
		})
	}
	_, diags := load(t, "wave \"w\" {}\nexecutor \"k8s\" {\n}\n"+executorLots, Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `executor "k8s" is not known`) || diags[0].Subject.Start.Line != 2 {
		t.Errorf("unknown executor: %v", diags)
	}
	_, diags = load(t, "wave \"w\" {}\nexecutor \"nats\" {\n  url = \"nats://127.0.0.1:1\"\n  queue = \"q\"\n}\nexecutor \"nats\" {\n  url = \"nats://127.0.0.1:1\"\n  queue = \"q\"\n}\n"+executorLots, Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Duplicate executor block") || diags[0].Subject.Start.Line != 6 {
		t.Errorf("two blocks: %v", diags)
	}
}
