package gitint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// withRemote makes a repository with a bare remote "origin" it pushed to.
func withRemote(t *testing.T) (repo, remote string) {
	t.Helper()
	repo = gittest.NewRepo(t, nil)
	remote = filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, repo, "init", "-q", "--bare", remote)
	gittest.Git(t, repo, "remote", "add", "origin", remote)
	gittest.Git(t, repo, "push", "-q", "origin", "main")
	return repo, remote
}

// push runs a push the way an agent might, with the session's environment.
func push(t *testing.T, dir string, env []string, script string) error {
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(gittest.Env(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s: %s", script, out)
	return err
}

func TestPushGuards(t *testing.T) {
	ctx := context.Background()
	repo, remote := withRemote(t)
	gittest.Commit(t, repo, "local work", map[string]string{"w.txt": "w\n"})
	before := RemoteState(ctx, repo)
	env := PushBlockEnv(ctx, []string{repo}, gittest.Env())
	if len(env) == 0 {
		t.Fatal("no push-blocking entries")
	}
	for _, script := range []string{
		"git push origin HEAD:refs/heads/main",
		"git -C . push origin HEAD:refs/heads/b1",
		"bash -c 'git push origin HEAD:refs/heads/b2'",
		"cd . && env git push origin HEAD:refs/heads/b3",
	} {
		if err := push(t, repo, env, script); err == nil {
			t.Errorf("%q pushed despite the guard", script)
		}
	}
	if RemoteState(ctx, repo) != before {
		t.Error("the remote changed")
	}
	// The pre-push hook refuses too, even with a working push URL.
	remove, err := InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := push(t, repo, []string{"CADENCE_WAVE=w", "CADENCE_LOT=a"}, "git push origin HEAD:refs/heads/b4"); err == nil {
		t.Error("the pre-push hook let a session push")
	}
	if err := push(t, repo, nil, "git push -q origin HEAD:refs/heads/lead"); err != nil {
		t.Errorf("the lead's own push was refused: %v", err)
	}
	if RemoteState(ctx, repo) == before {
		t.Error("a push the state does not see")
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, ours, _ := GuardHook(ctx, repo); ours {
		t.Error("hook left after removal")
	}
	_ = remote
}

func TestGuardHonoursHooksPathAndForeignHooks(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, nil)
	gittest.Git(t, repo, "config", "core.hooksPath", ".githooks")
	remove, err := InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(repo, ".githooks", "pre-push")
	if b, err := os.ReadFile(hook); err != nil || !strings.Contains(string(b), HookMarker) {
		t.Fatalf("hook not in core.hooksPath: %v", err)
	}
	remove()
	os.WriteFile(hook, []byte("#!/bin/sh\necho mine\n"), 0o755)
	if _, err := InstallGuard(ctx, repo); err == nil || !strings.Contains(err.Error(), "does not overwrite") {
		t.Fatalf("foreign hook: %v", err)
	}
	if b, _ := os.ReadFile(hook); string(b) != "#!/bin/sh\necho mine\n" {
		t.Error("the foreign hook was changed")
	}
	if err := RemoveGuard(hook); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hook); err != nil {
		t.Error("RemoveGuard removed a foreign hook")
	}
}

func TestPushBlockEnvContinuesUserConfig(t *testing.T) {
	repo, _ := withRemote(t)
	env := PushBlockEnv(context.Background(), []string{repo}, []string{"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"})
	got := strings.Join(env, " ")
	if !strings.Contains(got, "GIT_CONFIG_KEY_2=remote.origin.pushurl") || !strings.Contains(got, "GIT_CONFIG_COUNT=3") {
		t.Errorf("env = %v", env)
	}
}
