package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2EUXExample: the UX example (examples/ux) as a user runs it, its
// setup.sh and wave file, with the real Claude CLI against the fake API,
// the real chromium and Playwright MCP server, and the example's node app
// started by cadence: the visible lot goes implement → test → UX review
// (verified: the browser connected, a screenshot kept) → code review →
// integrated, and nothing is left running. The copy's app port is a free
// one and its briefs carry the fake API's markers; nothing else changes.
func TestE2EUXExample(t *testing.T) {
	server, chromium := fakeapi.FindBrowser(t)
	e := newE2E(t, map[string]fakeapi.Script{
		"greeting-implement0": implementScript(),
		"greeting-ux0":        fakeapi.UXReview("conform"),
		"greeting-review0":    {review("conform")},
	}, waveOpts{})
	e.env = append(e.env, "CADENCE_PLAYWRIGHT_MCP="+server, "CADENCE_CHROMIUM="+chromium)

	dir := filepath.Join(e.dir, "ux")
	if out, err := exec.Command("cp", "-R", "../../examples/ux", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the example: %v\n%s", err, out)
	}
	setup := exec.Command("sh", filepath.Join(dir, "setup.sh"))
	setup.Env = e.env
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("setup.sh: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	src, err := os.ReadFile(filepath.Join(dir, "wave.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	wave := strings.ReplaceAll(string(src), "18431", port)
	wave = strings.Replace(wave, "max_sessions = 1", "max_sessions = 1\n  templates = \"templates\"", 1)
	if out, err := exec.Command("cp", "-R", filepath.Join(e.dir, "templates"), filepath.Join(dir, "templates")).CombinedOutput(); err != nil {
		t.Fatalf("copy the marked briefs: %v\n%s", err, out)
	}
	if wave == string(src) || !strings.Contains(wave, "templates") {
		t.Fatal("the example's wave file changed: this test no longer knows how to point it at a free port and the marked briefs")
	}
	e.wave = filepath.Join(dir, "wave.hcl")
	e.writeFile(e.wave, wave)

	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `greeting ux \(opus\) started`, `Wave "ux": 1 of 1 lots done`)
	g := e.lot(e.state(), "greeting")
	ux := stepsOf(g, state.StepUX)
	if len(ux) != 1 || ux[0].NotVerified != "" || len(ux[0].Screenshots) == 0 || g.Status != state.LotDone {
		t.Fatalf("steps %s, status %s, ux %+v", steps(g), g.Status, ux)
	}
	e.noneLeft()
}
