package toolchain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNVM makes an nvm tree under t.TempDir(): v20.1.0, v22.1.0 and
// v22.22.3 with an executable bin/node; v22.30.0 without bin/node;
// v22.40.0 with a bin/node that is not executable; and a stray folder.
func fakeNVM(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	node := filepath.Join(dir, "versions", "node")
	for _, v := range []string{"v20.1.0", "v22.1.0", "v22.22.3"} {
		bin := filepath.Join(node, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"v22.30.0/bin", "v22.40.0/bin", "lts"} {
		if err := os.MkdirAll(filepath.Join(node, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(node, "v22.40.0", "bin", "node"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestNode(t *testing.T) {
	nvm := fakeNVM(t)
	for _, x := range []struct{ nvmrc, want string }{
		{"22", "v22.22.3"},
		{"v22\n", "v22.22.3"},
		{"  22.22 # ours\n", "v22.22.3"},
		{"v22.22.3", "v22.22.3"},
		{"22.1", "v22.1.0"},
		{"20", "v20.1.0"},
		{"v20.1.0\r\n", "v20.1.0"},
	} {
		tc, err := Node(x.nvmrc, nvm)
		if err != nil {
			t.Errorf("%q: %v", x.nvmrc, err)
			continue
		}
		if tc.Version != x.want || tc.Bin != filepath.Join(nvm, "versions", "node", x.want, "bin") || tc.String() != "node "+x.want+" from .nvmrc" {
			t.Errorf("%q: %+v, want %s", x.nvmrc, tc, x.want)
		}
	}
	for _, x := range []struct{ nvmrc, want string }{
		{"18", `no installed Node version matches "18"`},
		{"22.30", `no installed Node version matches "22.30"`}, // no bin/node
		{"22.40", `no installed Node version matches "22.40"`}, // not executable
		{"2", `no installed Node version matches "2"`},         // a prefix of numbers, not of text
		{"lts/*", "aliases such as lts/* are not resolved"},
		{"node", "is not a Node version"},
		{"v22.x", "is not a Node version"},
		{"22.1.0.1", "is not a Node version"},
		{"", "names no version"},
		{"\x00\xff garbage", "is not a Node version"},
	} {
		if tc, err := Node(x.nvmrc, nvm); err == nil || !strings.Contains(err.Error(), x.want) {
			t.Errorf("%q: %+v, %v; want an error with %q", x.nvmrc, tc, err, x.want)
		}
	}
	if _, err := Node("22", filepath.Join(nvm, "missing")); err == nil || !strings.Contains(err.Error(), "no Node version is installed") {
		t.Errorf("missing NVM_DIR: %v", err)
	}
}

func TestResolve(t *testing.T) {
	nvm, repo := fakeNVM(t), t.TempDir()
	if tc, err := Resolve(repo, nvm, ""); tc != nil || err != nil {
		t.Fatalf("no .nvmrc: %+v, %v", tc, err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".nvmrc"), []byte("22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tc, err := Resolve(repo, nvm, ""); err != nil || tc.Version != "v22.22.3" {
		t.Errorf("Resolve: %+v, %v", tc, err)
	}
	// NVM_DIR unset: ~/.nvm.
	home := t.TempDir()
	if err := os.Rename(nvm, filepath.Join(home, ".nvm")); err != nil {
		t.Fatal(err)
	}
	if tc, err := Resolve(repo, "", home); err != nil || tc.Bin != filepath.Join(home, ".nvm", "versions", "node", "v22.22.3", "bin") {
		t.Errorf("Resolve with HOME: %+v, %v", tc, err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".nvmrc"), []byte("lts/iron\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tc, err := Resolve(repo, "", home); err == nil || !strings.HasPrefix(err.Error(), ".nvmrc: ") {
		t.Errorf("alias: %+v, %v", tc, err)
	}
}

// TestResolveHostile: a .nvmrc symlinked out of the repository is refused
// without its target's content reaching the error (the plan shows it), and
// a .nvmrc that is not a version is not echoed unless it looks like one.
func TestResolveHostile(t *testing.T) {
	nvm, repo, secret := fakeNVM(t), t.TempDir(), filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(secret, []byte("https://bob:ghp_tok999@github.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(repo, ".nvmrc")); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(repo, nvm, ""); err == nil || strings.Contains(err.Error(), "ghp_tok999") || !strings.Contains(err.Error(), "outside") {
		t.Errorf("symlink out: %v", err)
	}
	os.Remove(filepath.Join(repo, ".nvmrc"))
	write(t, repo, ".nvmrc", "https://bob:ghp_tok999@github.com\n")
	if _, err := Resolve(repo, nvm, ""); err == nil || strings.Contains(err.Error(), "ghp_tok999") {
		t.Errorf("a credential in .nvmrc: %v", err)
	}
	write(t, repo, ".nvmrc", "lts/iron\n")
	if _, err := Resolve(repo, nvm, ""); err == nil || !strings.Contains(err.Error(), `"lts/iron"`) {
		t.Errorf("an alias: %v", err)
	}
}
