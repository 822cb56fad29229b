package agenttest_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/agenttest"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// shellAdapter is an adapter whose sessions run a shell command and report
// done: it commits, and counts no tokens and keeps no record to recount.
type shellAdapter struct{ script string }

func (shellAdapter) Kind() string                       { return "shell" }
func (shellAdapter) Tool() agent.Tool                   { return agent.Tool{VersionArgs: []string{"--version"}} }
func (shellAdapter) KillLeftovers(sessionID string) int { return 0 }
func (shellAdapter) Recount(string, string, string, []string) (agent.Spent, bool) {
	return agent.Spent{}, false
}

func (a shellAdapter) Run(ctx context.Context, s agent.Session, h agent.Host) agent.Outcome {
	sh, err := exec.LookPath("sh")
	if err != nil {
		return agent.Outcome{Status: state.StepFailed, Cause: err.Error()}
	}
	res, err := proc.Run(ctx, proc.Cmd{Path: sh, Args: []string{"-c", a.script}, Dir: s.Dir, Env: h.Env, Started: s.Started})
	if err != nil || res.ExitCode != 0 {
		return agent.Outcome{Status: state.StepFailed, Cause: "the script failed"}
	}
	return agent.Outcome{Status: state.StepOK, Report: &agent.Report{Status: "done", Summary: "ran " + a.script}}
}

// TestLackTokensOnly: an adapter that commits but counts no tokens
// declares only that it counts none (and has nothing to recount); the
// commit check still runs, and passes on its commit and report.
func TestLackTokensOnly(t *testing.T) {
	ad := shellAdapter{script: "echo c > c.txt && git add c.txt && git commit -q -m 'add c.txt'"}
	agenttest.Run(t, agenttest.Harness{
		Adapter: ad,
		Agent:   &spec.Agent{Name: "shell", Kind: "shell", Command: "sh"},
		Host:    agent.Host{Command: "sh", Env: gittest.Env()},
		Script: func(t *testing.T, b agenttest.Behaviour, s *agent.Session) {
			if b != agenttest.Commit {
				t.Fatalf("the shell adapter cannot play %s", b)
			}
			s.LogPrefix = filepath.Join(t.TempDir(), "log")
		},
		Lacks: map[agenttest.Behaviour]string{
			agenttest.CountTokens: "a shell spends no tokens",
			agenttest.Recount:     "a shell keeps no record of a session",
			agenttest.Ask:         "the report is fixed",
			agenttest.NoReport:    "the report is fixed",
			agenttest.UsageLimit:  "no API",
			agenttest.Overloaded:  "no API",
			agenttest.Hang:        "the script ends",
			agenttest.Chatty:      "the script prints nothing",
			agenttest.WriteFile:   "no permissions to refuse a write",
		},
	})
}
