package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
)

// bwrapProbe is the sandbox an adapter tries before it promises one: the
// namespaces an agent CLI's bubblewrap command line asks for (a user, PID
// and network namespace, a fresh /proc), around `true`. It catches
// kernels or containers without unprivileged user namespaces. It costs
// about 45 ms (2 cores, Linux 6.18).
var bwrapProbe = []string{"--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid",
	"--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"}

// BwrapMissing says why a bubblewrap sandbox cannot run here ("" when it
// can): on system goos (it needs Linux), with bwrap and each of also (the
// other programs the CLI's sandbox needs, e.g. socat) found on pathList (a
// PATH value), and a bwrap that can make its namespaces. what names the
// sandbox in the answer ("Claude Code's sandbox").
func BwrapMissing(ctx context.Context, goos, pathList, what string, also ...string) string {
	if goos != "linux" {
		return "not Linux (cadence uses " + what + " on Linux, with bubblewrap)"
	}
	var missing []string
	bwrap := LookPath("bwrap", pathList)
	if bwrap == "" {
		missing = append(missing, "bubblewrap (bwrap)")
	}
	for _, name := range also {
		if LookPath(name, pathList) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return strings.Join(missing, " and ") + " not found on PATH (Debian/Ubuntu: apt-get install bubblewrap" + strings.TrimRight(" "+strings.Join(also, " "), " ") + ")"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	res, err := proc.Run(ctx, proc.Cmd{Path: bwrap, Args: bwrapProbe, Env: []string{"PATH=" + pathList},
		Stdout: &out, Stderr: &out, Grace: time.Second, Direct: true})
	why := ""
	switch {
	case err != nil:
		why = err.Error()
	case res.Stopped:
		why = "it did not answer within 10s"
	case res.ExitCode != 0:
		why = strings.TrimSpace(out.String())
		if i := strings.IndexByte(why, '\n'); i >= 0 {
			why = why[:i]
		}
		if why == "" {
			why = "exit status " + strconv.Itoa(res.ExitCode)
		}
	default:
		return ""
	}
	return "bubblewrap cannot start a sandbox here (" + why + "); unprivileged user namespaces may be off"
}

// LookPath finds an executable file named name in the folders of pathList
// (a PATH value), as an agent CLI does; "" when there is none.
func LookPath(name, pathList string) string {
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
