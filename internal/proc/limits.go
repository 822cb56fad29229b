package proc

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits bound a step's tree (Cmd.Limits); a zero field sets no limit.
// memory and processes bound the whole tree, through a cgroup the
// supervisor makes for the step; open_files, file_size and cpu_time bound
// each process of the tree, through setrlimit(2) in the supervisor before
// it starts the step (inherited across fork and exec). Where the machine
// allows neither, a limit is not enforced: Enforcement says which.
type Limits struct {
	// Memory is the tree's memory in bytes (cgroup memory.max, or v1's
	// memory.limit_in_bytes; swap is not allowed beyond it).
	Memory int64
	// Processes is the most processes (tasks: threads count) of the tree
	// at once (cgroup pids.max).
	Processes int
	// OpenFiles is the most open files of each process (RLIMIT_NOFILE).
	OpenFiles int
	// FileSize is the largest file, in bytes, a process may write
	// (RLIMIT_FSIZE).
	FileSize int64
	// CPUTime is the CPU time of each process (RLIMIT_CPU), in whole
	// seconds (rounded up).
	CPUTime time.Duration
}

// Limit names one of Limits' fields, as a wave file spells it.
type Limit string

// The limits, by their wave-file names.
const (
	LimitMemory    Limit = "memory"
	LimitProcesses Limit = "processes"
	LimitOpenFiles Limit = "open_files"
	LimitFileSize  Limit = "file_size"
	LimitCPUTime   Limit = "cpu_time"

	// LimitLeftCgroup is no field of Limits: a process of the step found
	// outside the cgroup that enforces its memory and processes limits,
	// where they could not hold.
	LimitLeftCgroup Limit = "left-cgroup"
)

// AllLimits lists the limits in the order they are shown.
var AllLimits = []Limit{LimitMemory, LimitProcesses, LimitOpenFiles, LimitFileSize, LimitCPUTime}

// IsZero reports whether l sets no limit.
func (l Limits) IsZero() bool { return l == Limits{} }

// Set lists the limits l sets, in AllLimits' order.
func (l Limits) Set() []Limit {
	var out []Limit
	for _, k := range AllLimits {
		if l.value(k) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// value is the limit k of l in its unit (bytes, processes, files,
// seconds rounded up); 0 for none.
func (l Limits) value(k Limit) int64 {
	switch k {
	case LimitMemory:
		return l.Memory
	case LimitProcesses:
		return int64(l.Processes)
	case LimitOpenFiles:
		return int64(l.OpenFiles)
	case LimitFileSize:
		return l.FileSize
	case LimitCPUTime:
		return int64((l.CPUTime + time.Second - 1) / time.Second)
	}
	return 0
}

// encode is l as the supervisor's argument: "-" for none, else
// "name=value,…" with values as value returns them.
func (l Limits) encode() string {
	var parts []string
	for _, k := range l.Set() {
		parts = append(parts, string(k)+"="+strconv.FormatInt(l.value(k), 10))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

// decodeLimits reads what encode wrote.
func decodeLimits(s string) (Limits, error) {
	var l Limits
	if s == "-" {
		return l, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(part, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return l, fmt.Errorf("bad limit %q", part)
		}
		switch Limit(k) {
		case LimitMemory:
			l.Memory = n
		case LimitProcesses:
			l.Processes = int(n)
		case LimitOpenFiles:
			l.OpenFiles = int(n)
		case LimitFileSize:
			l.FileSize = n
		case LimitCPUTime:
			l.CPUTime = time.Duration(n) * time.Second
		default:
			return l, fmt.Errorf("unknown limit %q", k)
		}
	}
	return l, nil
}

// Mechanism is how a limit is enforced on this machine.
type Mechanism string

// Mechanisms; MechanismNone means the limit is not enforced.
const (
	MechanismCgroup2 Mechanism = "cgroup v2"
	MechanismCgroup1 Mechanism = "cgroup v1"
	MechanismRlimit  Mechanism = "setrlimit"
	MechanismNone    Mechanism = ""
)

// Enforcement is how one limit is enforced here: Mechanism, or, when it
// is MechanismNone, Why not.
type Enforcement struct {
	Limit     Limit
	Mechanism Mechanism
	Why       string
}
