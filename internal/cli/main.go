// Package cli is cadence's command line: subcommands, flags, standard
// streams, environment, signals and exit codes. It wires the concrete parts
// (spec, planner, render, gitint) together; no other package reads arguments
// or the environment.
package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/go-hclog"
	"golang.org/x/term"
)

// command is one subcommand.
type command struct {
	name, args, summary string
	run                 func(e *env, args []string) ExitCode
}

var commands []*command

func init() {
	commands = []*command{
		{"validate", "[FILE]", "Check a wave file: syntax, references, the dependency graph", runValidate},
		{"plan", "[FILE|DIR...]", "Preview what apply would do: per lot, totals, warnings", runPlan},
		{"show", "PLANFILE", "Print a saved plan (plan -out): text, -json or -format markdown", runShow},
		{"apply", "[FILE|PLANFILE]", "Run the wave: plan, confirm, run every lot, integrate, resume", runApply},
		{"status", "[FILE]", "The lot table from the state file, and this machine's live waves and slots", runStatus},
		{"hold", "LABEL", "Reserve a session slot of this machine for your own session (-ttl 2h)", runHold},
		{"release", "LABEL", "Free the slot a hold reserves", runRelease},
		{"answer", "[FILE] LOT TEXT", "Answer the question a lot stopped on; a live apply goes on with it, else the next apply", runAnswer},
		{"drop", "[FILE] LOT...", "Hand lots back as dropped by the lead, on a live apply or not (-now stops a running step)", runDrop},
		{"stop", "[FILE]", "Stop a live apply after its current steps; the next apply resumes", runStop},
		{"logs", "[FILE] LOT", "A lot's journal and session reports", runLogs},
		{"clean", "[FILE]", "Remove a wave's leftover worktrees, merged lot branches and push guard", runClean},
		{"list", "[FILE]", "The wave's lots with their titles and status", runList},
		{"graph", "[FILE]", "Print the lots' dependency graph (DOT, or -format mermaid)", runGraph},
		{"fmt", "[FILE|DIR...]", "Rewrite wave files in canonical format", runFmt},
		{"lsp", "", "Run the language server for wave files (editors start it)", runLSP},
		{"engine", "", "Run an embedded NATS JetStream server for remote steps, and create queues", runEngine},
		{"worker", "", "Pull a queue's remote steps from the engine and run them on this machine", runWorker},
		{"init", "[FILE]", "Write a commented starter wave.hcl", runInit},
		{"version", "", "Print cadence's version and the agent CLI it finds", runVersion},
		{"completion", "bash|zsh|fish", "Print what turns on shell completion, for the shell's startup file", runCompletion},
		{"help", "[COMMAND]", "Show help for cadence or a command", runHelp},
	}
}

// env is what a command runs with: streams, environment and global settings.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	log            hclog.Logger
	// supervisor is the supervisor every step, session and agent probe
	// runs under (stepSupervisor; nil: none).
	supervisor *proc.Supervisor
	noColor    bool
	// lockTimeout is apply's -lock-timeout: how long a held wave or
	// repository lock is waited for (0: refused at once).
	lockTimeout time.Duration
	// compactWarnings is plan's and apply's -compact-warnings: the text
	// plan sums up the warnings that do not refuse on one line
	// (render.Options.CompactWarnings).
	compactWarnings bool
	// tty says whether a writer is a terminal (nil: term.IsTerminal of an
	// *os.File; tests fake one).
	tty func(io.Writer) bool
	// flagsMade, when set, is given every flag set a command makes
	// (shell completion learns the commands' flags from them).
	flagsMade func(*flag.FlagSet)
	// version is cadence's version as a wave's state pins it
	// (cadenceVersion); "" until first asked. Tests set it.
	version string
	// agentRegistry is the command's agent adapters (agents(): made on
	// first use, one per command).
	agentRegistry *agent.Registry
}

// Main runs cadence with args (without the program name) and returns the
// process's exit status: an [ExitCode], or for the hidden supervisor
// command the status of the step it ran.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == proc.SupervisorCommand {
		return superviseMain(args[1:])
	}
	if len(args) > 0 && args[0] == gitint.WitnessCommand {
		return int(witnessMain(args[1:], stdin, stderr))
	}
	return int(run(args, stdin, stdout, stderr))
}

// run runs a cadence command line (global flags, then the command).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) ExitCode {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, supervisor: stepSupervisor()}
	if e.completing() {
		e.log = hclog.NewNullLogger()
		return e.complete()
	}
	level := e.getenv("CADENCE_LOG")
	if l, ok := logLevelFlag(args); ok {
		level = l // the flag wins over CADENCE_LOG, wherever it stands
	}
	// Global flags may come before the command.
	chdir := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch a := args[0]; {
		case a == "-no-color" || a == "--no-color":
			e.noColor = true
		case strings.HasPrefix(a, "-chdir=") || strings.HasPrefix(a, "--chdir="):
			chdir = a[strings.Index(a, "=")+1:]
		case (a == "-chdir" || a == "--chdir") && len(args) > 1:
			chdir = args[1]
			args = args[1:]
		case strings.HasPrefix(a, "-log-level=") || strings.HasPrefix(a, "--log-level="):
		case (a == "-log-level" || a == "--log-level") && len(args) > 1:
			args = args[1:] // its value, read by logLevelFlag
		case a == "-h" || a == "-help" || a == "--help":
			args = []string{"help"}
			continue
		case a == "-v" || a == "-version" || a == "--version":
			args = []string{"version"}
			continue
		default:
			fmt.Fprintf(stderr, "cadence: unknown global flag %s\n\n", a)
			usage(stderr)
			return planUsageExit(args)
		}
		args = args[1:]
	}
	log, closeLog := newLogger(stderr, level, e.getenv("CADENCE_LOG_PATH"))
	defer closeLog()
	e.log = log
	hclog.SetDefault(log)
	if len(args) == 0 {
		usage(stderr)
		return ExitUsage
	}
	if code := changeDir(stderr, chdir); code >= 0 {
		if code == ExitUsage {
			return planUsageExit(args)
		}
		return code
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(e, args[1:])
		}
	}
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	msg := fmt.Sprintf("cadence: unknown command %q", args[0])
	if s := closest(args[0], names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	fmt.Fprintf(stderr, "%s\n\n", msg)
	usage(stderr)
	return ExitUsage
}

