package schemacheck_test

import (
	"encoding/json"
	"fmt"
	"github.com/cadence-run/cadence/schemas/schemacheck"
	"strings"
	"testing"
)

// agree feeds each value to the wave decoder and to the schema, as the
// value of the attribute at path (a JSON document with "%s" where the value
// goes), and reports every value on which they disagree. looser lists the
// values the schema is known to accept while the decoder refuses them
// (what a pattern cannot see: magnitudes); they must stay so.
func agree(t *testing.T, doc string, valid, invalid, looser []any) {
	t.Helper()
	agreeStricter(t, doc, valid, invalid, looser, nil)
}

// agreeStricter is agree with the values the decoder is known to accept
// while the schema refuses them: stricter must stay so.
func agreeStricter(t *testing.T, doc string, valid, invalid, looser, stricter []any) {
	t.Helper()
	check := func(v any, wantDecoder, wantSchema bool) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		d := fmt.Sprintf(doc, b)
		derr := decode(t, d)
		serr := schemacheck.Validate(waveSchema, []byte(d))
		if (derr == nil) != wantDecoder {
			t.Errorf("%s: decoder accepts %v, want %v (%v)", b, derr == nil, wantDecoder, derr)
		}
		if (serr == nil) != wantSchema {
			t.Errorf("%s: schema accepts %v, want %v (%v)", b, serr == nil, wantSchema, serr)
		}
	}
	for _, v := range valid {
		check(v, true, true)
	}
	for _, v := range invalid {
		check(v, false, false)
	}
	for _, v := range looser {
		check(v, false, true)
	}
	for _, v := range stricter {
		check(v, true, false)
	}
}

// spaces are the white space spec's parsers trim around a value
// (strings.TrimSpace: unicode.White_Space), a few of them.
const spaces = " \t\n\v\f\r\u0085\u00a0\u2003\u3000"

// TestTokensPattern checks that the schema's token count accepts exactly
// what spec.ParseTokens accepts: the issue found "2m" and "1G" passing
// the schema and failing cadence.
func TestTokensPattern(t *testing.T) {
	valid := []any{0, 1, 1500000, 1e6, 2.0,
		"0", "1", "007", "1500000", "1_500_000", "_1", "1_", "1__0",
		"2M", "1.5M", "0.5M", ".5M", "1.000001M", "1.5000000M", "2_M", "2M_", "1_000k",
		"800k", "800K", "1.5k", "1.234k", "1.2340k", ".5k", "1.k", "1.",
		"1.0", "1.000", "0.0", ".0", "00.00",
		" 2M", "2M ", spaces + "800k" + spaces, " _2M_ ",
		"-0", "-0k", "-.0", "-0.", "-00.00M", "_-_0",
	}
	invalid := []any{-1, 1.5, 0.5, "1.5", "0.5", "", " ", "k", "M", "K", ".", "-", "-.", "_", "-k",
		"2m", "1G", "1g", "1B", "1T", "2kk", "2MM", "2kM", "2Mk", "1.0005k", "1.2345k", "1.0000005M", "1.5.5", "1..0",
		"-1", "-1k", "-0.5M", "+1", "--0", "1e6", "1E6", "0x10", "1,000", "1 000", "2 M", "_ 2M", "2M _", "2M\u200b",
		"١٢", "abc", "lots", "2M!", "\u00a0_\u00a0",
		true, []any{"1"},
	}
	looser := []any{"10000000000000", "99999999999999999999k", "9999999999999M"}
	agree(t, `{"wave": {"w": {"budget": %s}}}`, valid, invalid, looser)
	// a lot's budget reads the same way
	agree(t, `{`+head+`, "lot": {"a": {"repo": "repo.api", "brief": "x", "budget": %s}}}`,
		[]any{"400k", "0.4M", 400000}, []any{"400m", "1G", "4e5"}, nil)
}

