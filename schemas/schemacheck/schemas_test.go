package schemacheck_test

import (
	"encoding/json"
	"errors"
	"github.com/cadence-run/cadence/schemas/schemacheck"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/claude"
	"github.com/cadence-run/cadence/schemas"
	"github.com/cadence-run/cadence/spec"
)

const waveSchema = "wave.schema.json"

// decode runs the wave file decoder on doc as a *.hcl.json file in a fresh
// folder that also holds b.md, for file("b.md").
func decode(t *testing.T, doc string) error {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte("Do the thing.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "tpl"), 0o755); err != nil { // templates = "tpl"
		t.Fatal(err)
	}
	reg := agent.NewRegistry(claude.New()) // the agents' settings, as the CLI decodes them
	_, diags := spec.NewLoader().LoadBytes([]byte(doc), filepath.Join(dir, "wave.hcl.json"), spec.Options{AgentKinds: reg.Kinds(), AgentSettings: reg.DecodeSettings})
	if diags.HasErrors() {
		return diags
	}
	return nil
}

// head is a wave and a repo for the lots of the test documents.
const head = `"wave": {"w": {"budget": "1M"}}, "repo": {"api": {"path": "."}, "web": {"path": "../web"}}`

// TestWaveSchemaValid checks documents the decoder accepts: the schema must
// accept them too.
func TestWaveSchemaValid(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"minimal", `{"wave": {"w": {}}}`},
		{"every block and attribute", `{
  "//": "a comment",
  "wave": {"auth-rework": {"//": "c", "budget": "2M", "budget_usd": 40, "max_sessions": 2, "on_quota": "wait", "templates": "tpl"}},
  "defaults": {"//": "c", "agent": "agent.claude", "model": "sonnet", "review_model": "opus", "fix_passes": 0,
    "timeout": "45m", "review_timeout": "25m", "estimate": "2h", "budget": 400000, "precheck": true, "small": false, "on_conflict": "fix"},
  "agent": {
    "claude": {"command": "claude", "permission_mode": "acceptEdits", "allowed_tools": ["Bash", "Edit", "Write"],
      "disallowed_tools": ["Agent", "Bash(git push:*)"], "append_system_prompt": "Be brief.", "max_retries": 0},
    "careful": {"kind": "claude", "permission_mode": "plan", "//": "c"}
  },
  "repo": {"api": {"path": "../api", "base": "main", "test": "go test ./...", "parallel": 2, "changelog": "CHANGELOG.md"}, "web": {"path": "../web"}},
  "lot": {
    "L40": {"//": "c", "repo": "repo.api", "title": "Token store", "brief": "${file(\"b.md\")}"},
    "L41": {"repo": "repo.api", "title": "OAuth", "brief": "Add OAuth.\n", "model": "opus", "review_model": "sonnet",
      "depends_on": ["lot.L40"], "also": ["repo.web"], "budget": "400k", "estimate": "3h", "agent": "agent.careful",
      "fix_passes": 3, "timeout": "1h30m", "review_timeout": "90s", "precheck": false, "small": true, "on_conflict": "hand-back"},
    "docs": {"repo": "repo.api", "run": "make docs", "depends_on": ["lot.L41"], "timeout": "5m", "estimate": "2d", "also": []}
  },
  "locals": {"//": "c", "greeting": "hello", "n": 3},
  "variable": {"model": {"//": "c", "type": "string", "default": "opus", "description": "the write model", "sensitive": true}}
}`},
		{"lots as an array of label objects", `{` + head + `, "lot": [
  {"L40": {"repo": "repo.api", "brief": "x"}},
  {"L41": {"repo": "repo.api", "brief": "y", "depends_on": ["lot.L40"]}, "L42": {"run": "true"}}
]}`},
		{"every labelled block as an array", `{"wave": [{"w": {}}], "repo": [{"api": {"path": "."}}], "agent": [{"x": {"command": "x"}}],
  "variable": [{"v": {"default": 1}}], "lot": [{"a": {"run": "true"}}]}`},
		{"bodies as arrays", `{"wave": {"w": [{"max_sessions": 1}]}, "defaults": [{"model": "opus"}], "repo": {"api": [{"path": "."}]},
  "locals": [{"a": 1}, {"b": "${local.a}"}], "lot": {"a": [{"repo": "repo.api", "brief": "x"}]}}`},
		{"templates", `{
  "variable": {"n": {"default": 3}, "b": {"default": "2M"}, "q": {"default": "wait"}, "t": {"default": "1h"},
    "tools": {"type": "list(string)", "default": ["Bash"]}, "p": {"type": "bool", "default": true}, "usd": {"default": 12.5}},
  "locals": {"mode": "plan"},
  "wave": {"w": {"budget": "${var.b}", "budget_usd": "${var.usd}", "max_sessions": "${var.n}", "on_quota": "${var.q}"}},
  "agent": {"claude": {"allowed_tools": "${var.tools}", "permission_mode": "${local.mode}", "max_retries": "${var.n}"}},
  "repo": {"api": {"path": "${trimspace(\" . \")}", "parallel": "${var.n}"}},
  "defaults": {"fix_passes": "${var.n}", "timeout": "${var.t}", "precheck": "${var.p}", "on_conflict": "%{ if var.p }fix%{ else }hand-back%{ endif }"},
  "lot": {"a": {"repo": "repo.api", "brief": "${file(\"b.md\")}", "budget": "${var.b}", "small": "${var.p}", "estimate": "${var.t}"}}
}`},
		{"numbers and booleans as strings", `{"wave": {"w": {"budget": "1_500_000", "budget_usd": "$12.50", "max_sessions": "3"}},
  "repo": {"api": {"path": ".", "parallel": "2"}},
  "lot": {"a": {"repo": "repo.api", "brief": "x", "fix_passes": "0", "precheck": "true", "budget": "1.5k"}}}`},
		{"dotted lot ids and index references", `{` + head + `, "lot": {
  "v1.2": {"run": "true"},
  "b-2": {"repo": "repo[\"api\"]", "brief": "x", "agent": "agent[\"claude\"]", "depends_on": ["lot[\"v1.2\"]"], "also": ["repo[\"web\"]"]},
  "c": {"run": "true", "depends_on": ["lot.b-2"]}
}}`},
		{"fractional dollars", `{"wave": {"w": {"budget_usd": 0.1, "budget": 1e6}}}`},
		{"command lot without repo", `{"wave": {"w": {}}, "lot": {"a": {"run": "true", "title": "x"}}}`},
		{"names at git's limits", `{"wave": {"w.": {}}, "lot": {"a.locked": {"run": "true"}, "L` + strings.Repeat("x", 242) + `": {"run": "true"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := decode(t, tc.doc); err != nil {
				t.Fatalf("the decoder refuses this document (fix the test): %v", err)
			}
			if err := schemacheck.Validate(waveSchema, []byte(tc.doc)); err != nil {
				t.Errorf("the schema refuses a document the decoder accepts: %v", err)
			}
		})
	}
}

// TestWaveSchemaInvalid checks that the schema refuses bad documents, with an
// error that says where and what, and that the decoder refuses them too.
func TestWaveSchemaInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string // pieces of the error
		// schemaOnly marks documents the decoder accepts: the schema is
		// stricter on purpose.
		schemaOnly bool
	}{
		{"unknown attribute", `{` + head + `, "lot": {"a": {"repo": "repo.api", "brief": "x", "modle": "opus"}}}`,
			[]string{"/lot/a", "additional properties 'modle' not allowed"}, false},
		{"unknown block", `{` + head + `, "lots": {"a": {"run": "true"}}}`,
			[]string{"additional properties 'lots' not allowed"}, false},
		{"both brief and run", `{` + head + `, "lot": {"a": {"repo": "repo.api", "brief": "x", "run": "true"}}}`,
			[]string{"/lot/a", "'oneOf' failed, subschemas 0, 1 matched"}, false},
		{"neither brief nor run", `{` + head + `, "lot": {"a": {"repo": "repo.api"}}}`,
			[]string{"/lot/a", "'oneOf' failed", "missing property 'brief'", "missing property 'run'"}, false},
		{"bad lot id", `{` + head + `, "lot": {"9lives": {"run": "true"}}}`,
			[]string{"invalid propertyName '9lives'"}, false},
		{"bad lot id in an array", `{` + head + `, "lot": [{"a": {"run": "true"}}, {"x/y": {"run": "true"}}]}`,
			[]string{"invalid propertyName 'x/y'"}, false},
		{"comment among lot ids", `{` + head + `, "lot": {"//": "not here", "a": {"run": "true"}}}`,
			[]string{"invalid propertyName '//'"}, false},
		{"max_sessions 0", `{"wave": {"w": {"max_sessions": 0}}}`,
			[]string{"/wave/w/max_sessions", "minimum: got 0, want 1"}, false},
		{"max_sessions \"0\"", `{"wave": {"w": {"max_sessions": "0"}}}`,
			[]string{"/wave/w/max_sessions", "'0' does not match pattern"}, false},
		{"max_sessions fractional", `{"wave": {"w": {"max_sessions": 1.5}}}`,
			[]string{"/wave/w/max_sessions", "want integer"}, false},
		{"parallel 0", `{"wave": {"w": {}}, "repo": {"api": {"path": ".", "parallel": 0}}}`,
			[]string{"/repo/api/parallel", "minimum"}, false},
		{"fix_passes negative", `{` + head + `, "lot": {"a": {"repo": "repo.api", "brief": "x", "fix_passes": -1}}}`,
			[]string{"/lot/a/fix_passes", "minimum"}, false},
		{"on_quota later", `{"wave": {"w": {"on_quota": "later"}}}`,
			[]string{"/wave/w/on_quota", "value must be one of 'suspend', 'wait'"}, false},
		{"on_conflict merge", `{` + head + `, "defaults": {"on_conflict": "merge"}}`,
			[]string{"/defaults/on_conflict", "'hand-back', 'fix'"}, false},
		{"permission_mode yolo", `{"wave": {"w": {}}, "agent": {"claude": {"permission_mode": "yolo"}}}`,
			[]string{"/agent/claude/permission_mode", "'acceptEdits'"}, false},
		{"unknown agent kind", `{"wave": {"w": {}}, "agent": {"other": {"kind": "claud"}}}`,
			[]string{"/agent/other/kind", "'claude'"}, false},
		{"depends_on repo.x", `{` + head + `, "lot": {"a": {"run": "true", "depends_on": ["repo.x"]}}}`,
			[]string{"/lot/a/depends_on/0", "'repo.x' does not match pattern"}, false},
		{"depends_on not a list", `{` + head + `, "lot": {"a": {"run": "true"}, "b": {"run": "true", "depends_on": "lot.a"}}}`,
			[]string{"/lot/b/depends_on", "want array"}, false},
		{"depends_on twice", `{` + head + `, "lot": {"a": {"run": "true"}, "b": {"run": "true", "depends_on": ["lot.a", "lot.a"]}}}`,
			[]string{"/lot/b/depends_on", "items at 0 and 1 are equal"}, false},
		{"also lot.x", `{` + head + `, "lot": {"a": {"repo": "repo.api", "brief": "x", "also": ["lot.a"]}}}`,
			[]string{"/lot/a/also/0", "does not match pattern"}, false},
		{"repo reference as a template", `{` + head + `, "lot": {"a": {"repo": "${repo.api}", "brief": "x"}}}`,
			[]string{"/lot/a/repo", "does not match pattern"}, false},
		{"agent reference to a repo", `{` + head + `, "defaults": {"agent": "repo.api"}}`,
			[]string{"/defaults/agent", "does not match pattern"}, false},
		{"agent lot without repo", `{` + head + `, "lot": {"a": {"brief": "x"}}}`,
			[]string{"/lot/a", "missing property 'repo'"}, false},
		{"command lot with a model", `{` + head + `, "lot": {"a": {"run": "true", "model": "opus"}}}`,
			[]string{"/lot/a/model", "false schema"}, false},
		{"command lot with also", `{` + head + `, "lot": {"a": {"repo": "repo.api", "run": "true", "also": ["repo.web"]}}}`,
			[]string{"/lot/a/also", "maxItems"}, false},
		{"repo without path", `{"wave": {"w": {}}, "repo": {"api": {"base": "main"}}}`,
			[]string{"/repo/api", "missing property 'path'"}, false},
		{"bad repo name", `{"wave": {"w": {}}, "repo": {"my.api": {"path": "."}}}`,
			[]string{"invalid propertyName 'my.api'"}, false},
		{"bad budget", `{"wave": {"w": {"budget": "lots"}}}`,
			[]string{"/wave/w/budget", "'lots' does not match pattern"}, false},
		{"fractional budget", `{"wave": {"w": {"budget": 1.5}}}`,
			[]string{"/wave/w/budget", "want integer"}, false},
		{"negative budget_usd", `{"wave": {"w": {"budget_usd": -1}}}`,
			[]string{"/wave/w/budget_usd", "minimum"}, false},
		{"budget_usd with 7 decimals", `{"wave": {"w": {"budget_usd": "1.1234567"}}}`,
			[]string{"/wave/w/budget_usd", "does not match pattern"}, false},
		{"duration without unit", `{` + head + `, "lot": {"a": {"run": "true", "estimate": "3"}}}`,
			[]string{"/lot/a/estimate", "'3' does not match pattern"}, false},
		{"list of numbers", `{"wave": {"w": {}}, "agent": {"claude": {"allowed_tools": [1]}}}`,
			[]string{"/agent/claude/allowed_tools/0", "want string"}, true},
		{"no wave", `{"repo": {"api": {"path": "."}}}`,
			[]string{"missing property 'wave'"}, false},
		{"two waves", `{"wave": {"a": {}, "b": {}}}`,
			[]string{"/wave", "maxProperties"}, false},
		{"bad wave name", `{"wave": {"-w": {}}}`,
			[]string{"invalid propertyName '-w'"}, false},
		{"two defaults blocks", `{"wave": {"w": {}}, "defaults": [{"model": "a"}, {"model": "b"}]}`,
			[]string{"/defaults", "maxItems"}, false},
		{"empty lot object", `{"wave": {"w": {}}, "lot": {}}`,
			[]string{"/lot", "minProperties"}, false},
		{"variable with unknown attribute", `{"wave": {"w": {}}, "variable": {"v": {"default": 1, "validation": true}}}`,
			[]string{"/variable/v", "additional properties 'validation' not allowed"}, false},
		{"top-level array", `[{"wave": {"w": {}}}]`,
			[]string{"want object"}, true},
		{"null brief", `{` + head + `, "lot": {"a": {"repo": "repo.api", "brief": null}}}`,
			[]string{"/lot/a/brief", "want string"}, false},
		{"null lot", `{` + head + `, "lot": {"a": null}}`,
			[]string{"/lot/a"}, true},
		{"title a number", `{` + head + `, "lot": {"a": {"run": "true", "title": 5}}}`,
			[]string{"/lot/a/title", "want string"}, true},
		{"lot id with two dots", `{` + head + `, "lot": {"a..b": {"run": "true"}}}`,
			[]string{"invalid propertyName 'a..b'", "'not' failed"}, false},
		{"lot id ending in .lock", `{` + head + `, "lot": [{"a.lock": {"run": "true"}}]}`,
			[]string{"invalid propertyName 'a.lock'", "'not' failed"}, false},
		{"lot id ending in a dot", `{` + head + `, "lot": {"c.": {"run": "true"}}}`,
			[]string{"invalid propertyName 'c.'", "'not' failed"}, false},
		{"lot id of 244 bytes", `{` + head + `, "lot": {"L` + strings.Repeat("x", 243) + `": {"run": "true"}}}`,
			[]string{"invalid propertyName", "maxLength"}, false},
		{"wave name ending in .lock", `{"wave": {"w.lock": {}}}`,
			[]string{"invalid propertyName 'w.lock'", "'not' failed"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := schemacheck.Validate(waveSchema, []byte(tc.doc))
			if err == nil {
				t.Fatal("the schema accepts it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if derr := decode(t, tc.doc); (derr == nil) != tc.schemaOnly {
				if tc.schemaOnly {
					t.Errorf("the decoder now refuses it too (%v): drop schemaOnly", derr)
				} else {
					t.Errorf("the decoder accepts a document the schema refuses")
				}
			}
		})
	}
}

// repoRoot is the module root: the folder above this package's.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestWaveFilesValidate checks that every *.hcl.json wave in examples/ and
// spec/testdata/ validates against the schema and decodes without errors.
func TestWaveFilesValidate(t *testing.T) {
	root := repoRoot(t)
	var files []string
	for _, dir := range []string{"examples", filepath.Join("spec", "testdata")} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".hcl.json") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		t.Skip("no *.hcl.json wave files yet")
	}
	sort.Strings(files)
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := schemacheck.Validate(waveSchema, data); err != nil {
				t.Errorf("schema: %v", err)
			}
			if _, diags := spec.NewLoader().LoadFile(path, spec.Options{}); diags.HasErrors() {
				t.Errorf("decode: %v", diags)
			}
		})
	}
}

// TestWaveSchemaDocumented checks the schema's $id and that every property
// has a title and a description, which editors show as help.
func TestWaveSchemaDocumented(t *testing.T) {
	b, err := schemas.FS.ReadFile(waveSchema)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["$id"] != schemas.BaseURL+waveSchema {
		t.Errorf("$id = %v", doc["$id"])
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", doc["$schema"])
	}
	n := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name, p := range props {
					ps, ok := p.(map[string]any)
					if !ok {
						continue // false: a property refused in some case
					}
					n++
					for _, k := range []string{"title", "description"} {
						if s, _ := ps[k].(string); s == "" {
							t.Errorf("%s/properties/%s has no %s", path, name, k)
						}
					}
				}
			}
			for k, c := range v {
				walk(path+"/"+k, c)
			}
		case []any:
			for i, c := range v {
				walk(path+"/"+strconv.Itoa(i), c)
			}
		}
	}
	walk("#", doc)
	if n < 50 {
		t.Errorf("only %d documented properties: the walk missed some", n)
	}
}

// TestWaveSchemaMessages checks that every pattern and enum of the wave
// schema carries what editors show instead of a raw regular expression or
// value list (VS Code's JSON language service: patternErrorMessage for a
// pattern, errorMessage for an enum or a not of a pattern, markdownDescription for the
// hover, with examples), and that the token count's message gives the
// forms a person types.
func TestWaveSchemaMessages(t *testing.T) {
	b, err := schemas.FS.ReadFile(waveSchema)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	patterns, enums := 0, 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			want := []string{}
			if _, ok := v["pattern"]; ok {
				patterns++
				want = append(want, "patternErrorMessage", "markdownDescription")
			}
			if _, ok := v["enum"]; ok {
				enums++
				want = append(want, "errorMessage", "markdownDescription")
			}
			if not, ok := v["not"].(map[string]any); ok && not["pattern"] != nil {
				want = append(want, "errorMessage")
			}
			for _, k := range want {
				if s, _ := v[k].(string); strings.TrimSpace(s) == "" {
					t.Errorf("%s has no %s", path, k)
				}
			}
			if md, ok := v["markdownDescription"].(string); ok && !strings.Contains(md, "`") {
				t.Errorf("%s: markdownDescription without an example in code: %q", path, md)
			}
			for k, c := range v {
				walk(path+"/"+k, c)
			}
		case []any:
			for i, c := range v {
				walk(path+"/"+strconv.Itoa(i), c)
			}
		}
	}
	walk("#", doc)
	if patterns < 25 || enums < 6 {
		t.Errorf("found %d patterns and %d enums: the walk missed some", patterns, enums)
	}
	tokens := doc["$defs"].(map[string]any)["tokens"].(map[string]any)["else"].(map[string]any)["anyOf"].([]any)[0].(map[string]any)
	msg, _ := tokens["patternErrorMessage"].(string)
	for _, form := range []string{"1500000", `"1.5M"`, `"800k"`} {
		if !strings.Contains(msg, form) {
			t.Errorf("the token count's message %q does not show %s", msg, form)
		}
	}
}
