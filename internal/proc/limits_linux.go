package proc

import (
	"syscall"
)

// Enforced says how each limit l sets is enforced on this machine, in
// AllLimits' order: memory and processes through a cgroup (it makes and
// removes a probe cgroup to know), the others through setrlimit.
func Enforced(l Limits) []Enforcement {
	var out []Enforcement
	for _, k := range l.Set() {
		e := Enforcement{Limit: k, Mechanism: MechanismRlimit}
		switch k {
		case LimitMemory:
			e.Mechanism, e.Why = cgroupEnforcement(ctrlMemory)
		case LimitProcesses:
			e.Mechanism, e.Why = cgroupEnforcement(ctrlPids)
		}
		out = append(out, e)
	}
	return out
}

// setRlimits sets, on the calling process (the supervisor, whose step
// inherits them), l's per-process limits, soft and hard: a step cannot
// raise them. cpu_time's hard limit is a second past the soft one, so
// that the kernel's SIGXCPU, not its SIGKILL, ends a process that reaches
// it; no core file is written once a cpu_time or file_size limit is set
// (their signals would dump one).
func setRlimits(l Limits) error {
	set := func(res int, soft, hard uint64) error {
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(res, &cur); err == nil && cur.Max < hard {
			hard = cur.Max
			soft = min(soft, hard)
		}
		return syscall.Setrlimit(res, &syscall.Rlimit{Cur: soft, Max: hard})
	}
	if l.OpenFiles > 0 {
		if err := set(syscall.RLIMIT_NOFILE, uint64(l.OpenFiles), uint64(l.OpenFiles)); err != nil {
			return err
		}
	}
	if n := l.value(LimitFileSize); n > 0 {
		if err := set(syscall.RLIMIT_FSIZE, uint64(n), uint64(n)); err != nil {
			return err
		}
	}
	if n := l.value(LimitCPUTime); n > 0 {
		if err := set(syscall.RLIMIT_CPU, uint64(n), uint64(n)+1); err != nil {
			return err
		}
	}
	if l.FileSize > 0 || l.CPUTime > 0 {
		return set(syscall.RLIMIT_CORE, 0, 0)
	}
	return nil
}

// rlimitHit names the per-process limit a step's end shows, if any: the
// step, or the shell's last command (exit 128+N), ended by SIGXCPU or
// SIGXFSZ while l sets that limit.
func rlimitHit(l Limits, ws syscall.WaitStatus) Limit {
	sig := syscall.Signal(0)
	switch {
	case ws.Signaled():
		sig = ws.Signal()
	case ws.Exited() && ws.ExitStatus() > 128:
		sig = syscall.Signal(ws.ExitStatus() - 128)
	}
	switch {
	case sig == syscall.SIGXCPU && l.CPUTime > 0:
		return LimitCPUTime
	case sig == syscall.SIGXFSZ && l.FileSize > 0:
		return LimitFileSize
	}
	return ""
}
