package spec

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// refCases are ref names with the rule git refuses them by ("" when git
// accepts them).
var refCases = []struct{ ref, rule string }{
	{"cadence/w/a", ""},
	{"cadence/auth-rework/L40", ""},
	{"cadence/w/v1.2", ""},
	{"cadence/w./a", ""}, // only the whole name may not end with '.'
	{"cadence/w/a.b.c", ""},
	{"cadence/w/a@b", ""},
	{"cadence/w/é", ""}, // bytes from 0x80 up are allowed
	{"cadence/w/lock", ""},
	{"cadence/w/a.locked", ""},
	{"cadence/w/a..b", `it contains ".."`},
	{"cadence/w/a.lock", `it ends with ".lock"`},
	{"cadence/w.lock/a", `it ends with ".lock"`},
	{"cadence/w/c.", `it ends with "."`},
	{"cadence/w/.a", `it starts with "."`},
	{"cadence/.w/a", `it starts with "."`},
	{"cadence/w/a b", "it contains a space"},
	{"cadence/w/a\tb", "it contains a control character (byte 0x09)"},
	{"cadence/w/a\x7fb", "it contains a control character (byte 0x7f)"},
	{"cadence/w/a~1", `it contains "~"`},
	{"cadence/w/a^", `it contains "^"`},
	{"cadence/w/a:b", `it contains ":"`},
	{"cadence/w/a?", `it contains "?"`},
	{"cadence/w/a*", `it contains "*"`},
	{"cadence/w/a[1]", `it contains "["`},
	{`cadence/w/a\b`, `it contains "\\"`},
	{"cadence/w/a@{1}", `it contains "@{"`},
	{"cadence//a", `it contains "//"`},
	{"cadence/w/", `it ends with "/"`},
	{"/cadence/w", `it starts with "/"`},
	{"@", `it is "@"`},
	{"cadence", "it has one component only (git wants at least one '/')"},
	{"", "it is empty"},
}

func TestCheckRefName(t *testing.T) {
	for _, tc := range refCases {
		err := CheckRefName(tc.ref)
		var re *RefNameError
		switch {
		case tc.rule == "" && err != nil:
			t.Errorf("%q: %v, want accepted", tc.ref, err)
		case tc.rule != "" && (!errors.As(err, &re) || re.Rule != tc.rule || re.Ref != tc.ref):
			t.Errorf("%q: %v, want %q", tc.ref, err, tc.rule)
		}
	}
}

// TestCheckRefNameAgreesWithGit runs git check-ref-format on the table: the
// Go rules must give git's answer. (spec itself never starts git.)
func TestCheckRefNameAgreesWithGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	for _, tc := range refCases {
		gitOK := exec.Command(git, "check-ref-format", tc.ref).Run() == nil
		if goOK := CheckRefName(tc.ref) == nil; goOK != gitOK {
			t.Errorf("%q: CheckRefName accepts it: %v; git check-ref-format: %v", tc.ref, goOK, gitOK)
		}
	}
}

// TestComponentRulesMatchRef checks that the per-name checks at validate
// (a wave name, a lot id) give what CheckRefName gives for the whole
// branch cadence/<wave>/<lot>.
func TestComponentRulesMatchRef(t *testing.T) {
	names := []string{"a", "a..b", "a.lock", "c.", ".a", "a b", "a@{", "a@", "v1.2", "x.", "w~", "é"}
	for _, n := range names {
		asWave := refComponentRule(n, false) == ""
		if whole := CheckRefName("cadence/"+n+"/lot") == nil; asWave != whole {
			t.Errorf("wave %q: component check %v, whole ref %v", n, asWave, whole)
		}
		asLot := refComponentRule(n, true) == ""
		if whole := CheckRefName("cadence/w/"+n) == nil; asLot != whole {
			t.Errorf("lot %q: component check %v, whole ref %v", n, asLot, whole)
		}
	}
}

