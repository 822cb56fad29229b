package remote

import (
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// TestRemoteClasses: sessions and test gates leave the machine as the
// executor block says; integration and the UX review never do.
func TestRemoteClasses(t *testing.T) {
	both := &spec.Executor{Remote: []string{spec.RemoteSessions, spec.RemoteTests}}
	for kind, want := range map[state.StepKind]bool{
		state.StepImplement: true, state.StepReview: true, state.StepTest: true,
		state.StepUX: false, state.StepIntegrate: false,
	} {
		if got := Remote(both, kind); got != want {
			t.Errorf("Remote(sessions+tests, %s) = %v, want %v", kind, got, want)
		}
	}
	tests := &spec.Executor{Remote: []string{spec.RemoteTests}}
	if Remote(tests, state.StepImplement) || !Remote(tests, state.StepTest) {
		t.Error("remote = [tests]: an implement session left, or the test gate stayed")
	}
}
