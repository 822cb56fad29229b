package cli

import (
	"strings"
	"testing"
)

func TestIsWaveFile(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"wave.hcl", `wave "w" {}`, true},
		{"lots.hcl", `lot "a" { run = "true" }`, true}, // a wave file missing its wave block: an error, not skipped
		{"broken.hcl", `wave "w" {`, true},             // not valid HCL: an error, not skipped
		{".terraform.lock.hcl", `provider "registry.terraform.io/hashicorp/aws" { version = "5.0.0" }`, false},
		{"job.nomad.hcl", "job \"web\" {\n  group \"g\" {}\n}", false},
		{"main.pkr.hcl", "variable \"x\" {}\nlocals { a = 1 }\nbuild { sources = [] }", false},
		{"wave.vars.hcl", `model = "opus"`, false},
		{"empty.hcl", ``, false},
		{"wave.hcl.json", `{"wave": {"w": {}}}`, true},
		{"lots.hcl.json", `{"lot": {"a": {"run": "true"}}}`, true},
		{"vars.hcl.json", `{"variable": {"x": {}}}`, false},
		{"broken.hcl.json", `{"wave": `, true},
	} {
		got, why := isWaveFile(c.name, []byte(c.src))
		if got != c.want {
			t.Errorf("isWaveFile(%s): got %v, want %v", c.name, got, c.want)
		}
		if !got && !strings.HasPrefix(why, "not a wave file (") {
			t.Errorf("isWaveFile(%s): reason %q", c.name, why)
		}
	}
}

func TestCodeFence(t *testing.T) {
	got := codeFence("a ``` b ```` c\n\x1b[31mred\tx\x07")
	want := "`````text\na ``` b ```` c\n␛[31mred\tx␇\n`````\n"
	if got != want {
		t.Errorf("codeFence: got %q, want %q", got, want)
	}
	if got := codeFence("plain"); got != "```text\nplain\n```\n" {
		t.Errorf("codeFence: got %q", got)
	}
	if got, want := mdText("x@y <b>|`\n"), "x@&#8203;y &lt;b&gt;\\|\\`␊"; got != want {
		t.Errorf("mdText: got %q, want %q", got, want)
	}
}
