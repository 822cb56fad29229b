package openai

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CLIVersion is the Codex CLI version the tests are written against.
const CLIVersion = "0.171.0"

// CLIInstallDir is where CI installs the CLI, relative to the repository
// root (.ci/test).
const CLIInstallDir = ".cache/codex"

// CLIEnvVar names the environment variable that, when set, gives the path
// of the codex binary to test with.
const CLIEnvVar = "CADENCE_TEST_CODEX"

// Provider is the name of the model provider CLIEnv's config.toml
// defines for the fake (an agent's provider setting).
const Provider = "fake"

// KeyVar is the variable the fake provider reads its API key from.
const KeyVar = "FAKE_OPENAI_KEY"

// FindCLI returns the codex binary for end-to-end tests: $CADENCE_TEST_CODEX,
// else <repo root>/.cache/codex/node_modules/.bin/codex. When it is
// missing the test fails naming the install command, or is skipped with
// CADENCE_E2E=skip.
func FindCLI(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(CLIEnvVar); p != "" {
		return p
	}
	wd, _ := os.Getwd()
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, CLIInstallDir, "node_modules", ".bin", "codex")
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o111 != 0 {
				return p
			}
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	msg := "fakeapi/openai: codex CLI not found; install it from the repository root with `npm install --prefix " +
		CLIInstallDir + " @openai/codex@" + CLIVersion + "`, or set " + CLIEnvVar
	if os.Getenv("CADENCE_E2E") == "skip" {
		t.Skip("SKIP end-to-end test: " + msg)
	}
	t.Fatal(msg + " (or set CADENCE_E2E=skip)")
	return ""
}

// CLIEnv returns a whole, explicit environment for running the CLI against
// srv: HOME, CODEX_HOME and TMPDIR fresh folders of the test (CODEX_HOME
// not under TMPDIR: the CLI refuses to make its sandbox helper there), a
// $CODEX_HOME/config.toml that defines the provider Provider (base_url
// srv, wire_api responses, its key in KeyVar), PATH and a git identity.
// Each override "KEY=VALUE" replaces or adds a variable. Call it once per
// thread that is resumed (the rollout files are in CODEX_HOME).
func CLIEnv(t testing.TB, srv *Server, overrides ...string) []string {
	t.Helper()
	base := t.TempDir()
	home, codexHome, tmp := filepath.Join(base, "home"), filepath.Join(base, "codex"), filepath.Join(base, "tmp")
	for _, d := range []string{home, codexHome, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config := "[model_providers." + Provider + "]\nname = \"" + Provider + "\"\nbase_url = \"" + srv.URL() +
		"\"\nenv_key = \"" + KeyVar + "\"\nwire_api = \"responses\"\n\n[analytics]\nenabled = false\n"
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "TMPDIR=" + tmp, "PATH=" + os.Getenv("PATH"),
		KeyVar + "=sk-fake", "GIT_AUTHOR_NAME=cadence test", "GIT_AUTHOR_EMAIL=test@cadence.invalid",
		"GIT_COMMITTER_NAME=cadence test", "GIT_COMMITTER_EMAIL=test@cadence.invalid"}
	for _, kv := range overrides {
		k, _, _ := strings.Cut(kv, "=")
		kept := env[:0]
		for _, e := range env {
			if ek, _, _ := strings.Cut(e, "="); ek != k {
				kept = append(kept, e)
			}
		}
		env = append(kept, kv)
	}
	return env
}
