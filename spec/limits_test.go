package spec

import (
	"strings"
	"testing"
	"time"
)

// TestStepTimeouts: a command lot and a test gate get a 30m timeout
// unless they set one; "0" written means none, for every timeout.
func TestStepTimeouts(t *testing.T) {
	cfg, diags := load(t, `wave "w" {}
repo "r" {
  path = "."
}
repo "slow" {
  path         = "."
  test_timeout = "0"
}
repo "quick" {
  path         = "."
  test_timeout = "2m"
}
lot "cmd" {
  repo = repo.r
  run  = "true"
}
lot "forever" {
  run     = "true"
  timeout = "0"
}
lot "agent" {
  repo           = repo.r
  brief          = "x"
  review_timeout = "0s"
}
`, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, c := range []struct {
		what      string
		got, want time.Duration
	}{
		{"command lot, none written", cfg.Lot("cmd").Timeout, DefaultCommandTimeout},
		{`command lot, timeout = "0"`, cfg.Lot("forever").Timeout, 0},
		{"agent lot", cfg.Lot("agent").Timeout, DefaultTimeout},
		{`agent lot, review_timeout = "0s"`, cfg.Lot("agent").ReviewTimeout, 0},
		{"test gate, none written", cfg.Repo("r").TestTimeout, DefaultTestTimeout},
		{`test gate, test_timeout = "0"`, cfg.Repo("slow").TestTimeout, 0},
		{`test gate, test_timeout = "2m"`, cfg.Repo("quick").TestTimeout, 2 * time.Minute},
	} {
		if c.got != c.want {
			t.Errorf("%s: timeout %v, want %v", c.what, c.got, c.want)
		}
	}
	_, diags = load(t, `wave "w" {}
lot "a" {
  run     = "true"
  timeout = "-5m"
}
`, Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `"0" for no timeout`) {
		t.Errorf("a negative timeout: %v", diags)
	}
}

// TestLimitsPrecedence: a lot's limits are its own over its repo's over
// the defaults block's, per limit, for agent and command lots.
func TestLimitsPrecedence(t *testing.T) {
	cfg, diags := load(t, `wave "w" {}
defaults {
  limits = { memory = "2GiB", processes = 512, cpu_time = "10m" }
}
repo "r" {
  path   = "."
  limits = { processes = 64, open_files = 1024 }
}
lot "a" {
  repo   = repo.r
  brief  = "x"
  limits = { memory = "1.5GiB", file_size = "100MB" }
}
lot "none" {
  run = "true"
}
`, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := Limits{Memory: 3 << 29, Processes: 64, OpenFiles: 1024, FileSize: 100e6, CPUTime: 10 * time.Minute}
	if got := cfg.Lot("a").Limits; got != want {
		t.Errorf("lot a: limits %+v, want %+v", got, want)
	}
	want = Limits{Memory: 2 << 30, Processes: 512, CPUTime: 10 * time.Minute}
	if got := cfg.Lot("none").Limits; got != want {
		t.Errorf("lot none: limits %+v, want %+v", got, want)
	}
	if got := cfg.Lot("a").Limits.String(); got != `memory = "1536MiB", processes = 64, open_files = 1024, file_size = "100000000B", cpu_time = "10m"` {
		t.Errorf("String() = %s", got)
	}
}

// TestLimitsErrors: a bad limit is an error at the attribute, naming the
// limit and what it takes.
func TestLimitsErrors(t *testing.T) {
	for _, c := range []struct{ limits, want string }{
		{`{ memory = 64 }`, "memory takes a string with a unit"},
		{`{ memory = "64" }`, `"64" is not a size`},
		{`{ memory = "64XB" }`, `"64XB" is not a size`},
		{`{ processes = 0 }`, "processes must be from 1"},
		{`{ processes = 1.5 }`, "processes takes a whole number"},
		{`{ open_files = 8 }`, "open_files must be from 16"},
		{`{ cpu_time = "10" }`, "cpu_time must be a duration of at least 1s"},
		{`{ cpu_time = "10ms" }`, "cpu_time must be a duration of at least 1s"},
		{`{ threads = 4 }`, `unknown limit "threads"`},
		{`{ memory = null }`, "memory is null"},
		{`"2GiB"`, "an object like"},
	} {
		_, diags := load(t, `wave "w" {}
lot "a" {
  run    = "true"
  limits = `+c.limits+`
}
`, Options{})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), c.want) || !strings.Contains(diags.Error(), "wave.hcl:4") {
			t.Errorf("limits = %s: %v; want an error at line 4 saying %q", c.limits, diags, c.want)
		}
	}
}

// TestLimitSize reads limit sizes in binary and decimal units, the unit
// written.
func TestLimitSize(t *testing.T) {
	for s, want := range map[string]int64{"64MiB": 64 << 20, "1.5GiB": 3 << 29, "500MB": 500e6, "1B": 1, " 2KiB ": 2048, "1TiB": 1 << 40} {
		if got, err := limitSize(s); err != nil || got != want {
			t.Errorf("limitSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "64", "MiB", "-1MiB", "0B", "1 mib", "1e3MB", "0.1B"} {
		if n, err := limitSize(s); err == nil {
			t.Errorf("limitSize(%q) = %d, want an error", s, n)
		}
	}
	if FormatBytes(64<<20) != "64MiB" || FormatBytes(1000) != "1000B" {
		t.Errorf("FormatBytes: %s %s", FormatBytes(64<<20), FormatBytes(1000))
	}
}
