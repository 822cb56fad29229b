package step_test

import (
	"os"
	"testing"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/steptest"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestLocalConformance runs the step runners' conformance suite against
// the local runner, with real git and the suite's brief-following agent,
// its command steps in the step sandbox under the step supervisor.
func TestLocalConformance(t *testing.T) {
	steptest.Run(t, func(t *testing.T, w steptest.Wave) step.Runner {
		return step.NewLocal(step.LocalOptions{Config: w.Config, Git: gitint.NewRepos(gittest.Env()), Agent: steptest.BriefAgent{},
			Env: []string{"PATH=" + os.Getenv("PATH")}, Supervisor: supervisor(t)})
	})
}
