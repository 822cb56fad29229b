package step_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/steptest"
	"github.com/cadence-run/cadence/internal/state"
)

// BenchmarkCommandStep runs a `true` command lot as a run step, through
// the step supervisor and the guards, without and with the step sandbox
// side by side: the sandbox's cost per step is the difference.
func BenchmarkCommandStep(b *testing.B) {
	for _, c := range []struct {
		name string
		off  bool
	}{{"unsandboxed", true}, {"sandboxed", false}} {
		b.Run(c.name, func(b *testing.B) {
			w := newBoxWave(b)
			req := step.Request{Lot: w.lot("a"), Kind: state.StepRun, Dir: w.wt["a"], Command: "true", Timeout: time.Minute,
				Log: filepath.Join(w.root, "logs", "run.log"), OutsideSandbox: true, NoSandbox: c.off}
			b.ResetTimer()
			for range b.N {
				res, err := w.local.RunStep(context.Background(), req, &steptest.Recorder{})
				if err != nil || res.Status != state.StepOK {
					b.Fatalf("%v %s %s", err, res.Status, res.Cause)
				}
			}
		})
	}
}
