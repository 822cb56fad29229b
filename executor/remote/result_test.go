package remote

import (
	"context"
	"encoding/json"
	"strings"
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
	if res.Status != state.StepInterrupted || res.Cause != onWorkerClone("build-1", "worker's cause") || res.Output != "tail" {
		t.Errorf("status %s, cause %q, output %q; want interrupted (a write failed on the worker), the worker's cause (its incident: on the worker's clone) and output", res.Status, res.Cause, res.Output)
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != "the session ran a push command: git push" {
		t.Errorf("warnings %q: want the worker's push warning only (no commit reached the branch)", res.Warnings)
	}
}

// TestRemoteWorkerIncidentCauseSaysWhere: a step whose guard found an
// incident on the worker (a test gate that wrote another lot's branch in
// the worker's clone) fails with the worker's cause, which says that what
// it names (a branch put back, a rescue ref) was in the worker's own clone,
// gone with the run, and that nothing of the lead's moved; the lead takes
// no incident of it. A cause without an incident is kept as it is.
func TestRemoteWorkerIncidentCauseSaysWhere(t *testing.T) {
	cause := "incident: during its test step, not by cadence: in repo app, the branch of lot early, which had no step running, " +
		"refs/heads/cadence/w/early was created at 1cf1538f8f24 (kept under refs/cadence/rescue/w/a/1); deleted again"
	f := newFixture(t, `"tests"`)
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		res, _ := json.Marshal(step.Result{Status: state.StepFailed, Cause: cause, Incident: cause,
			Incidents: []string{"lot a: " + strings.TrimPrefix(cause, "incident: ")}})
		return queue.Result{Result: res}, nil
	})
	res, err := f.r.RunStep(ctx(t), request(f, state.StepTest), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != state.StepFailed || res.Incident != "" || len(res.Incidents) != 0 {
		t.Errorf("status %s, incident %q, incidents %q: want failed, no incident of the lead's", res.Status, res.Incident, res.Incidents)
	}
	if !strings.HasPrefix(res.Cause, "on worker build-1, in its own clone") || !strings.Contains(res.Cause, "nothing of this machine's moved") || !strings.HasSuffix(res.Cause, cause) {
		t.Errorf("cause %q: want it to say the incident was in worker build-1's own clone, then the worker's words", res.Cause)
	}

	g := newFixture(t, `"tests"`)
	g.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		res, _ := json.Marshal(step.Result{Status: state.StepFailed, Cause: "exit 1"})
		return queue.Result{Result: res}, nil
	})
	res, err = g.r.RunStep(ctx(t), request(g, state.StepTest), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cause != "exit 1" {
		t.Errorf("cause %q: want the worker's cause as it is (no incident)", res.Cause)
	}
}
