package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
)

// TestE2ESteerKeyUnreadable: a sandboxed session of the real CLI cannot
// read the live apply's steering key (docs/running.md, Only the lead
// steers): a Bash `cat` of the keys folder's files fails (the sandbox's
// denyRead shows the folder empty), so a session cannot sign a request.
// Without the denyRead the same `cat` printed the key.
func TestE2ESteerKeyUnreadable(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {
			fakeapi.Bash(`cat "$KEYS"/steer-*`),
			commit("f.txt", "f"),
			writeDone("added f.txt"),
		},
		"a-review0": {review("conform")},
	}, waveOpts{})
	home := ""
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "CADENCE_HOME="); ok {
			home = v
		}
	}
	e.env = append(e.env, "KEYS="+filepath.Join(home, "keys"))
	r := e.apply()
	r.wantCode(t, 0)
	reqs := e.turns("a-implement0")
	if len(reqs) < 2 {
		t.Fatalf("%d implement requests", len(reqs))
	}
	tr := reqs[1].ToolResults()
	res := tr[len(tr)-1]
	t.Logf("cat → error %v: %s", res.IsError, res.Text)
	if !res.IsError || regexp.MustCompile(`[0-9a-f]{64}`).MatchString(res.Text) {
		t.Errorf("the session read the steering key: %s", res.Text)
	}
}
