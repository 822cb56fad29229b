package executor

import (
	"os"
	"time"

	"github.com/cadence-run/cadence/executor/mergequeue"
)

// FailIntegrateBetweenRepos is a failpoint (Options.Failpoint), for tests
// only: cadence kills its own process (SIGKILL) right after the first base
// of a lot with neighbour repositories advanced, before the next one.
const FailIntegrateBetweenRepos = mergequeue.FailBetweenRepos

// FailBatchStacked and FailBatchAdvanced are failpoints (tests only) of
// the merge queue (executor/mergequeue): cadence kills itself once a batch
// of more than one lot is rebased in order (the later lots stacked on lots
// not on the base), and once the base advanced over a batch before its
// lots' integration is recorded.
const (
	FailBatchStacked  = mergequeue.FailBatchStacked
	FailBatchAdvanced = mergequeue.FailBatchAdvanced
)

// failpoint kills cadence's own process with SIGKILL when name is the
// run's failpoint (Options.Failpoint, test-only; internal/cli sets it from
// CADENCE_FAILPOINT). Otherwise it does nothing.
func (r *runner) failpoint(name string) {
	if r.o.Failpoint == "" || r.o.Failpoint != name {
		return
	}
	r.emit(Event{Kind: EvOutput, Message: "failpoint " + name + ": cadence kills itself (test only)"})
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Kill() == nil {
		time.Sleep(time.Minute) // the signal ends the process meanwhile
	}
}
