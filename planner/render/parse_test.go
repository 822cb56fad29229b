package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/schemas/schemacheck"
)

// TestParseJSONRoundTrip reads every golden plan's JSON form back: each
// renderer gives the same bytes for the plan read back as for the plan
// itself (cadence show of a saved plan prints what plan printed).
func TestParseJSONRoundTrip(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.plan(t)
			var js bytes.Buffer
			if err := JSON(&js, p); err != nil {
				t.Fatal(err)
			}
			back, err := ParseJSON(js.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range formats {
				var want, got bytes.Buffer
				if err := f.render(&want, p); err != nil {
					t.Fatal(err)
				}
				if err := f.render(&got, back); err != nil {
					t.Fatal(err)
				}
				if want.String() != got.String() {
					t.Errorf("%s: the plan read back renders differently:\n got: %s\nwant: %s", f.ext, got.String(), want.String())
				}
			}
		})
	}
}

func TestParseJSONRefuses(t *testing.T) {
	var js bytes.Buffer
	if err := JSON(&js, cases[0].plan(t)); err != nil {
		t.Fatal(err)
	}
	good := js.String()
	for name, doc := range map[string]string{
		"not JSON":       "lot \"a\" {}",
		"other version":  strings.Replace(good, `"format_version": 1`, `"format_version": 99`, 1),
		"bad lot kind":   strings.Replace(strings.Replace(good, `"kind": "agent"`, `"kind": "robot"`, 1), `"kind": "command"`, `"kind": "robot"`, 1),
		"bad dollar sum": strings.Replace(good, `"spent_usd": "0.00"`, `"spent_usd": "lots"`, 1),
	} {
		if doc == good {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		if _, err := ParseJSON([]byte(doc)); err == nil {
			t.Errorf("%s: ParseJSON accepted it", name)
		}
	}
}

// TestParseJSONHeldStatus checks that a held lot's status survives a saved
// plan: cadence show says "failed" where plan did, not "handed back".
func TestParseJSONHeldStatus(t *testing.T) {
	p := cases[5].plan(t)
	for i := range p.Lots {
		if p.Lots[i].ID == "held" {
			p.Lots[i].HeldStatus = state.LotFailed
		}
	}
	var js bytes.Buffer
	if err := JSON(&js, p); err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Validate("plan.schema.json", js.Bytes()); err != nil {
		t.Fatal(err)
	}
	back, err := ParseJSON(js.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	odd := strings.Replace(js.String(), `"held_status": "failed"`, `"held_status": "lost"`, 1)
	if _, err := ParseJSON([]byte(odd)); err == nil || odd == js.String() {
		t.Errorf("ParseJSON accepted held_status \"lost\" (%v)", err)
	}
	var text bytes.Buffer
	if err := Text(&text, back, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := ", 1 failed, 2 blocked"; !strings.Contains(text.String(), want) {
		t.Errorf("the plan read back lacks %q:\n%s", want, text.String())
	}
}