// logLevelFlag finds the last -log-level flag (-log-level=L or -log-level L,
// one or two dashes) before the command or among its flags, up to a "--".
func logLevelFlag(args []string) (string, bool) {
	level, found := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		switch {
		case strings.HasPrefix(a, "-log-level=") || strings.HasPrefix(a, "--log-level="):
			level, found = a[strings.Index(a, "=")+1:], true
		case (a == "-log-level" || a == "--log-level") && i+1 < len(args):
			level, found = args[i+1], true
			i++
		}
	}
	return level, found
}

// newLogger makes cadence's one debug log, which every package reaches as
// a named sub-logger of hclog.L() (cadence.proc, cadence.gitint,
// cadence.state, ...). level is CADENCE_LOG or -log-level (trace, debug,
// info, warn, error or off; warn when empty or unknown, which is said on
// w); the log goes to the file path (CADENCE_LOG_PATH, appended to) when
// set, else to w, the standard error: never to the standard output, which
// -json keeps for JSON. The returned func closes the file.
func newLogger(w io.Writer, level, path string) (hclog.Logger, func()) {
	lv := logLevel(w, level)
	out, closeOut := w, func() {}
	if path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(w, "cadence: CADENCE_LOG_PATH: %v; logging to standard error\n", err)
		} else {
			out, closeOut = f, func() { _ = f.Close() }
		}
	}
	return hclog.New(&hclog.LoggerOptions{Name: "cadence", Level: lv, Output: out}), closeOut
}

// logLevel parses a log level; an unknown one is said on w and is warn.
func logLevel(w io.Writer, level string) hclog.Level {
	lv := hclog.LevelFromString(level)
	if lv == hclog.NoLevel {
		if level != "" {
			fmt.Fprintf(w, "cadence: unknown log level %q (trace, debug, info, warn, error or off); logging at warn\n", level)
		}
		lv = hclog.Warn
	}
	return lv
}

func usage(w io.Writer) {
	fmt.Fprint(w, `cadence runs waves of AI coding-agent work: lots (briefs for an agent, or
plain commands) with dependencies, models and a token budget, declared in an
HCL wave file.

Usage: cadence [-chdir=DIR] [-no-color] [-log-level=LEVEL] COMMAND [flags] [args]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %-16s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprint(w, `
Global flags (before the command):
  -chdir=DIR        switch to folder DIR first: every relative path after it
                    (wave file, -var-file, -out, PLANFILE) is relative to DIR
  -no-color         no ANSI colour
  -log-level=LEVEL  trace, debug, info, warn, error or off (or CADENCE_LOG)
  -version, -help   the same as the version and help commands

The wave file defaults to wave.hcl in the current folder.
Run "cadence help COMMAND" for a command's flags.

Exit codes: 0 success; 1 an error (apply: some lot needs the lead);
2 a usage error (unknown command or flag, a missing argument) or, for apply,
refused before acting; 3 apply suspended (budget, quota or an API failure);
130 interrupted. plan -detailed-exitcode: 0 every lot done, 1 an error or a
usage error, 2 work pending, 3 nothing pending but lots need the lead.
`)
}

func runHelp(e *env, args []string) ExitCode {
	if len(args) == 0 {
		usage(e.stdout)
		return ExitOK
	}
	if len(args) == 1 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		// help takes -h as every command does: its usage is cadence's
		usage(e.stdout)
		return ExitOK
	}
	if strings.HasPrefix(args[0], "-") {
		// help -json included: help has no machine form
		fmt.Fprintf(e.stderr, "cadence help: help takes no flags (%s); usage: cadence help [COMMAND]\n", args[0])
		return ExitUsage
	}
	if len(args) > 1 {
		fmt.Fprintf(e.stderr, "cadence help: one command at most, got %q\n", args)
		return ExitUsage
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(e, []string{"-h"})
		}
	}
	fmt.Fprintf(e.stderr, "cadence help: no command %q\n", args[0])
	return ExitUsage
}

// colorOn says whether output to w may use ANSI colour: a terminal, no
// -no-color, no NO_COLOR in the environment.
func (e *env) colorOn(w io.Writer) bool {
	if e.noColor || e.getenv("NO_COLOR") != "" {
		return false
	}
	return e.terminal(w)
}

// terminal says whether w is a terminal.
func (e *env) terminal(w io.Writer) bool {
	if e.tty != nil {
		return e.tty(w)
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// closest returns the command meant by s: one it is a prefix of (or that is
// a prefix of it), else the one within a typo of it.
func closest(s string, candidates []string) string {
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		if strings.HasPrefix(c, s) || strings.HasPrefix(s, c) {
			return c
		}
	}
	return spec.Suggest(s, sorted)
}
