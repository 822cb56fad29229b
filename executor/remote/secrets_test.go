package remote

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// TestWorkerGateCannotReadWorkerSecrets: a test gate on a worker (a
// command step, in the step sandbox) prints the worker's credentials
// file, another run's clone and the base cache, all in the worker's HOME
// (which the box shows read-only), and fails: none of them reaches the
// step's output tail, which the lead records; the gate still runs in its own clone.
func TestWorkerGateCannotReadWorkerSecrets(t *testing.T) {
	if _, missing := new(box.Prober).Probe(context.Background(), os.Getenv("PATH")); missing != "" {
		t.Skipf("no step sandbox here: %s", missing)
	}
	f := newFixture(t, `"tests"`)
	home := t.TempDir()
	cache := filepath.Join(home, "worker")
	seed := filepath.Join(home, "worker-team.nk")
	other := filepath.Join(cache, "runs", "other.run", "secret.txt")
	base := filepath.Join(cache, "bases", "pack.txt")
	for file, body := range map[string]string{seed: "SUSEEDSECRET\n", other: "OTHERRUNSECRET\n", base: "BASECACHESECRET\n"} {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.serve(t, Handler(WorkerOptions{Queue: f.q, Transport: f.tr, Dir: cache, Poll: 50 * time.Millisecond,
		DenyRead: []string{seed},
		Load: func(path string) (*spec.Config, error) {
			cfg, diags := spec.NewLoader().LoadFile(path, spec.Options{})
			if diags.HasErrors() {
				return nil, diags
			}
			return cfg, nil
		},
		NewLocal: func(cfg *spec.Config, denyRead []string) step.Runner {
			return step.NewLocal(step.LocalOptions{Config: cfg, Git: gitint.NewRepos(gittest.Env()), Agent: commitAgent{},
				Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, Home: t.TempDir(), DenyRead: denyRead})
		}}))
	gate := request(f, state.StepTest)
	gate.Command = "cat " + seed + " " + other + " " + base + " 2>&1; test -f README.md && echo own-clone-ok; exit 1" // a red gate: its output tail is recorded
	res, err := f.r.RunStep(ctx(t), gate, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"SUSEEDSECRET", "OTHERRUNSECRET", "BASECACHESECRET"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("a test gate on the worker read %s: output %q", secret, res.Output)
		}
	}
	if res.Status != state.StepFailed || !strings.Contains(res.Output, "own-clone-ok") {
		t.Errorf("the gate did not run in its own clone: %s, output %q", res.Status, res.Output)
	}
}
