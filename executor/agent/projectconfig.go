package agent

import (
	"path"
	"slices"
	"strings"
)

// Configured is an Adapter whose CLI loads configuration from the
// repository it is started in that can make it run commands or widen what
// it may do (Claude Code: .mcp.json, .claude/settings.json, …). The
// adapter's sessions do not load it; the lead's own use of the CLI does,
// once a lot's change of such a file reaches the base: the executor names
// those files to the lot's review and to the lead (ConfigFiles).
type Configured interface {
	// ProjectConfig lists those files as slash-separated paths relative to
	// any folder of a repository (".mcp.json" is also "sub/.mcp.json"); a
	// path ending in "/" stands for everything under that folder
	// (".claude/hooks/").
	ProjectConfig() []string
}

// ConfigFiles returns those of paths (slash-separated, relative to a
// repository's root, as git names them) that the CLI of some adapter of the
// registry loads as its configuration (Configured), in the order given.
func (r *Registry) ConfigFiles(paths []string) []string {
	var patterns []string
	for _, a := range r.Adapters() {
		if c, ok := a.(Configured); ok {
			patterns = append(patterns, c.ProjectConfig()...)
		}
	}
	var out []string
	for _, p := range paths {
		if slices.ContainsFunc(patterns, func(pat string) bool { return configMatch(pat, p) }) {
			out = append(out, p)
		}
	}
	return out
}

// ConfigFiles implements the executor's check of a lot's changes with
// every adapter of the router (Registry.ConfigFiles).
func (r *Router) ConfigFiles(paths []string) []string { return r.Adapters.ConfigFiles(paths) }

// configMatch says whether the file p (relative to a repository's root)
// is pattern pat (see Configured.ProjectConfig) in some folder of the
// repository: its last components are pat's, or, for a pattern that ends
// in "/", some of its parent folders are.
func configMatch(pat, p string) bool {
	p = path.Clean("/" + p)
	if dir, ok := strings.CutSuffix(pat, "/"); ok {
		return strings.Contains(p, "/"+dir+"/")
	}
	return strings.HasSuffix(p, "/"+pat)
}
