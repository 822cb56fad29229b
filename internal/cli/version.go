package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"runtime/debug"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/spec"
)

// Version is cadence's version; release builds set it with
// -ldflags "-X github.com/cadence-run/cadence/internal/cli.Version=v1.2.3".
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func runVersion(e *env, args []string) int {
	fs := newFlags(e, "version", "", "Print cadence's version and the version of the agent CLI (claude, or\nCADENCE_CLAUDE_BIN) found on this machine.")
	_, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	// The built-in agent, with what its kind's adapter says of its CLI.
	a := spec.DefaultAgent(spec.AgentKindClaude)
	var tool agent.Tool
	if ad, ok := agent.Lookup(a.Kind); ok {
		tool = ad.Tool()
	}
	cmd := agentCommand(a, e.getenv)
	var path, ver, problem string
	if p, err := exec.LookPath(cmd); err != nil {
		problem = "not found"
	} else {
		path = p
		v, err := agentVersion(context.Background(), p, tool.VersionArgs)
		if err != nil {
			problem = err.Error()
		}
		ver = v
	}
	if fs.json {
		out := map[string]any{"version": version(), "go": runtime.Version(),
			"agent": map[string]string{"command": cmd, "path": path, "version": ver, "problem": problem}}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return ExitOK
	}
	fmt.Fprintf(e.stdout, "cadence %s (%s %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	switch {
	case problem == "not found":
		if tool.Install != "" {
			fmt.Fprintf(e.stdout, "agent: %s not found (%s)\n", cmd, tool.Install)
		} else {
			fmt.Fprintf(e.stdout, "agent: %s not found\n", cmd)
		}
	case problem != "":
		fmt.Fprintf(e.stdout, "agent: %s: %s\n", path, problem)
	default:
		fmt.Fprintf(e.stdout, "agent: %s %s\n", path, ver)
	}
	return ExitOK
}
