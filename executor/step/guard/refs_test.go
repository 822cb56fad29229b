package guard

import (
	"reflect"
	"testing"

	"github.com/cadence-run/cadence/gitint"
)

// TestLedgerForeign: a step's two readings of the refs, with the moves
// cadence made itself in between, give the foreign moves and where each
// ref is put back.
func TestLedgerForeign(t *testing.T) {
	const main = "refs/heads/main"
	own := func(old, new, lot string) OwnMove {
		return OwnMove{gitint.RefMove{Ref: main, Old: old, New: new}, lot}
	}
	for _, tc := range []struct {
		name          string
		before, after gitint.Refs
		own           []OwnMove
		want          []gitint.RefMove
		onTop         map[string][]string
	}{
		{name: "nothing moved", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "X"}},
		{name: "an integration during the step", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "Y"},
			own: []OwnMove{own("X", "Y", "b")}},
		{name: "two integrations", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "Z"},
			own: []OwnMove{own("X", "Y", "b"), own("Y", "Z", "c")}},
		{name: "an integration undone", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "X"},
			own: []OwnMove{own("X", "Y", "b"), own("Y", "X", "b")}},
		{name: "a foreign move", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "E"},
			want: []gitint.RefMove{{Ref: main, Old: "X", New: "E"}}},
		{name: "a foreign move after an integration: back to the integration's value",
			before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "E"}, own: []OwnMove{own("X", "Y", "b")},
			want: []gitint.RefMove{{Ref: main, Old: "Y", New: "E"}}},
		{name: "a foreign move that undid an integration (no net change)",
			before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "X"}, own: []OwnMove{own("X", "Y", "b")},
			want: []gitint.RefMove{{Ref: main, Old: "Y", New: "X"}}},
		{name: "an integration on top of a foreign move",
			before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "Y"}, own: []OwnMove{own("E", "Y", "b")},
			want: []gitint.RefMove{{Ref: main, Old: "X", New: "Y"}}, onTop: map[string][]string{main: {"b"}}},
		{name: "created and deleted refs", before: gitint.Refs{main: "X", "refs/tags/v1": "T"},
			after: gitint.Refs{main: "X", "refs/heads/tmp": "N"},
			want:  []gitint.RefMove{{Ref: "refs/heads/tmp", New: "N"}, {Ref: "refs/tags/v1", Old: "T"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Moves recorded before the step's first reading do not count.
			rl := &repoLedger{moves: []OwnMove{own("W", "X", "old")}}
			rl.moves = append(rl.moves, tc.own...)
			got, onTop := rl.foreign(tc.before, tc.after, 1)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("foreign = %+v, want %+v", got, tc.want)
			}
			if !reflect.DeepEqual(onTop, tc.onTop) {
				t.Errorf("onTop = %v, want %v", onTop, tc.onTop)
			}
		})
	}
}
