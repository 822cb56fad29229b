package mergequeue

import (
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
)

// TestPushedHoldsTheLotsThatRan: a change of the remotes found before an
// integration fails the integrating lot when its command or test steps
// ran there since the last comparison (it may have pushed: held until
// -replace); another lot waits at integrate.
func TestPushedHoldsTheLotsThatRan(t *testing.T) {
	res := pushed("a", "the remotes of repo app changed", []string{"a", "b"})
	if res.Kind != Incident || res.Incident.Kind != state.OutcomeFailed || !res.pushed || res.lot != "a" ||
		!strings.Contains(res.Incident.Detail, "incident: the remotes of repo app changed; the lot is held") ||
		!strings.Contains(res.Incident.Detail, "-replace a") {
		t.Errorf("a lot that ran there: %+v", res)
	}
	res = pushed("c", "the remotes of repo app changed", []string{"a", "b"})
	if res.Kind != Waits || res.Cause != "incident: the remotes of repo app changed" {
		t.Errorf("a lot that did not run there: %+v", res)
	}
}
