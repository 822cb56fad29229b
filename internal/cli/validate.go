package cli

import (
	"fmt"
	"strconv"

	"github.com/cadence-run/cadence/spec"
)

func runValidate(e *env, args []string) ExitCode {
	fs := newFlags(e, "validate", "[FILE]", "Parse the wave file, resolve its references and check the dependency graph.\nNo filesystem, git or agent checks: use plan for those.")
	var vars, varFiles listFlag
	fs.varFlags(&vars, &varFiles)
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	file, ok := oneFile(e, "validate", pos)
	if !ok {
		return ExitUsage
	}
	defer e.shortRunGC()()
	w, diags := e.loadWave(file, spec.Options{Vars: vars, VarFiles: varFiles})
	if fs.json {
		e.writeDiags(e.stdout, diags, w.loader.Files, true)
	} else {
		e.writeDiags(e.stderr, diags, w.loader.Files, false)
	}
	if diags.HasErrors() {
		return ExitError
	}
	if !fs.json {
		fmt.Fprintf(e.stdout, "%s is valid: wave %q, %s, %s.\n", file, w.cfg.Wave.Name, countOf(len(w.cfg.Lots), "lot"), countOf(len(w.cfg.Repos), "repo"))
	}
	return ExitOK
}

// countOf is n and noun, plural unless n is 1: "1 repo", "0 repos".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
