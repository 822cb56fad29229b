package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/testagent"
	"github.com/cadence-run/cadence/schemas/schemacheck"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected output in the scripts")

// noRaceExitSleep is the environment entry that keeps a -race build of
// cadence (every cadence a script or an end-to-end test runs, and every
// step supervisor) from sleeping its default second at exit
// (GORACE atexit_sleep_ms=1000): a kill storm runs cadence a hundred times.
// Race reports are still printed.
var noRaceExitSleep = "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"cadence":     func() { os.Exit(cadenceMain(os.Args[1:])) },
		"fake-claude": func() { os.Exit(testagent.Main()) },
	})
}

// TestScripts runs the CLI scripts in testdata/script: one per command and
// per class of diagnostic. Each script runs in a fresh folder with a git
// identity and a scratch HOME; $EXAMPLES is a copy of the examples folder
// without what an apply leaves there (repos/, state files, .cadence/), made
// once for the run: a script never reads or writes the clone's examples, which
// the README's try-it applies.
func TestScripts(t *testing.T) {
	examples := filepath.Join(t.TempDir(), "examples")
	if err := copyExamples(filepath.Join("..", "..", "examples"), examples); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			env.Setenv("GIT_AUTHOR_NAME", "cadence test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@cadence.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "cadence test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@cadence.invalid")
			env.Setenv("CADENCE_CLAUDE_BIN", "cadence-no-such-agent")
			env.Setenv("NO_COLOR", "")
			env.Setenv("CADENCE_HOME", filepath.Join(env.WorkDir, ".cadence-home"))
			// A scratch HOME: testscript's default (/no-home) does not
			// exist, and a process that created it would write outside the
			// test's folder.
			home := filepath.Join(env.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			k, v, _ := strings.Cut(noRaceExitSleep, "=")
			env.Setenv(k, v)
			// Every -json output of the script validates against its
			// command's schema (cadenceMain); what does not is in this
			// file, which fails the script at its end.
			schemaLog := filepath.Join(env.WorkDir, ".schema-check")
			env.Setenv(schemaLogEnv, schemaLog)
			env.Defer(func() {
				if b, err := os.ReadFile(schemaLog); err == nil && len(b) > 0 {
					env.T().Fatal("-json output off its schema:\n" + string(b))
				}
			})
			return nil
		},
		// [limits:NAME]: this machine enforces the step limit NAME
		// (proc.Enforced), e.g. limits:memory.
		Condition: func(cond string) (bool, error) {
			name, ok := strings.CutPrefix(cond, "limits:")
			if !ok {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			l := map[string]proc.Limits{"memory": {Memory: 1 << 30}, "processes": {Processes: 100}}[name]
			for _, e := range proc.Enforced(l) {
				return e.Mechanism != proc.MechanismNone, nil
			}
			return false, fmt.Errorf("unknown limit %q", name)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// expect-exit N PROGRAM ARGS...: runs the program and checks its
			// exit code; its output is then checked as after exec.
			"expect-exit": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: expect-exit N PROGRAM ARGS...")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("expect-exit: %v", err)
				}
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("expect-exit: %v", err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("%s exited %d, want %d", args[1], got, want)
				}
			},
			// sessions-at-most N FILE: the fake agent's log FILE never has
			// more than N sessions running at one instant.
			"sessions-at-most": func(ts *testscript.TestScript, neg bool, args []string) {
				limit, _ := strconv.Atoi(args[0])
				type ev struct {
					t int64
					d int
				}
				var evs []ev
				for _, line := range strings.Split(strings.TrimSpace(ts.ReadFile(args[1])), "\n") {
					f := strings.Fields(line)
					if len(f) != 5 {
						continue
					}
					t, _ := strconv.ParseInt(f[4], 10, 64)
					evs = append(evs, ev{t, map[string]int{"start": 1, "end": -1}[f[0]]})
				}
				sort.Slice(evs, func(i, j int) bool {
					if evs[i].t == evs[j].t {
						return evs[i].d < evs[j].d
					}
					return evs[i].t < evs[j].t
				})
				cur, most := 0, 0
				for _, e := range evs {
					cur += e.d
					most = max(most, cur)
				}
				if most > limit {
					ts.Fatalf("%d sessions ran at once; the cap is %d", most, limit)
				}
				ts.Logf("%d sessions recorded, at most %d at once", len(evs)/2, most)
				if neg || most < limit {
					ts.Logf("note: the cap was never reached")
				}
			},
			// gone-within DURATION KEY=VALUE...: within DURATION (polled
			// every 20 ms) no process carries every KEY=VALUE in its
			// environment (step processes carry CADENCE_HOME, CADENCE_WAVE,
			// CADENCE_WAVE_ID, CADENCE_LOT); the time it took is logged.
			"gone-within": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: gone-within DURATION KEY=VALUE...")
				}
				d, err := time.ParseDuration(args[0])
				if err != nil {
					ts.Fatalf("gone-within: %v", err)
				}
				start := time.Now()
				for {
					left := proc.Marked(args[1:])
					if len(left) == 0 {
						ts.Logf("no process marked %v after %v", args[1:], time.Since(start).Round(time.Millisecond))
						return
					}
					if time.Since(start) > d {
						for _, pid := range left {
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
						ts.Fatalf("processes %v marked %v still alive after %v", left, args[1:], d)
					}
					time.Sleep(20 * time.Millisecond)
				}
			},
			// sessions-alive-at-most N HOME DONE: every 50 ms until the file
			// DONE exists (at most 120 s), counts the agent sessions alive
			// with CADENCE_HOME=HOME (the distinct CADENCE_SESSION values of
			// live processes) and fails if ever more than N.
			"sessions-alive-at-most": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: sessions-alive-at-most N HOME DONE")
				}
				limit, _ := strconv.Atoi(args[0])
				home, done := "CADENCE_HOME="+args[1], ts.MkAbs(args[2])
				deadline := time.Now().Add(120 * time.Second)
				most, samples := 0, 0
				for {
					_, err := os.Stat(done)
					finished := err == nil
					sessions := map[string]bool{}
					for _, pid := range proc.Marked([]string{home}) {
						env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
						for _, kv := range strings.Split(string(env), "\x00") {
							if id, ok := strings.CutPrefix(kv, "CADENCE_SESSION="); ok {
								sessions[id] = true
							}
						}
					}
					samples++
					most = max(most, len(sessions))
					if len(sessions) > limit {
						ts.Fatalf("%d sessions alive at once (sample %d): the cap is %d", len(sessions), samples, limit)
					}
					if finished {
						break
					}
					if time.Now().After(deadline) {
						ts.Fatalf("%s never appeared", args[2])
					}
					time.Sleep(50 * time.Millisecond)
				}
				ts.Logf("%d samples, at most %d sessions alive at once", samples, most)
			},
			// schema-lines NAME FILE: every line of FILE (or "stdout") that
			// starts with "{" validates against schemas/NAME.
			"schema-lines": func(ts *testscript.TestScript, neg bool, args []string) {
				n := 0
				for _, line := range strings.Split(ts.ReadFile(args[1]), "\n") {
					if !strings.HasPrefix(line, "{") {
						continue
					}
					n++
					if err := schemacheck.Validate(args[0], []byte(line)); err != nil {
						ts.Fatalf("line %q does not validate against %s: %v", line, args[0], err)
					}
				}
				if n == 0 {
					ts.Fatalf("no JSON lines in %s", args[1])
				}
			},
			// state-copy-lot FILE FROM TO: the record of lot FROM in the
			// state file FILE copied onto lot TO, as a step writing the
			// state file straight would (the journal is chained).
			"state-copy-lot": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 3 {
					ts.Fatalf("usage: state-copy-lot FILE FROM TO")
				}
				var st map[string]any
				ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &st))
				lots, _ := st["lots"].(map[string]any)
				if lots[args[1]] == nil {
					ts.Fatalf("no lot %s in %s", args[1], args[0])
				}
				lots[args[2]] = lots[args[1]]
				b, err := json.Marshal(st)
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o600))
			},
			// json-check [-lines] FILE: one JSON document (or one a line),
			// every key snake_case (jsoncheck_test.go).
			"json-check": jsonCheck,
			// schema NAME FILE: FILE (or "stdout") validates against schemas/NAME.
			"schema": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: schema NAME FILE")
				}
				data := []byte(ts.ReadFile(args[1]))
				err := schemacheck.Validate(args[0], data)
				if neg && err == nil {
					ts.Fatalf("%s unexpectedly valid against %s", args[1], args[0])
				}
				if !neg && err != nil {
					ts.Fatalf("%s does not validate against %s: %v", args[1], args[0], err)
				}
			},
		},
	})
}
