package toolchain

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeMise answers `mise ls --current --json` and `mise env --json` with
// the given outputs (as real mise prints them), and counts its calls.
type fakeMise struct {
	ls, env string
	err     error
	calls   []string
}

func (f *fakeMise) run(dir string, args ...string) ([]byte, error) {
	f.calls = append(f.calls, strings.Join(args, " "))
	if f.err != nil {
		return nil, f.err
	}
	if args[0] == "ls" {
		return []byte(f.ls), nil
	}
	return []byte(f.env), nil
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// miseLs is `mise ls --current --json` for a repository at dir whose
// .tool-versions asks for node 20 and python 3.12 (python installed only
// when pyOK), and a global config's jq (missing: not the repo's).
func miseLs(dir string, pyOK bool) string {
	ok := "false"
	if pyOK {
		ok = "true"
	}
	return `{
  "jq": [{"version": "1.7.1", "requested_version": "1.7", "install_path": "/m/installs/jq/1.7.1",
          "source": {"type": "mise.toml", "path": "/home/u/.config/mise/config.toml"}, "installed": false, "active": false}],
  "node": [{"version": "20.11.1", "requested_version": "20", "install_path": "/m/installs/node/20.11.1",
            "source": {"type": ".tool-versions", "path": "` + dir + `/.tool-versions"}, "installed": true, "active": true},
           {"version": "18.0.0", "install_path": "/m/installs/node/18.0.0", "installed": true, "active": false}],
  "python": [{"version": "3.12.2", "requested_version": "3.12", "install_path": "/m/installs/python/3.12.2",
              "source": {"type": ".tool-versions", "path": "` + dir + `/.tool-versions"}, "installed": ` + ok + `, "active": true}]
}`
}

const miseEnv = `{
  "JAVA_HOME": "/m/installs/java/21",
  "MISE_SHELL": "bash",
  "HOME": "/elsewhere",
  "PATH": "/m/installs/node/20.11.1/bin:/m/installs/python/3.12.2/bin:/usr/local/bin:/usr/bin:/bin"
}`

// TestMise: a .tool-versions resolves through mise to the repository's
// tools (installed), the PATH folders mise puts before the inherited PATH
// and its other variables (not HOME nor its own); a tool of the
// repository's file that is not installed, mise missing or failing, or
// output that is not JSON, cannot be resolved. A repository without a
// mise file does not run mise.
func TestMise(t *testing.T) {
	dir := t.TempDir()
	f := &fakeMise{}
	if r, err := ResolveMise(dir, f.run, "/usr/bin:/bin"); r != nil || err != nil || len(f.calls) > 0 {
		t.Fatalf("no mise file: %+v %v, calls %v", r, err, f.calls)
	}
	write(t, dir, ".tool-versions", "node 20\npython 3.12\n")
	f = &fakeMise{ls: miseLs(dir, true), env: miseEnv}
	r, err := ResolveMise(dir, f.run, "/usr/local/bin:/usr/bin:/bin")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ls --current --json", "env --json"}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %v, want %v", f.calls, want)
	}
	if want := []string{"/m/installs/node/20.11.1/bin", "/m/installs/python/3.12.2/bin"}; !reflect.DeepEqual(r.Path, want) {
		t.Errorf("path %v, want %v", r.Path, want)
	}
	if want := map[string]string{"JAVA_HOME": "/m/installs/java/21"}; !reflect.DeepEqual(r.Env, want) {
		t.Errorf("env %v, want %v", r.Env, want)
	}
	if s := r.String(); s != "node 20.11.1, python 3.12.2 from .tool-versions (mise)" {
		t.Errorf("string %q", s)
	}
	if len(r.Toolchains) != 2 || r.Toolchains[0].Tool != "node" || r.Toolchains[1].Version != "3.12.2" {
		t.Errorf("toolchains %+v", r.Toolchains)
	}

	for name, x := range map[string]struct {
		run  MiseRunner
		want string
	}{
		"missing tool": {(&fakeMise{ls: miseLs(dir, false), env: miseEnv}).run, ".tool-versions: mise: python 3.12 is not installed: mise install python@3.12"},
		"no mise":      {nil, ".tool-versions: mise is not installed (not found on PATH)"},
		"mise fails":   {(&fakeMise{err: errors.New("exit status 1: mise ERROR Config files in /r/mise.toml are not trusted")}).run, "mise ls --current --json failed: exit status 1: mise ERROR Config files in /r/mise.toml are not trusted"},
		"not json":     {(&fakeMise{ls: "node 20.11.1", env: miseEnv}).run, "printed no JSON object of tools"},
		"env not json": {(&fakeMise{ls: miseLs(dir, true), env: "export PATH=/x"}).run, "mise env --json printed no JSON object of variables"},
	} {
		r, err := ResolveMise(dir, x.run, "/usr/bin")
		if err == nil || !strings.Contains(err.Error(), x.want) || r != nil {
			t.Errorf("%s: %+v %v, want an error with %q", name, r, err, x.want)
		}
	}
}

