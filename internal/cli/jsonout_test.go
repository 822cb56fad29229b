package cli

import (
	"encoding"
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/executor/slots"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/state"
)

// machineOutputs are the Go types of cadence's -json outputs (the plan's
// and the graph's are planner/render's; the events of apply -json are
// executor.Event; status -json holds the state, the live waves, the slots
// and the lock's holder).
var machineOutputs = []any{
	listOutput{}, logsOutput{}, stepOutput{}, answerOutput{}, cleanOutput{}, fmtOutput{},
	initOutput{}, statusSlot{}, buildVersion{}, diagsJSON{}, steerOutput{}, control.Request{},
	state.State{}, slots.WaveEntry{}, slots.Holder{}, flock.Holder{}, executor.Event{},
}

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestMachineOutputKeys checks that every field of every struct in a
// machine output, at any depth, has an explicit snake_case json tag (or
// "-"): Go's field names (Index, Held) never reach the output. Map keys are
// data and not checked here (the json_all script checks the documents).
func TestMachineOutputKeys(t *testing.T) {
	for _, v := range machineOutputs {
		for _, bad := range untagged(reflect.TypeOf(v), map[reflect.Type]bool{}) {
			t.Errorf("%T: %s", v, bad)
		}
	}
}

// TestUntaggedFails makes sure the check above can fail.
func TestUntaggedFails(t *testing.T) {
	type inner struct{ Held bool }
	type outer struct {
		OK    []inner `json:"ok"`
		Camel int     `json:"camelCase"`
	}
	if got := untagged(reflect.TypeOf(outer{}), map[reflect.Type]bool{}); len(got) != 2 {
		t.Fatalf("untagged found %v, want Held and camelCase", got)
	}
}

var (
	marshaler     = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textMarshaler = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)

// untagged lists the fields of t (and of the types it holds) that have no
// snake_case json tag.
func untagged(t reflect.Type, seen map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return nil
	}
	seen[t] = true
	var bad []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case name == "" && f.Anonymous:
			// embedded: its fields are promoted
		case !snakeKey.MatchString(name):
			bad = append(bad, t.Name()+"."+f.Name+" has json key "+strconv.Quote(name))
		}
		bad = append(bad, untagged(f.Type, seen)...)
	}
	return bad
}