// TestNameDiagnostics: names git or the file system cannot use are errors at
// validate, on the block's label, with the rule in the detail.
func TestNameDiagnostics(t *testing.T) {
	long := "L" + strings.Repeat("x", 299)
	atMax := "L" + strings.Repeat("x", NameMax-NameReserve-1)
	for _, tc := range []struct {
		name, src, summary, detail string
		line, col                  int // of the subject's start
	}{
		{"two dots", "wave \"w\" {}\nlot \"a..b\" {\n  run = \"true\"\n}\n", "Invalid lot id", `cadence/w/a..b, which git refuses: the lot id contains ".."`, 2, 5},
		{"lock", "wave \"w\" {}\nlot \"a.lock\" {\n  run = \"true\"\n}\n", "Invalid lot id", `the lot id ends with ".lock" (the rules of git check-ref-format)`, 2, 5},
		{"trailing dot", "wave \"w\" {}\nlot \"c.\" {\n  run = \"true\"\n}\n", "Invalid lot id", `ends with "."`, 2, 5},
		{"too long", "wave \"w\" {}\nlot \"" + long + "\" {\n  run = \"true\"\n}\n", "Lot id too long", "is 300 bytes", 2, 5},
		{"one byte too long", "wave \"w\" {}\nlot \"" + atMax + "x\" {\n  run = \"true\"\n}\n", "Lot id too long", "use at most 243", 2, 5},
		// the guard's entry of a lot worktree, <id>.config, with git's number
		{"249 bytes", "wave \"w\" {}\nlot \"" + strings.Repeat("l", 249) + "\" {\n  run = \"true\"\n}\n", "Lot id too long", "<id>.config", 2, 5},
		{"250 bytes", "wave \"w\" {}\nlot \"" + strings.Repeat("l", 250) + "\" {\n  run = \"true\"\n}\n", "Lot id too long", "use at most 243", 2, 5},
		{"wave two dots", "wave \"w..x\" {}\n", "Invalid wave name", `cadence/w..x/<lot>, which git refuses: the wave name contains ".."`, 1, 6},
		{"wave lock", "wave \"w.lock\" {}\n", "Invalid wave name", `ends with ".lock"`, 1, 6},
		{"wave too long", "wave \"" + long + "\" {}\n", "Wave name too long", "is 300 bytes", 1, 6},
		{"neighbour worktree too long", "wave \"w\" {}\nrepo \"a\" { path = \".\" }\nrepo \"" + strings.Repeat("r", 200) + "\" { path = \".\" }\n" +
			"lot \"" + strings.Repeat("l", 60) + "\" {\n  repo = repo.a\n  brief = \"x\"\n  also = [repo." + strings.Repeat("r", 200) + "]\n}\n",
			"Worktree name too long", "which is 261 bytes", 7, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := load(t, tc.src, Options{})
			d := findDiag(diags, tc.summary)
			if d == nil {
				t.Fatalf("no %q diagnostic; got: %v", tc.summary, diags)
			}
			if d.Severity != hcl.DiagError || !strings.Contains(d.Detail, tc.detail) {
				t.Errorf("severity %v detail %q, want an error with %q", d.Severity, d.Detail, tc.detail)
			}
			if d.Subject == nil || d.Subject.Start.Line != tc.line || d.Subject.Start.Column != tc.col {
				t.Errorf("subject %v, want line %d column %d", d.Subject, tc.line, tc.col)
			}
		})
	}
}

// TestNamesAccepted: names at the limits and names git accepts load
// without a diagnostic.
func TestNamesAccepted(t *testing.T) {
	atMax := "L" + strings.Repeat("x", NameMax-NameReserve-1)
	src := "wave \"w.\" {}\nlot \"" + atMax + "\" {\n  run = \"true\"\n}\nlot \"v1.2\" {\n  run = \"true\"\n}\nlot \"a.locked\" {\n  run = \"true\"\n}\n"
	cfg, diags := load(t, src, Options{})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if len(cfg.Lots) != 3 || cfg.Wave.Name != "w." {
		t.Errorf("cfg = %+v", cfg)
	}
}

// TestNamesDifferingInCase: lot ids or repo names that differ only in case
// are a warning (not an error) on the second label, naming the first.
func TestNamesDifferingInCase(t *testing.T) {
	src := "wave \"w\" {}\nrepo \"Api\" { path = \".\" }\nrepo \"api\" { path = \".\" }\n" +
		"lot \"Foo\" {\n  run = \"true\"\n}\nlot \"foo\" {\n  run = \"true\"\n}\nlot \"bar\" {\n  run = \"true\"\n}\n"
	cfg, diags := load(t, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(cfg.Lots) != 3 || len(cfg.Repos) != 2 {
		t.Fatalf("lots %d repos %d", len(cfg.Lots), len(cfg.Repos))
	}
	for _, tc := range []struct {
		summary, detail string
		line            int
	}{
		{"Lot ids that differ only in case", `"foo" and "Foo" (declared at `, 7},
		{"Repo names that differ only in case", `"api" and "Api" (declared at `, 3},
	} {
		d := findDiag(diags, tc.summary)
		if d == nil {
			t.Errorf("no %q warning: %v", tc.summary, diags)
			continue
		}
		if d.Severity != hcl.DiagWarning || !strings.Contains(d.Detail, tc.detail) || !strings.Contains(d.Detail, "ignores case") {
			t.Errorf("%s: severity %v detail %q", tc.summary, d.Severity, d.Detail)
		}
		if d.Subject == nil || d.Subject.Start.Line != tc.line {
			t.Errorf("%s: subject %v, want line %d", tc.summary, d.Subject, tc.line)
		}
	}
	if len(diags) != 2 {
		t.Errorf("want 2 warnings, got %v", diags)
	}
}

func findDiag(diags hcl.Diagnostics, summary string) *hcl.Diagnostic {
	for _, d := range diags {
		if d.Summary == summary {
			return d
		}
	}
	return nil
}

// TestIsIDIsIDPattern: isID, the lot id check, says what IDPattern says.
func TestIsIDIsIDPattern(t *testing.T) {
	for _, s := range []string{"", "a", "A1", "a_b.c-d", "1a", "_a", ".a", "-a", "a b", "a/b", "é", "aé", "a\n", "Zz9", "a..b", "a@{"} {
		if got, want := isID(s), IDPattern.MatchString(s); got != want {
			t.Errorf("isID(%q) = %v, IDPattern says %v", s, got, want)
		}
	}
}