// TestRepo: a repository with a .nvmrc and a mise.toml gets both, Node's
// folder first; one with neither gets nil; an unresolvable one an error.
func TestRepo(t *testing.T) {
	nvm := fakeNVM(t)
	dir := t.TempDir()
	if r, err := Repo(dir, Options{NVMDir: nvm}); r != nil || err != nil {
		t.Fatalf("no file: %+v %v", r, err)
	}
	write(t, dir, ".nvmrc", "22\n")
	write(t, dir, "mise.toml", "[tools]\ngo = \"1.22\"\n")
	f := &fakeMise{
		ls: `{"go": [{"version": "1.22.5", "requested_version": "1.22", "install_path": "/m/go/1.22.5",
		      "source": {"type": "mise.toml", "path": "` + dir + `/mise.toml"}, "installed": true, "active": true}]}`,
		env: `{"PATH": "/m/go/1.22.5/bin:/usr/bin", "GOROOT": "/m/go/1.22.5"}`,
	}
	r, err := Repo(dir, Options{NVMDir: nvm, Mise: f.run, Path: "/usr/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(nvm, "versions", "node", "v22.22.3", "bin"), "/m/go/1.22.5/bin"}; !reflect.DeepEqual(r.Path, want) {
		t.Errorf("path %v, want %v", r.Path, want)
	}
	if s := r.String(); s != "node v22.22.3 from .nvmrc; go 1.22.5 from mise.toml (mise)" {
		t.Errorf("string %q", s)
	}
	if r.Env["GOROOT"] != "/m/go/1.22.5" {
		t.Errorf("env %v", r.Env)
	}
	if _, err := Repo(dir, Options{NVMDir: nvm}); err == nil || !strings.Contains(err.Error(), "mise.toml: mise is not installed") {
		t.Errorf("without mise: %v", err)
	}
	write(t, dir, ".nvmrc", "18\n")
	if _, err := Repo(dir, Options{NVMDir: nvm, Mise: f.run}); err == nil || !strings.Contains(err.Error(), `.nvmrc: no installed Node version matches "18"`) {
		t.Errorf("bad .nvmrc: %v", err)
	}
}

// TestMiseEnvFiltered: what `mise env` says that would change how every
// process runs (LD_*, BASH_ENV), where the agent connects (ANTHROPIC_*,
// CLAUDE_*), or a relative PATH folder (it would resolve in the lot's
// worktree) is not passed on.
func TestMiseEnvFiltered(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".tool-versions", "node 20\npython 3.12\n")
	f := &fakeMise{ls: miseLs(dir, true), env: `{"PATH": "relbin:/m/bin:/usr/bin", "LD_PRELOAD": "/x.so", "BASH_ENV": "/x",
  "ANTHROPIC_BASE_URL": "http://evil", "CLAUDE_CONFIG_DIR": "/x", "JAVA_HOME": "/j"}`}
	res, err := ResolveMise(dir, f.run, "/usr/bin")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Path, []string{"/m/bin"}) || !reflect.DeepEqual(res.Env, map[string]string{"JAVA_HOME": "/j"}) {
		t.Errorf("path %q env %v", res.Path, res.Env)
	}
}
