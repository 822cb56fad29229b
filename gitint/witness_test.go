package gitint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// report runs the witness client (this test binary, a child of the test
// process) with the report lines and returns its answer.
func report(t *testing.T, sock, lines string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, WitnessCommand, sock)
	cmd.Stdin = strings.NewReader(lines)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("witness client: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// The witness believes a reporter that does not run below the guard's
// owner and records its moves; the report of a process below the owner
// (a step posing as the lead, whatever it says) is refused, adds nothing,
// and is handed out once as a refusal.
func TestWitnessRefusesSteps(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, nil)
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	common, err := tgit().commonDir(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	begin := time.Now()
	if got := report(t, witnessPath(common), a+" "+b+" refs/heads/main\n"+a+" "+b+" refs/remotes/o/x\nnonsense\n"); got != witnessOK {
		t.Fatalf("the lead's report: %q", got)
	}
	moves := OutsideMoves(common, begin)
	if len(moves) != 1 || moves[0].RefMove != (RefMove{Ref: "refs/heads/main", Old: a, New: b}) {
		t.Fatalf("recorded %+v, want refs/heads/main %s -> %s only", moves, a, b)
	}
	if got := OutsideMoves(common, time.Now().Add(time.Minute)); len(got) != 0 {
		t.Errorf("moves received before since: %+v", got)
	}

	// This test process plays cadence: its children are steps.
	guardOwner = os.Getpid
	defer func() { guardOwner = func() int { return 0 } }()
	if _, err := tgit().InstallGuard(ctx, repo); err != nil {
		t.Fatal(err)
	}
	if got := report(t, witnessPath(common), b+" "+c+" refs/heads/main\n"); !strings.HasPrefix(got, witnessRefused) {
		t.Fatalf("a step's report: %q", got)
	}
	if got := OutsideMoves(common, begin); len(got) != 1 {
		t.Fatalf("a step's report was recorded: %+v", got)
	}
	refused := Refusals(common)
	if len(refused) != 1 || len(refused[0].Moves) != 1 || refused[0].Moves[0] != (RefMove{Ref: "refs/heads/main", Old: b, New: c}) || refused[0].Pid <= 0 {
		t.Fatalf("refusals %+v", refused)
	}
	if !strings.Contains(refused[0].String(), "posed as the lead") {
		t.Errorf("refusal says %q", refused[0].String())
	}
	if again := Refusals(common); len(again) != 0 {
		t.Errorf("a refusal handed out twice: %+v", again)
	}
}

// A repository whose socket path is too long for sun_path is reached
// through its folder's descriptor; the socket goes with the guard, and a
// lead's commit after that reports nothing and goes through.
func TestWitnessLongPath(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), strings.Repeat("long-folder-name-", 6))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "app")
	gittest.Git(t, dir, "init", "-q", "-b", "main", "app")
	gittest.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	common, err := tgit().commonDir(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(witnessPath(common)) <= maxSunPath {
		t.Fatalf("the socket path %s is short", witnessPath(common))
	}
	begin := time.Now()
	if err := commitOnMain(t, repo, "lead.txt"); err != nil {
		t.Fatal(err)
	}
	now := strings.TrimSpace(gittest.Git(t, repo, "rev-parse", "main"))
	if moves := OutsideMoves(common, begin); len(moves) != 1 || moves[0].New != now {
		t.Fatalf("recorded %+v, want main's move to %s", moves, now)
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(witnessPath(common)); !os.IsNotExist(err) {
		t.Fatalf("the socket is left: %v", err)
	}
	if err := commitOnMain(t, repo, "after.txt"); err != nil {
		t.Fatalf("the lead's commit after the wave: %v", err)
	}
}

// A socket file a killed cadence left is replaced by the next install,
// and removed by RemoveGuardDir (cadence clean) when no witness of this
// process listens there.
func TestWitnessStaleSocket(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, nil)
	common, err := tgit().commonDir(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	sock := witnessPath(common)
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sock, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if got := report(t, sock, ""); got != witnessOK {
		t.Fatalf("answer %q", got)
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sock, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tgit().RemoveGuardDir(ctx, common); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("the stale socket is left: %v", err)
	}
}
