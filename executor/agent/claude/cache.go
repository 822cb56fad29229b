package claude

import (
	"os"
	"path/filepath"
	"strings"
)

// In the sandbox $HOME is read-only, and so are the build tools' caches
// there: `go build` fails at once ("failed to initialize build cache at
// ~/.cache/go-build: read-only file system"), `npm install` cannot write
// ~/.npm. Making those caches writable would let a session plant a build
// result that the lead's own builds then run, outside the sandbox. So a
// sandboxed session's tools get caches of their own, in one folder that
// only sandboxed sessions use (sandboxCache), writable in the sandbox and
// kept between sessions and waves: cacheEnv.

// sandboxCache is the build-tool cache of sandboxed sessions started with
// env: <XDG_CACHE_HOME, else $HOME/.cache>/cadence/sandbox; "" without
// either.
func sandboxCache(env []string) string {
	base := envValue(env, "XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		base = ""
		if home := envValue(env, "HOME"); filepath.IsAbs(home) {
			base = filepath.Join(home, ".cache")
		}
	}
	if base == "" {
		return ""
	}
	return filepath.Join(base, "cadence", "sandbox")
}

// cacheEnv returns the environment entries that point a sandboxed
// session's build tools at cache (after env, they win):
//
//	XDG_CACHE_HOME=<cache>            (pip and other XDG tools)
//	GOCACHE=<cache>/go-build
//	GOMODCACHE=<cache>/go-mod
//	GOPROXY=file://<the user's module cache>/cache/download,<the user's GOPROXY>
//	GOFLAGS=<the user's GOFLAGS> -modcacherw
//	npm_config_cache=<cache>/npm
//
// The GOPROXY entry serves the modules the user has downloaded already
// from their own module cache (read-only in the sandbox), offline, and
// only then goes to the user's proxies (GOPROXY=off stays off); it is left
// out when that cache has no downloads. -modcacherw keeps the sandbox's
// module cache deletable. Other tools' caches (cargo, gradle, maven, pip
// --user) are not redirected: they stay read-only in the sandbox.
func cacheEnv(env []string, cache string) []string {
	out := []string{
		"XDG_CACHE_HOME=" + cache,
		"GOCACHE=" + filepath.Join(cache, "go-build"),
		"GOMODCACHE=" + filepath.Join(cache, "go-mod"),
		"GOFLAGS=" + strings.TrimSpace(envValue(env, "GOFLAGS")+" -modcacherw"),
		"npm_config_cache=" + filepath.Join(cache, "npm"),
	}
	if dl := filepath.Join(userModCache(env), "cache", "download"); userModCache(env) != "" {
		if fi, err := os.Stat(dl); err == nil && fi.IsDir() {
			proxy := envValue(env, "GOPROXY")
			if proxy == "" {
				proxy = "https://proxy.golang.org,direct"
			}
			out = append(out, "GOPROXY=file://"+filepath.ToSlash(dl)+","+proxy)
		}
	}
	return out
}

// userModCache is the Go module cache of the user's environment env:
// GOMODCACHE, else <first GOPATH>/pkg/mod, else $HOME/go/pkg/mod; "" when
// none is known.
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
