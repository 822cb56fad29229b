package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestRefusePlanOnly checks that apply refuses plan's own flags in every
// spelling with a hint, and reads a value that starts with "-" as a value.
func TestRefusePlanOnly(t *testing.T) {
	for _, tc := range []struct {
		args []string
		hint string // "" : not refused
	}{
		{[]string{"-offline"}, "-offline is for plan only"},
		{[]string{"--offline=true", "wave.hcl"}, "-offline is for plan only"},
		{[]string{"wave.hcl", "-out", "w.plan"}, "cadence plan -out PLANFILE"},
		{[]string{"-out=w.plan"}, "cadence plan -out PLANFILE"},
		{[]string{"-format", "json"}, "-format is a flag of plan"},
		{[]string{"-auto-approve", "-detailed-exitcode"}, "-detailed-exitcode is a flag of plan"},
		{[]string{"-target", "-offline"}, ""}, // a lot id, the value of -target
		{[]string{"--", "-offline"}, ""},      // a positional argument
		{[]string{"-auto-approve", "wave.hcl"}, ""},
		{[]string{"-jobs=2", "-out"}, "cadence plan -out PLANFILE"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			e := &env{stderr: &stderr, getenv: func(string) string { return "" }}
			f := newPlanFlags(e, "apply", "", "")
			f.Bool("auto-approve", false, "")
			code := refusePlanOnly(e, tc.args, f.isBool)
			if tc.hint == "" {
				if code != -1 {
					t.Fatalf("refused (%d): %s", code, stderr.String())
				}
				return
			}
			if code != ExitUsage {
				t.Fatalf("code %d, want %d (usage error)", code, ExitUsage)
			}
			if !strings.Contains(stderr.String(), tc.hint) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tc.hint)
			}
		})
	}
}
