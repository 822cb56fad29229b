//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2ELongBrief: a brief of 146 KiB (`brief = file("spec.md")`, over
// Linux's 128 KiB limit of one argument) reaches the API whole, in the
// implement and the review session, and the lot ends done: the brief goes
// on the CLI's standard input, since on its command line exec fails with
// "argument list too long".
func TestE2ELongBrief(t *testing.T) {
	t.Parallel()
	fakeapi.FindCLI(t)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-review0":    {review("conform")},
	}, waveOpts{})
	spec := longSpec(146 << 10)
	e.writeFile(filepath.Join(e.dir, "spec.md"), spec)
	e.editWave(`brief = "Add the file f.txt."`, `brief = file("spec.md")`)

	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	if a := e.lot(e.state(), "a"); a.Status != state.LotDone {
		t.Errorf("lot a %s: %s", a.Status, a.Cause)
	}
	for _, marker := range []string{"a-implement0", "a-review0"} {
		reqs := e.turns(marker)
		if len(reqs) == 0 {
			t.Fatalf("no %s request", marker)
		}
		if got := promptText(t, reqs[0]); !strings.Contains(got, spec) {
			t.Errorf("%s: the API got a prompt of %d bytes without the whole brief of %d bytes", marker, len(got), len(spec))
		}
	}
}

// longSpec is a Markdown text of n bytes or a little more, every line
// numbered (a cut anywhere shows).
func longSpec(n int) string {
	var b strings.Builder
	b.WriteString("# Spec\n\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "- requirement %05d: the widget keeps its promise number %d.\n", i, i)
	}
	return b.String()
}

// promptText is the text of the first user message of a request: the
// CLI's reminders and the prompt.
func promptText(t *testing.T, r fakeapi.Request) string {
	t.Helper()
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Messages) == 0 {
		t.Fatalf("request body: %v", err)
	}
	var s string
	if json.Unmarshal(body.Messages[0].Content, &s) == nil {
		return s
	}
	var blocks []struct {
		Type, Text string
	}
	_ = json.Unmarshal(body.Messages[0].Content, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}
