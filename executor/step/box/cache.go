package box

import (
	"os"
	"path/filepath"
	"strings"
)

// The box's $HOME is read-only, and so are the build tools' caches there
// (`go build` fails at once, `npm install` cannot write ~/.npm). Making
// those writable would let a step plant a build result that the lead's
// own builds then run, outside the box. So a boxed step's tools get the
// caches of sandboxed agent sessions (executor/agent/claude, cache.go):
// one folder only sandboxes use, writable in the box, kept between steps.

// CacheEnv returns the sandbox cache folder of steps run with env
// (<XDG_CACHE_HOME, else $HOME/.cache>/cadence/sandbox; "" without
// either, then no entries) and the environment entries that point the
// build tools at it (after env, they win):
//
//	XDG_CACHE_HOME=<cache>
//	GOCACHE=<cache>/go-build
//	GOMODCACHE=<cache>/go-mod
//	GOPROXY=file://<the user's module cache>/cache/download,<the user's GOPROXY>
//	GOFLAGS=<the user's GOFLAGS> -modcacherw
//	npm_config_cache=<cache>/npm
//	TMPDIR=/tmp  (the box's own)
//
// The GOPROXY entry serves the modules the user has downloaded already,
// offline, and only then goes to the user's proxies; it is left out when
// that cache has no downloads.
func CacheEnv(env []string) (folder string, entries []string) {
	entries = []string{"TMPDIR=" + privateTmp}
	base := envValue(env, "XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		base = ""
		if home := envValue(env, "HOME"); filepath.IsAbs(home) {
			base = filepath.Join(home, ".cache")
		}
	}
	if base == "" {
		return "", entries
	}
	cache := filepath.Join(base, "cadence", "sandbox")
	entries = append(entries,
		"XDG_CACHE_HOME="+cache,
		"GOCACHE="+filepath.Join(cache, "go-build"),
		"GOMODCACHE="+filepath.Join(cache, "go-mod"),
		"GOFLAGS="+strings.TrimSpace(envValue(env, "GOFLAGS")+" -modcacherw"),
		"npm_config_cache="+filepath.Join(cache, "npm"))
	if mc := userModCache(env); mc != "" {
		dl := filepath.Join(mc, "cache", "download")
		if fi, err := os.Stat(dl); err == nil && fi.IsDir() {
			proxy := envValue(env, "GOPROXY")
			if proxy == "" {
				proxy = "https://proxy.golang.org,direct"
			}
			entries = append(entries, "GOPROXY=file://"+filepath.ToSlash(dl)+","+proxy)
		}
	}
	return cache, entries
}

// userModCache is the Go module cache of env: GOMODCACHE, else <first
// GOPATH>/pkg/mod, else $HOME/go/pkg/mod; "" when none is known.
func userModCache(env []string) string {
	if m := envValue(env, "GOMODCACHE"); filepath.IsAbs(m) {
		return m
	}
	if gp := filepath.SplitList(envValue(env, "GOPATH")); len(gp) > 0 && filepath.IsAbs(gp[0]) {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home := envValue(env, "HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// envValue is the value of the last entry of key in env ("" when none).
func envValue(env []string, key string) string {
	v := ""
	for _, e := range env {
		if k, val, ok := strings.Cut(e, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// EnvValue is envValue, for the step runner.
func EnvValue(env []string, key string) string { return envValue(env, key) }
