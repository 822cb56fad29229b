package proc

import (
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// maxLogArg is how much of one argument the debug log shows (a prompt or a
// script may be long).
const maxLogArg = 200

// argv is the command line of c as a shell would read it, for the log; long
// arguments are cut.
func argv(c Cmd) string {
	parts := make([]string, 0, 1+len(c.Args))
	for _, a := range append([]string{c.Path}, c.Args...) {
		n := len(a)
		if n > maxLogArg {
			a = a[:maxLogArg]
		}
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`;&|<>()*?[]#~") {
			a = strconv.Quote(a)
		}
		if n > maxLogArg {
			a += "…(" + strconv.Itoa(n) + " bytes)"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// logStart logs a started process at debug level.
func logStart(log hclog.Logger, c Cmd, pid int) {
	if log.IsDebug() {
		log.Debug("start", "argv", argv(c), "dir", c.Dir, "pid", pid)
	}
}

// logEnd logs how a process ended at debug level.
func logEnd(log hclog.Logger, c Cmd, pid int, res Result) {
	if !log.IsDebug() {
		return
	}
	kv := []any{"argv", argv(c), "dir", c.Dir, "pid", pid, "exit", res.ExitCode, "duration", res.Duration}
	if res.Signal != 0 {
		kv = append(kv, "signal", res.Signal.String())
	}
	if res.Stopped {
		kv = append(kv, "stopped", true)
	}
	log.Debug("end", kv...)
}
