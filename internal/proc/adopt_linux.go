package proc

import (
	"os"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// reapEvery is the least time between two looks of the reaper of adopted
// processes at /proc.
const reapEvery = 250 * time.Millisecond

// AdoptOrphans makes this process a child subreaper
// (PR_SET_CHILD_SUBREAPER): a process of a step whose supervisor died (a
// step may kill its own supervisor) is re-parented to cadence, not to
// init, so it stays below cadence, where every check of "is this a step's
// process" looks (Below, the lead-side hook's is_step). A reaper then
// looks at /proc for children of this process that Run did not start
// (kids): an adopted zombie is reaped, an adopted live process is killed
// (SIGKILL) once two looks found it (reapAdopted) and reaped next time
// (logged at debug level). Such a process
// is a step's that escaped its supervisor (or a daemon a direct process
// left): nothing cadence starts may outlive its step.
//
// The reaper looks when one of Run's children was reaped (waitTracked):
// the kernel re-parents a process's orphans as that process exits, so an
// adoption always follows the end of one of cadence's children, or of a
// process the reaper ended; it looks again after reapEvery while its last
// look found an adopted process. Between those it sleeps: no timer runs
// while steps run undisturbed. Called once, by apply, before any step
// runs; the reaper lasts as long as the process.
func AdoptOrphans(log hclog.Logger) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return e
	}
	if log == nil {
		log = hclog.L().Named("proc")
	}
	go func() {
		seen := map[adoptee]bool{}
		for range childEnded {
			for {
				var found bool
				found, seen = reapAdopted(log, seen)
				if !found {
					break
				}
				time.Sleep(reapEvery) // the killed ones are reaped, their orphans found
			}
			time.Sleep(reapEvery) // at most one look per reapEvery
		}
	}()
	return nil
}

// adoptee is a live child of this process that Run did not start, by pid
// and start time (a pid used again is another process).
type adoptee struct {
	pid   int
	start uint64
}

// reapAdopted reaps, once, the zombie children of this process that Run
// did not start, and kills those live ones that the look before (seen)
// found too: a live process is killed only when two looks reapEvery apart
// found it adopted, never on one reading of /proc that a start under way
// could make. It reports whether it found any, and the live ones it left
// for the next look.
func reapAdopted(log hclog.Logger, seen map[adoptee]bool) (found bool, next map[adoptee]bool) {
	self := os.Getpid()
	next = map[adoptee]bool{}
	for _, pid := range pids() {
		s, ok := readStat(pid)
		if !ok || s.ppid != self {
			continue
		}
		kids.mu.Lock()
		if !kids.set[pid] {
			found = true
			a := adoptee{pid: pid, start: s.start}
			switch {
			case s.dead():
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			case seen[a]:
				_ = syscall.Kill(pid, syscall.SIGKILL)
				log.Debug("ended an adopted process (its parent died)", "pid", pid)
			default:
				next[a] = true
			}
		}
		kids.mu.Unlock()
	}
	return found, next
}
