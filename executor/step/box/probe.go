package box

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
)

// Prober says whether boxes can run on this machine, once per PATH.
type Prober struct {
	mu      sync.Mutex
	answers map[string]answer
}

type answer struct{ bwrap, missing string }

// Probe returns the bwrap found on pathList (a PATH value) and, when
// boxes cannot run here, why not ("" when they can): not Linux, bwrap
// not on the PATH, or a bwrap that cannot make the box's namespaces
// (unprivileged user namespaces off) — it runs `true` in an empty box
// with the same namespaces and mounts as every step's. An answer is kept
// for the life of p, but for one cut short by ctx.
func (p *Prober) Probe(ctx context.Context, pathList string) (bwrap, missing string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.answers[pathList]; ok {
		return a.bwrap, a.missing
	}
	bwrap, missing = probe(ctx, runtime.GOOS, pathList)
	if ctx.Err() != nil {
		return bwrap, missing
	}
	if p.answers == nil {
		p.answers = map[string]answer{}
	}
	p.answers[pathList] = answer{bwrap, missing}
	return bwrap, missing
}

func probe(ctx context.Context, goos, pathList string) (string, string) {
	if goos != "linux" {
		return "", "not Linux (cadence's step sandbox is bubblewrap, on Linux)"
	}
	bwrap := lookPath("bwrap", pathList)
	if bwrap == "" {
		return "", "bubblewrap (bwrap) not found on PATH (Debian/Ubuntu: apt-get install bubblewrap)"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	res, err := proc.Run(ctx, proc.Cmd{Path: bwrap, Args: append(append(append([]string{}, base...), "--"), "true"),
		Env: []string{"PATH=" + pathList}, Stdout: &out, Stderr: &out, Grace: time.Second, Direct: true})
	why := ""
	switch {
	case err != nil:
		why = err.Error()
	case res.Stopped:
		why = "it did not answer within 10s"
	case res.ExitCode != 0:
		why = strings.TrimSpace(strings.SplitN(strings.TrimSpace(out.String()), "\n", 2)[0])
		if why == "" {
			why = "exit status " + strconv.Itoa(res.ExitCode)
		}
	default:
		return bwrap, ""
	}
	return bwrap, "bubblewrap cannot start a sandbox here (" + why + "); unprivileged user namespaces may be off"
}

// lookPath finds an executable file named name in the absolute folders
// of pathList; "" when there is none.
func lookPath(name, pathList string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}
