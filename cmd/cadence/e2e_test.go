//go:build unix

package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/claude"
	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// TestE2E runs `cadence apply` end to end: real wave files, throwaway git
// repositories, the real Claude Code CLI (see fakeapi.FindCLI; skipped
// without it, failing with CI=true) against the scripted fake API. Every
// brief template of these waves starts with a marker naming the fake
// script of its step, like "a-implement0", "a-review0", "a-fix1" (see
// newE2E). The scenarios are independent and run in parallel.
func TestE2E(t *testing.T) {
	fakeapi.FindCLI(t)
	if bad := refusedSchemas(t); bad != "" {
		t.Fatal("the CLI refuses the report schema cadence passes with --json-schema: " + bad)
	}
	for _, sc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"a-conform", e2eConform},
		{"b-fix-pass", e2eFixPass},
		{"c-fix-passes-exhausted", e2eFixPassesExhausted},
		{"d-question", e2eQuestion},
		{"e-quota-suspend", e2eQuotaSuspend},
		{"e-quota-wait", e2eQuotaWait},
		{"f-format-retry", e2eFormatRetry},
		{"g-hanging-tool", e2eHangingTool},
		{"h-budget", e2eBudget},
		{"i-sigint", e2eSigint},
		{"j-review-edits", e2eReviewEdits},
		{"k-push", e2ePush},
		{"k-push-incident", e2ePushIncident},
		{"l-answer-live", e2eAnswerLive},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t)
		})
	}
}

// refusedSchemas runs the CLI once per step kind that runs a session (the
// step-kind table), with that kind's report schema and the arguments
// cadence gives a session (claude.Args), and returns what the CLI said
// when it refused a schema ("" when it took all of them).
func refusedSchemas(t *testing.T) string {
	t.Helper()
	srv := fakeapi.Start(t, map[string]fakeapi.Script{"probe": {fakeapi.Text("ok")}})
	env := fakeapi.CLIEnv(t, srv)
	cli := fakeapi.FindCLI(t)
	var mu sync.Mutex
	var refusals []string
	var wg sync.WaitGroup
	for _, info := range state.Kinds() {
		if info.Runs != state.RunsAgent {
			continue
		}
		kind := info.Kind
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := agent.Session{Step: kind, ReportSchema: info.ReportSchema, Model: "sonnet", SessionID: executor.NewSessionID(),
				Agent: &spec.Agent{Kind: claude.Kind, Settings: &claude.Settings{PermissionMode: "acceptEdits", AllowedTools: []string{"Bash"}}}}
			args, err := claude.Args(s, false, nil)
			if err != nil {
				t.Errorf("claude.Args: %v", err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, cli, args...)
			cmd.Dir, cmd.Env, cmd.Stdin = t.TempDir(), env, strings.NewReader("[[fake:probe]] hi")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			_ = cmd.Run()
			if i := strings.Index(out.String(), "is not a valid JSON Schema"); i >= 0 {
				mu.Lock()
				refusals = append(refusals, string(kind)+": "+strings.TrimSpace(firstLineOf(out.String()[max(0, i-40):])))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return strings.Join(refusals, "; ")
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
