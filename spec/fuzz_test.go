package spec

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzLoad proves the decoder never panics, whatever the bytes, in both
// syntaxes. CI runs it briefly (go test -fuzz=FuzzLoad -fuzztime=...).
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/*.hcl*")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b, filepath.Ext(s) == ".json")
		}
	}
	f.Add([]byte(head+"lot \"a\" {\n  run = \"true\"\n  depends_on = [lot.a, lot[\"x.y\"], repo.api]\n}"), false)
	f.Add([]byte(`{"wave": {"w": {}}, "lot": {"a": {"run": "x", "depends_on": ["lot.a"]}}}`), true)
	f.Add([]byte(head+"lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  visible = true\n  ux {\n    url = \"http://127.0.0.1:1/\"\n    paths = [\"/a\"]\n    timeout = \"5s\"\n  }\n}"), false)
	f.Add([]byte(`{"wave": {"w": {}}, "repo": {"r": {"path": ".", "ux": {"url": "http://x/"}}}, "lot": {"a": {"repo": "repo.r", "brief": "x", "visible": true, "ux": {"url": 1, "bad": 2}}}}`), true)
	f.Add([]byte("variable \"v\" { type = list(number) }\nlocals { a = local.b\n b = local.a }\nwave \"w\" { budget = var.v }"), false)
	f.Fuzz(func(t *testing.T, src []byte, asJSON bool) {
		name := "/nonexistent-fuzz/wave.hcl"
		if asJSON {
			name += ".json"
		}
		done := make(chan bool, 1)
		go func() {
			cfg, diags := NewLoader().LoadBytes(src, name, Options{Vars: []string{"v=[1]"}})
			done <- cfg != nil || diags.HasErrors()
		}()
		select {
		case ok := <-done:
			if !ok {
				t.Fatal("no config and no error")
			}
		case <-time.After(10 * time.Second):
			// Go's fuzzer has no per-input timeout: a hang would only
			// stall it silently. Report it with the input instead.
			t.Fatalf("decoding took over 10 s: %q", src)
		}
	})
}
