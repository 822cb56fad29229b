package claude

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSandboxCache(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/home/me"}, "/home/me/.cache/cadence/sandbox"},
		{[]string{"HOME=/home/me", "XDG_CACHE_HOME=/var/cache/me"}, "/var/cache/me/cadence/sandbox"},
		{[]string{"HOME=/home/me", "XDG_CACHE_HOME=rel"}, "/home/me/.cache/cadence/sandbox"},
		{nil, ""},
	} {
		if got := sandboxCache(tc.env); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestCacheEnv(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "GOFLAGS=-buildvcs=false", "GOPROXY=off"}
	got := cacheEnv(env, "/c")
	for _, want := range []string{"XDG_CACHE_HOME=/c", "GOCACHE=/c/go-build", "GOMODCACHE=/c/go-mod",
		"GOFLAGS=-buildvcs=false -modcacherw", "npm_config_cache=/c/npm"} {
		if !slices.Contains(got, want) {
			t.Errorf("lacks %s: %q", want, got)
		}
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "GOPROXY=") }) {
		t.Errorf("a proxy without a module cache: %q", got)
	}
	// With modules downloaded already, they come from the user's cache
	// first, then from the user's proxies.
	dl := filepath.Join(home, "go", "pkg", "mod", "cache", "download")
	os.MkdirAll(dl, 0o755)
	if got := cacheEnv(env, "/c"); !slices.Contains(got, "GOPROXY=file://"+dl+",off") {
		t.Errorf("proxy: %q", got)
	}
	if got := cacheEnv([]string{"HOME=" + home}, "/c"); !slices.Contains(got, "GOPROXY=file://"+dl+",https://proxy.golang.org,direct") {
		t.Errorf("default proxy: %q", got)
	}
}

func TestUserModCache(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h"}, "/h/go/pkg/mod"},
		{[]string{"HOME=/h", "GOPATH=/gp:/other"}, "/gp/pkg/mod"},
		{[]string{"HOME=/h", "GOPATH=/gp", "GOMODCACHE=/mc"}, "/mc"},
		{nil, ""},
	} {
		if got := userModCache(tc.env); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.env, got, tc.want)
		}
	}
}
