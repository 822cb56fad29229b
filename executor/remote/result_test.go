package remote

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
)

// TestRemoteResultClaimsOfTheLeadDropped: a worker's result that claims
// facts of the lead's side (a wave incident, a hold, backup refs, a
// failed write of the lead's files) changes nothing of the lead's: the
// step's result carries none of them; what the worker saw of its own run
// (status, cause, report, output) is kept, a write failure on the worker
// leaves the step interrupted.
func TestRemoteResultClaimsOfTheLeadDropped(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		res, _ := json.Marshal(step.Result{Status: state.StepOK, Cause: "worker's cause", Output: "tail",
			Incident: "incident: fake", Incidents: []string{"lot a: fake incident"}, Held: "held by the worker",
			Backups: []string{"refs/cadence/backup/x"}, WriteFailed: true, ReportPath: "/worker/r.json", Logged: true,
			Warnings: []string{"commit does not cite the lot id: abc fake", "the session ran a push command: git push"}})
		return queue.Result{Result: res}, nil
	})
	res, err := f.r.RunStep(ctx(t), request(f, state.StepImplement), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Incident != "" || len(res.Incidents) != 0 || res.Held != "" || len(res.Backups) != 0 || res.WriteFailed || res.ReportPath != "" || res.Logged {
		t.Errorf("the worker's claims of the lead's side reached the step's result: %+v", res)
	}
	if res.Status != state.StepInterrupted || res.Cause != "worker's cause" || res.Output != "tail" {
		t.Errorf("status %s, cause %q, output %q; want interrupted (a write failed on the worker), the worker's cause and output", res.Status, res.Cause, res.Output)
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != "the session ran a push command: git push" {
		t.Errorf("warnings %q: want the worker's push warning only (no commit reached the branch)", res.Warnings)
	}
}
