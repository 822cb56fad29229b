package guard

import (
	"reflect"
	"testing"

	"github.com/cadence-run/cadence/gitint"
)

// TestForeignLotMoves: another lot's branch that moved during a step is
// foreign only when that lot had nothing running (no step at the start,
// the same activity generation at the end); the stepping lot's own branch
// is not judged here.
func TestForeignLotMoves(t *testing.T) {
	const p, own, x = "refs/heads/cadence/w/", "refs/heads/cadence/w/a", "refs/heads/cadence/w/x"
	var act lotActivity
	doneA := act.busy("a")
	idle := act.snapshot() // x never ran
	doneX := act.busy("x")
	running := act.snapshot()
	doneX()
	ended := act.snapshot()
	doneA()
	before := gitint.Refs{own: "A0", x: "X0"}
	after := gitint.Refs{own: "A1", x: "E"}
	for _, tc := range []struct {
		name        string
		acts0, act1 map[string]lotGen
		want        []gitint.RefMove
	}{
		{"x idle throughout: foreign", idle, idle, []gitint.RefMove{{Ref: x, Old: "X0", New: "E"}}},
		{"x running throughout", running, running, nil},
		{"x started during the step", idle, running, nil},
		{"x ran and ended during the step", idle, ended, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, lots := foreignLotMoves(p, own, before, after, tc.acts0, tc.act1)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("moves = %+v, want %+v", got, tc.want)
			}
			if len(got) > 0 && lots[x] != "x" {
				t.Errorf("lots = %v, want x named", lots)
			}
		})
	}
	// A lot branch created for a lot that is idle is foreign too.
	got, _ := foreignLotMoves(p, own, gitint.Refs{}, gitint.Refs{x: "E"}, idle, idle)
	if want := []gitint.RefMove{{Ref: x, New: "E"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("created: %+v, want %+v", got, want)
	}
}

// TestOwnBranchMove: the lot's own branch must be where its worktree's
// HEAD reflog left it (or where it was, when the worktree moved nothing).
func TestOwnBranchMove(t *testing.T) {
	const ref = "refs/heads/cadence/w/a"
	for _, tc := range []struct {
		name                             string
		before, after, tipBefore, tipNow string
		want                             *gitint.RefMove
	}{
		{"nothing moved", "A0", "A0", "A0", "A0", nil},
		{"committed in the worktree", "A0", "A1", "A0", "A1", nil},
		{"no reflog", "A0", "E", "", "", nil},
		{"committed, then moved from elsewhere", "A0", "E", "A0", "A1", &gitint.RefMove{Ref: ref, Old: "A1", New: "E"}},
		{"moved from elsewhere only", "A0", "E", "A0", "A0", &gitint.RefMove{Ref: ref, Old: "A0", New: "E"}},
		{"committed, then put back from elsewhere", "A0", "A0", "A0", "A1", &gitint.RefMove{Ref: ref, Old: "A1", New: "A0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := ownBranchMove(ref, tc.before, tc.after, tc.tipBefore, tc.tipNow)
			if ok != (tc.want != nil) || (ok && m != *tc.want) {
				t.Errorf("ownBranchMove = %+v, %v; want %+v", m, ok, tc.want)
			}
		})
	}
}