// TestDurationPattern checks the schema's duration against
// spec.ParseDuration and the decoder's "longer than zero".
func TestDurationPattern(t *testing.T) {
	valid := []any{"45m", "3h", "1h30m", "90s", "500ms", "1us", "1µs", "1μs", "10ns", "1.5h", ".5h", "1.h", "1h0m", "0h5m",
		"2d", "2d3h", "2d0", "1d-0s", "0d5m", "+0d5m", "-0d5m", "0001d", "9999d", "+2d", "+45m",
		spaces + "45m" + spaces, "1h2m3s4ms5us6ns",
	}
	invalid := []any{"45", "0", "0s", "0m0s", "0.0h", "-5m", "-0s", "5x", "45M", "1H", "1d0.5", "2 d", "d", "d5m", "1 h", "10000d",
		"1.5d", "2d3d", "1h2d", "0d", "-1d", "2d-5m", "", " ", "h", ".h", "1h 30m", "1h_30m", "1e3s", "++5m",
		45, 2700, true,
	}
	looser := []any{"0.1ns", "9999999999h"}
	agree(t, `{`+head+`, "lot": {"a": {"run": "true", "estimate": %s}}}`, valid, invalid, looser)
	agree(t, `{"wave": {"w": {}}, "defaults": {"timeout": %s, "review_timeout": "25m"}}`, []any{"45m", "2d", "0", "0s", "0m0s"}, []any{"45", "-5m", "0d"}, nil)
}

// TestUSDPattern checks the schema's dollar amount against spec.ParseUSD.
func TestUSDPattern(t *testing.T) {
	valid := []any{0, 40, 12.5, 0.1, 3.125, 0.000001, 1e3,
		"0", "40", "12.50", "$3.125", "$40", ".5", "1.", "0.000001", "1.1234560", "$.5",
		spaces + "$40" + spaces, "-0", "$-0", "-.0",
	}
	invalid := []any{-1, -0.5, 0.0000001, 1.1234567,
		"", "$", "$$1", "-1", "$-1", "1.1234567", "1,50", "1_000", "$ 40", "40$", "USD 40", "4e1", "+1", ".", "-", "40 $", "12.5.0",
		true,
	}
	agree(t, `{"wave": {"w": {"budget_usd": %s}}}`, valid, invalid, nil)
}

// TestSchemaKeyAccepted checks that "$schema" is accepted by the schema and
// by the decoder, and that it must be a string for the schema.
func TestSchemaKeyAccepted(t *testing.T) {
	doc := `{"$schema": "https://cadence.run/schemas/wave.schema.json", "wave": {"w": {}}}`
	if err := schemacheck.Validate(waveSchema, []byte(doc)); err != nil {
		t.Errorf("schema: %v", err)
	}
	if err := decode(t, doc); err != nil {
		t.Errorf("decoder: %v", err)
	}
	if err := schemacheck.Validate(waveSchema, []byte(`{"$schema": 1, "wave": {"w": {}}}`)); err == nil || !strings.Contains(err.Error(), "/$schema") {
		t.Errorf("a $schema that is not a string: %v", err)
	}
}

// TestWholePatterns checks the schema's whole numbers (fix_passes: at
// least 0; max_sessions, parallel: at least 1) against the decoder. A
// string there is converted to a number as HCL converts it (go-cty), which
// also reads "+2", "2.0" and "1e1": the schema asks for plain digits.
func TestWholePatterns(t *testing.T) {
	agreeStricter(t, `{"wave": {"w": {}}, "defaults": {"fix_passes": %s}}`,
		[]any{0, 3, "0", "3", "03"},
		[]any{-1, 1.5, "-1", "1.5", "x", "", " 2", "1_0", "0x2", true}, nil,
		[]any{"+2", "2.0", "1e1"})
	agreeStricter(t, `{"wave": {"w": {"max_sessions": %s}}}`,
		[]any{1, 4, "1", "4", "04"},
		[]any{0, -1, 1.5, "0", "00", "-1", "x", "", "2 ", 99999999999},
		[]any{"99999999999"}, []any{"+2", "2.0"})
	agree(t, `{"wave": {"w": {}}, "repo": {"api": {"path": ".", "parallel": %s}}}`,
		[]any{1, "2"}, []any{0, "0", "two"}, nil)
}
