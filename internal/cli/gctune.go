package cli

import "runtime/debug"

// shortRunGCPercent and shortRunMemoryLimit tune the garbage collector for
// the commands that build one large structure and exit (plan, validate,
// graph): most of what a wave file's parse allocates stays live until the
// command ends, so collecting at every doubling of the heap (GOGC=100)
// traces the same syntax tree again and again. With 400 the heap grows to
// five times what is live before a collection (about 130 MiB instead of 80
// for 10,000 lots); the memory limit is the bound past which the runtime
// collects as often as it must (bench/README.md, Planner).
const (
	shortRunGCPercent   = 400
	shortRunMemoryLimit = 1 << 30
)

// shortRunGC sets the collector for a short command (shortRunGCPercent)
// unless the user set GOGC or GOMEMLIMIT, and returns what puts the
// previous settings back (tests run commands in one process).
func (e *env) shortRunGC() (restore func()) {
	if e.getenv("GOGC") != "" || e.getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gc := debug.SetGCPercent(shortRunGCPercent)
	limit := debug.SetMemoryLimit(shortRunMemoryLimit)
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}
