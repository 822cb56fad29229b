package spec

import (
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]Bytes{
		"0": 0, "1048576": 1 << 20, "16MiB": 16 << 20, "512KiB": 512 << 10, "1.5GiB": 3 << 29,
		"4MB": 4_000_000, "100B": 100, "2 KiB": 2048, "1_000KB": 1_000_000, "0.5KiB": 512,
	} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "16 MiBs", "-1KiB", "1.3B", "ten", "9999999999999GiB", "1.0000001KiB"} {
		if got, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, got)
		}
	}
}

func TestBytesString(t *testing.T) {
	for b, want := range map[Bytes]string{16 << 20: "16MiB", 1536 << 10: "1536KiB", 100: "100B", 2 << 30: "2GiB", 4_000_000: "4000000B"} {
		if got := b.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(b), got, want)
		}
	}
}

// TestLogLimitPrecedence: a lot's log_limit, else its repo's, else the
// wave's, else DefaultLogLimit.
func TestLogLimitPrecedence(t *testing.T) {
	src := `
wave "w" { log_limit = "8MiB" }
repo "a" {
  path = "."
  log_limit = "2MiB"
}
repo "b" { path = "." }
lot "own" {
  repo = repo.a
  run = "true"
  log_limit = 65536
}
lot "repo" {
  repo = repo.a
  run = "true"
}
lot "wave" { run = "true" }
lot "b" {
  repo = repo.b
  brief = "x"
}
`
	cfg, diags := load(t, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for id, want := range map[string]Bytes{"own": 64 << 10, "repo": 2 << 20, "wave": 8 << 20, "b": 8 << 20} {
		if got := cfg.Lot(id).LogLimit; got != want {
			t.Errorf("lot %s: LogLimit = %s, want %s", id, got, want)
		}
	}
	cfg, diags = load(t, "wave \"w\" {}\nlot \"x\" { run = \"true\" }\n", Options{})
	if diags.HasErrors() || cfg.Lot("x").LogLimit != DefaultLogLimit {
		t.Fatalf("no log_limit: %v, %v; want %s", cfg.Lot("x").LogLimit, diags, DefaultLogLimit)
	}
}

func TestLogLimitErrors(t *testing.T) {
	for src, want := range map[string]string{
		"wave \"w\" {}\nlot \"x\" {\n  run = \"true\"\n  log_limit = \"100B\"\n}\n": `"log_limit" must be at least 1KiB`,
		"wave \"w\" {}\nlot \"x\" {\n  run = \"true\"\n  log_limit = \"lots\"\n}\n": "is not a size",
		"wave \"w\" { log_limit = true }\n":                                         "a size is required",
		"wave \"w\" {}\ndefaults { log_limit = \"1MiB\" }\n":                        "Unsupported argument",
	} {
		_, diags := load(t, src, Options{})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), want) {
			t.Errorf("%s: diags %v, want %q", src, diags, want)
		}
		for _, d := range diags {
			if d.Subject == nil || d.Subject.Filename == "" {
				t.Errorf("%s: a diagnostic without a source range: %v", src, d)
			}
		}
	}
}
