package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/spec"
)

// Version is cadence's version; release builds set it with
// -ldflags "-X github.com/cadence-run/cadence/internal/cli.Version=v1.2.3".
var Version = ""

// buildVersion is what cadence knows of its own build.
type buildVersion struct {
	// Version is the release version (-ldflags -X …Version), else the
	// module version go install recorded (v1.2.3, or a pseudo-version),
	// else "dev".
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from (vcs.revision
	// of the build info: go build in a git checkout), "" when unknown;
	// RevisionTime its commit time (RFC 3339) and Dirty whether the
	// checkout had uncommitted changes (vcs.modified).
	Revision     string `json:"revision"`
	RevisionTime string `json:"revision_time,omitempty"`
	Dirty        bool   `json:"dirty"`
}

func readBuildVersion() buildVersion {
	bi, _ := debug.ReadBuildInfo()
	return buildVersionOf(Version, bi)
}

// buildVersionOf reads the version from set (the -ldflags version, wins
// when not empty) and the build info bi (nil when the binary has none).
func buildVersionOf(set string, bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: set}
	if bi != nil {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.RevisionTime = s.Value
			case "vcs.modified":
				v.Dirty = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	return v
}

// String is the version line's tail after "cadence ": the version, and
// the revision when known ("dev, revision 0123456789ab (modified)").
func (v buildVersion) String() string {
	s := v.Version
	if v.Revision != "" {
		s += fmt.Sprintf(", revision %.12s", v.Revision)
		if v.RevisionTime != "" {
			s += " of " + v.RevisionTime
		}
		if v.Dirty {
			s += " (modified: uncommitted changes)"
		}
	}
	return s
}

func runVersion(e *env, args []string) ExitCode {
	fs := newFlags(e, "version", "", "Print cadence's version (the release or module version; built from a git checkout,\nthe commit and whether it had uncommitted changes) and the version of the agent CLI\n(claude, or CADENCE_CLAUDE_BIN) found on this machine. -json prints them as JSON.")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(e.stderr, "cadence version: takes no arguments; got %s\n", strings.Join(pos, " "))
		return ExitUsage
	}
	bv := readBuildVersion()
	// The built-in agent, with what its kind's adapter says of its CLI.
	a := spec.DefaultAgent(spec.AgentKindClaude, e.agents().DefaultCommand(spec.AgentKindClaude))
	var tool agent.Tool
	if ad, ok := e.agents().Lookup(a.Kind); ok {
		tool = ad.Tool()
	}
	cmd := agentCommand(e.agents(), a, e.getenv)
	var path, ver, problem string
	if p, err := exec.LookPath(cmd); err != nil {
		problem = "not found"
	} else {
		path = p
		v, err := agentVersion(context.Background(), e.supervisor, p, tool.VersionArgs)
		if err != nil {
			problem = err.Error()
		}
		ver = v
	}
	if fs.json {
		out := map[string]any{"format_version": outputFormatVersion, "version": bv.Version, "revision": bv.Revision, "dirty": bv.Dirty, "go": runtime.Version(),
			"agent": map[string]string{"command": cmd, "path": path, "version": ver, "problem": problem}}
		if bv.RevisionTime != "" {
			out["revision_time"] = bv.RevisionTime
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return ExitOK
	}
	fmt.Fprintf(e.stdout, "cadence %s (%s %s/%s)\n", bv, runtime.Version(), runtime.GOOS, runtime.GOARCH)
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
