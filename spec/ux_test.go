package spec

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUXBlock: a repo's ux block is its visible lots'; a lot's own
// replaces it whole; ux = false skips the review; the timeout defaults.
func TestUXBlock(t *testing.T) {
	src := `wave "w" {}
repo "web" {
  path = "."
  ux {
    command = "node server.js"
    url     = "http://127.0.0.1:8080/"
  }
}
lot "a" {
  repo    = repo.web
  brief   = "x"
  visible = true
}
lot "b" {
  repo    = repo.web
  brief   = "x"
  visible = true
  ux {
    url     = "https://127.0.0.1:9000/app"
    timeout = "2m"
    paths   = ["/settings", "/"]
  }
}
lot "c" {
  repo    = repo.web
  brief   = "x"
  visible = true
  ux      = false
}
lot "d" {
  repo  = repo.web
  brief = "x"
}
`
	cfg, diags := load(t, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	a, b, c, d := cfg.Lot("a"), cfg.Lot("b"), cfg.Lot("c"), cfg.Lot("d")
	if a.UX == nil || a.UX.Command != "node server.js" || a.UX.URL != "http://127.0.0.1:8080/" || a.UX.Timeout != DefaultUXTimeout || !a.UXReview() {
		t.Errorf("lot a: %+v, review %v", a.UX, a.UXReview())
	}
	if b.UX == nil || b.UX.Command != "" || b.UX.Timeout != 2*time.Minute || !slices.Equal(b.UX.Paths, []string{"/settings", "/"}) || !b.UXReview() {
		t.Errorf("lot b: %+v", b.UX)
	}
	if !c.Visible || !c.NoUX || c.UXReview() {
		t.Errorf("lot c: visible %v no ux %v review %v", c.Visible, c.NoUX, c.UXReview())
	}
	if d.UXReview() {
		t.Error("lot d is not visible, yet reviewed")
	}
}

// TestUXBlockJSON: the JSON syntax spells the block as an object, and
// ux = false as a boolean.
func TestUXBlockJSON(t *testing.T) {
	src := `{"wave": {"w": {}}, "repo": {"web": {"path": "."}},
"lot": {"a": {"repo": "repo.web", "brief": "x", "visible": true, "ux": {"url": "http://127.0.0.1:1/", "paths": ["/x"]}},
        "b": {"repo": "repo.web", "brief": "x", "visible": true, "ux": false}}}`
	cfg, diags := NewLoader().LoadBytes([]byte(src), t.TempDir()+"/wave.hcl.json", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if a := cfg.Lot("a"); a.UX == nil || a.UX.URL != "http://127.0.0.1:1/" || !a.UXReview() {
		t.Errorf("lot a: %+v", a.UX)
	}
	if b := cfg.Lot("b"); !b.NoUX || b.UXReview() {
		t.Errorf("lot b: %+v", b)
	}
}

// TestUXDiagnostics: each error of a ux block or of visible points at its
// line.
func TestUXDiagnostics(t *testing.T) {
	lot := func(body string) string {
		return head + "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n" + body + "}\n"
	}
	for _, tc := range []struct {
		name, src, summary, detail string
		line                       int
	}{
		{"visible without ux", lot("  visible = true\n"), "No ux block for a visible lot", "ux block", 10},
		{"url not http", lot("  visible = true\n  ux {\n    url = \"ftp://x/\"\n  }\n"), "Invalid ux url", "http://", 12},
		{"url missing", lot("  visible = true\n  ux {\n    command = \"true\"\n  }\n"), "Missing required argument", `"url" is required`, 11},
		{"negative timeout", lot("  visible = true\n  ux {\n    url = \"http://127.0.0.1:1/\"\n    timeout = \"-5s\"\n  }\n"), "Invalid duration", "negative", 13},
		{"zero timeout", lot("  visible = true\n  ux {\n    url = \"http://127.0.0.1:1/\"\n    timeout = \"0\"\n  }\n"), "Invalid ux timeout", "at least", 13},
		{"path not absolute", lot("  visible = true\n  ux {\n    url = \"http://127.0.0.1:1/\"\n    paths = [\"settings\"]\n  }\n"), "Invalid ux path", `"/"`, 13},
		{"two ux blocks", lot("  ux {\n    url = \"http://127.0.0.1:1/\"\n  }\n  ux {\n    url = \"http://127.0.0.1:1/\"\n  }\n"), "Duplicate ux block", "one ux block", 13},
		{"command lot visible", head + "lot \"a\" {\n  run = \"true\"\n  visible = true\n}\n", "Not for a command lot", "agent lots only", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := load(t, tc.src, Options{})
			for _, d := range diags {
				if d.Summary != tc.summary {
					continue
				}
				if !strings.Contains(d.Detail, tc.detail) {
					t.Errorf("detail %q does not contain %q", d.Detail, tc.detail)
				}
				if d.Subject == nil || d.Subject.Start.Line != tc.line {
					t.Errorf("subject %v, want line %d", d.Subject, tc.line)
				}
				return
			}
			t.Errorf("no %q diagnostic; got: %v", tc.summary, diags)
		})
	}
}
