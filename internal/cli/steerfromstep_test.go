package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/slots"
)

// TestSteeringFromAStepRefused is the attack of a step that takes holds
// (every wave on the machine then runs fewer sessions) or steers its wave:
// a process carrying a step's marks, or running below one that does, is
// refused before acting.
func TestSteeringFromAStepRefused(t *testing.T) {
	for name, c := range map[string]struct {
		env      map[string]string
		ancestor bool
	}{
		"marks":    {env: map[string]string{"CADENCE_WAVE_ID": "w-1", "CADENCE_LOT": "b"}},
		"ancestry": {env: map[string]string{}, ancestor: true},
	} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			c.env["CADENCE_HOME"] = home
			old := stepMarkedAncestor
			stepMarkedAncestor = func() (int, bool) { return 4242, c.ancestor }
			t.Cleanup(func() { stepMarkedAncestor = old })
			wave := filepath.Join(home, "wave.hcl")
			if err := os.WriteFile(wave, []byte(`wave "w" {}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []struct {
				run  func(*env, []string) ExitCode
				args []string
			}{
				{runHold, []string{"mine"}},
				{runRelease, []string{"mine"}},
				{runStop, []string{wave}},
				{runDrop, []string{wave, "a"}},
				{runAnswer, []string{wave, "a", "yes"}},
			} {
				e, _, stderr := testEnv(c.env, false)
				if code := cmd.run(e, cmd.args); code != ExitApplyRefused || !strings.Contains(stderr.String(), "steering is the lead's") {
					t.Errorf("%v: exit %d, stderr %s", cmd.args, code, stderr)
				}
			}
			holds, err := slots.Holds(filepath.Join(home, "slots"), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if len(holds) > 0 {
				t.Errorf("a step took holds: %+v", holds)
			}
		})
	}
}
