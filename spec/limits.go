package spec

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Built-in step timeouts of the steps that are not agent sessions
// (documented in docs/wave-file.md, Step limits).
const (
	// DefaultCommandTimeout is a command lot's run step timeout, and its
	// worktree's setup command's.
	DefaultCommandTimeout = 30 * time.Minute
	// DefaultTestTimeout is a test gate's timeout.
	DefaultTestTimeout = 30 * time.Minute
)

// Limits bound each step of a lot (its run command, setup, test gates,
// and its agent sessions' whole trees), as the limits attribute of a lot,
// its repo and the defaults block write them, merged per limit (the lot's
// over the repo's over the defaults block's). A zero field sets no limit.
type Limits struct {
	// Memory is the step's whole tree's memory, in bytes.
	Memory int64
	// Processes is the most processes of the step's tree at once.
	Processes int
	// OpenFiles is the most open files of each process.
	OpenFiles int
	// FileSize is the largest file a process may write, in bytes.
	FileSize int64
	// CPUTime is the CPU time of each process.
	CPUTime time.Duration
}

// MinOpenFiles is the least open_files: a shell and the step's
// supervisor need a few descriptors of their own.
const MinOpenFiles = 16

// LimitNames are the keys of the limits attribute, in the order shown.
var LimitNames = []string{"memory", "processes", "open_files", "file_size", "cpu_time"}

// IsZero reports whether l sets no limit.
func (l Limits) IsZero() bool { return l == Limits{} }

// over returns l with each limit it does not set taken from base.
func (l Limits) over(base Limits) Limits {
	pick := func(a, b int64) int64 {
		if a != 0 {
			return a
		}
		return b
	}
	return Limits{
		Memory:    pick(l.Memory, base.Memory),
		Processes: int(pick(int64(l.Processes), int64(base.Processes))),
		OpenFiles: int(pick(int64(l.OpenFiles), int64(base.OpenFiles))),
		FileSize:  pick(l.FileSize, base.FileSize),
		CPUTime:   time.Duration(pick(int64(l.CPUTime), int64(base.CPUTime))),
	}
}

// String writes l as a wave file would: `memory = "64MiB", processes = 20`.
func (l Limits) String() string {
	var parts []string
	if l.Memory > 0 {
		parts = append(parts, fmt.Sprintf("memory = %q", FormatBytes(l.Memory)))
	}
	if l.Processes > 0 {
		parts = append(parts, fmt.Sprintf("processes = %d", l.Processes))
	}
	if l.OpenFiles > 0 {
		parts = append(parts, fmt.Sprintf("open_files = %d", l.OpenFiles))
	}
	if l.FileSize > 0 {
		parts = append(parts, fmt.Sprintf("file_size = %q", FormatBytes(l.FileSize)))
	}
	if l.CPUTime > 0 {
		parts = append(parts, fmt.Sprintf("cpu_time = %q", FormatDuration(l.CPUTime)))
	}
	return strings.Join(parts, ", ")
}

// limitSize reads the size of a limit (ParseBytes) with its unit written
// ("64MiB", "1.5GiB", "500MB"), at least 1 byte.
func limitSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" || t[len(t)-1] != 'B' {
		return 0, fmt.Errorf("%q is not a size: write a number with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), like \"64MiB\"", s)
	}
	b, err := ParseBytes(t)
	if err != nil {
		return 0, err
	}
	if b < 1 {
		return 0, fmt.Errorf("%q is out of range: at least 1 byte", s)
	}
	return int64(b), nil
}

// FormatBytes writes a size in the largest binary unit that divides it
// ("64MiB"), else in bytes (Bytes.String).
func FormatBytes(n int64) string { return Bytes(n).String() }

// timeout reads a timeout: a duration, or "0" for none (a zero result
// with ok true).
func (v *values) timeout(attr *hcl.Attribute) (time.Duration, bool) {
	s, ok := v.str(attr)
	if !ok {
		return 0, false
	}
	d, err := ParseDuration(s)
	if err != nil {
		v.invalid(attr, "Invalid duration", "%s (\"0\" for no timeout).", capitalize(err.Error()))
		return 0, false
	}
	return d, true
}

// limits reads a limits attribute: an object of the LimitNames.
func (v *values) limits(attr *hcl.Attribute) (Limits, bool) {
	var l Limits
	val, ok := v.eval(attr, cty.DynamicPseudoType, "")
	if !ok {
		return l, false
	}
	if t := val.Type(); !t.IsObjectType() && !t.IsMapType() {
		v.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			`Inappropriate value for attribute "limits": an object like { memory = "2GiB", processes = 512 } required, but got %s.`, friendlyType(t))
		return l, false
	}
	m := val.AsValueMap()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	good := true
	bad := func(format string, args ...any) {
		v.errorf(attr.Expr.Range(), "Invalid limit", format, args...)
		good = false
	}
	for _, k := range keys {
		x := m[k]
		if x.IsNull() {
			bad("limits: %s is null; leave it out for no limit.", k)
			continue
		}
		switch k {
		case "memory", "file_size", "cpu_time":
			if x.Type() != cty.String {
				bad("limits: %s takes a string with a unit, like %q.", k, map[string]string{"memory": "2GiB", "file_size": "1GiB", "cpu_time": "10m"}[k])
				continue
			}
			if k == "cpu_time" {
				d, err := ParseDuration(x.AsString())
				if err != nil || d < time.Second {
					bad("limits: cpu_time must be a duration of at least 1s, like \"10m\"; got %q.", x.AsString())
					continue
				}
				l.CPUTime = d
				continue
			}
			n, err := limitSize(x.AsString())
			if err != nil {
				bad("limits: %s: %s.", k, capitalize(err.Error()))
				continue
			}
			if k == "memory" {
				l.Memory = n
			} else {
				l.FileSize = n
			}
		case "processes", "open_files":
			least := map[string]int64{"processes": 1, "open_files": MinOpenFiles}[k]
			if x.Type() != cty.Number || !x.AsBigFloat().IsInt() {
				bad("limits: %s takes a whole number, like %d.", k, map[string]int{"processes": 512, "open_files": 1024}[k])
				continue
			}
			n, acc := x.AsBigFloat().Int64()
			if acc != 0 || n < least || n >= 1<<31 {
				bad("limits: %s must be from %d to %d; got %s.", k, least, 1<<31-1, x.AsBigFloat().String())
				continue
			}
			if k == "processes" {
				l.Processes = int(n)
			} else {
				l.OpenFiles = int(n)
			}
		default:
			bad("limits: unknown limit %q; the limits are %s.", k, quoteList(LimitNames))
		}
	}
	return l, good
}

// mergeLimits sets each lot's effective limits: its own over its repo's
// over the defaults block's, per limit.
func (d *decoder) mergeLimits() {
	for _, l := range d.cfg.Lots {
		var repo Limits
		if l.Repo != nil {
			repo = l.Repo.Limits
		}
		l.Limits = l.Limits.over(repo.over(d.defaultsLimits))
	}
}
