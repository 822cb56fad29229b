package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/posener/complete"
)

// Shell completion, as Terraform's: github.com/posener/complete (v1), the
// library Terraform uses through mitchellh/cli. The shell runs cadence
// itself to complete a line (bash's `complete -C`, zsh's through
// bashcompinit, fish through a function): COMP_LINE holds the line and
// COMP_POINT the cursor (the library's protocol), and cadence prints one
// candidate per line. `cadence completion bash|zsh|fish` prints what to add
// to the shell's startup file; cadence never writes a startup file itself
// (the library's installer edits the rc files of the account's home from
// the password database, whatever HOME says).

// completing says whether the shell runs cadence to complete a line.
func (e *env) completing() bool { return e.getenv("COMP_LINE") != "" }

// complete prints the candidates for the line in COMP_LINE up to
// COMP_POINT: command names, each command's flags (from its own flag set,
// so they never drift), flag values where they are a known set, wave files
// (*.hcl, *.hcl.json) and plan files for FILE arguments, and lot ids for
// LOT arguments and -target/-replace, read from the wave file on the line
// or wave.hcl (parsed only: no variables, git or network). A -chdir before
// the command is followed, as the command would.
func (e *env) complete() ExitCode {
	if dir := completionChdir(strings.Fields(e.getenv("COMP_LINE"))); dir != "" {
		if err := os.Chdir(dir); err != nil {
			return ExitOK // nothing to offer
		}
	}
	c := complete.New("cadence", e.completionTree())
	c.Out = e.stdout
	c.Complete()
	return ExitOK
}

// completionChdir is the folder of a -chdir before the command on the
// line ("" if none).
func completionChdir(fields []string) string {
	for i := 1; i < len(fields); i++ {
		a := fields[i]
		if !strings.HasPrefix(a, "-") {
			return "" // the command: no -chdir before it
		}
		a = "-" + strings.TrimLeft(a, "-") // -chdir or --chdir
		switch {
		case strings.HasPrefix(a, "-chdir="):
			return strings.TrimPrefix(a, "-chdir=")
		case a == "-chdir" && i+1 < len(fields):
			return fields[i+1]
		}
	}
	return ""
}

// completionTree describes cadence's command line for the library.
func (e *env) completionTree() complete.Command {
	levels := complete.PredictSet("trace", "debug", "info", "warn", "error", "off")
	root := complete.Command{
		Sub: complete.Commands{},
		Flags: complete.Flags{
			"-chdir": complete.PredictDirs("*"), "-no-color": nil, "-log-level": levels,
			"-help": nil, "-version": nil,
		},
	}
	for _, c := range commands {
		fs := e.flagsOf(c)
		flags := complete.Flags{}
		fs.VisitAll(func(f *flag.Flag) {
			flags["-"+f.Name] = flagValues(c.name, f, fs, levels)
		})
		root.Sub[c.name] = complete.Command{Flags: flags, Args: argValues(c, fs)}
	}
	return root
}

// flagsOf is the flag set of command c: the one its run function makes,
// caught by running it with -h and its output discarded (every command
// parses its flags before acting).
func (e *env) flagsOf(c *command) *flag.FlagSet {
	var fs *flag.FlagSet
	quiet := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: e.getenv, log: e.log, agentRegistry: e.agentRegistry,
		flagsMade: func(f *flag.FlagSet) { fs = f }}
	if c.name != "help" && c.name != "completion" {
		c.run(quiet, []string{"-h"})
	}
	if fs == nil {
		fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
	}
	return fs
}

// formats are the values of -format by command.
var formats = map[string][]string{
	"plan":  {"text", "json", "markdown", "dot", "mermaid"},
	"graph": {"dot", "mermaid"},
	"show":  {"text", "json", "markdown"},
}

// flagValues predicts the value of flag f of command cmd: nothing after a
// boolean flag (the line goes on), files, lot ids, or a known set; a flag
// with any other value is offered nothing.
func flagValues(cmd string, f *flag.Flag, fs *flag.FlagSet, levels complete.Predictor) complete.Predictor {
	if isBoolFlag(f) {
		return nil
	}
	switch f.Name {
	case "target", "replace":
		return complete.PredictFunc(func(a complete.Args) []string {
			file, _ := waveFileFirst(positional(a.Completed, fs))
			return lotIDs(file)
		})
	case "var-file", "out":
		return complete.PredictFiles("*")
	case "log-level":
		return levels
	case "format":
		return complete.PredictSet(formats[cmd]...)
	}
	return complete.PredictAnything
}

// argValues predicts the positional arguments of command c from its
// argument synopsis: wave files for FILE (and plan files for PLANFILE),
// lot ids for LOT (of the wave file given first, or wave.hcl), command
// names for COMMAND, shells for completion.
func argValues(c *command, fs *flag.FlagSet) complete.Predictor {
	files := waveFiles
	switch {
	case strings.HasPrefix(c.args, "PLANFILE"): // show: a saved plan only
		files = orderedUnion(complete.PredictFiles("*.plan"))
	case strings.Contains(c.args, "PLANFILE"):
		files = orderedUnion(waveFiles, complete.PredictFiles("*.plan"))
	}
	return complete.PredictFunc(func(a complete.Args) []string {
		pos := positional(a.Completed, fs)
		switch {
		case c.name == "help":
			if len(pos) == 0 {
				return commandNames()
			}
		case c.name == "completion":
			if len(pos) == 0 {
				return []string{"bash", "zsh", "fish"}
			}
		case strings.Contains(c.args, "LOT"):
			file, rest := waveFileFirst(pos)
			switch {
			case len(pos) == 0:
				return append(files.Predict(a), lotIDs(file)...)
			case len(rest) == 0:
				return lotIDs(file)
			case strings.Contains(c.args, "LOT..."):
				// drop LOT...: the lots not given yet.
				var left []string
				for _, id := range lotIDs(file) {
					if !slices.Contains(rest, id) {
						left = append(left, id)
					}
				}
				return left
			}
		case strings.Contains(c.args, "..."):
			return files.Predict(a)
		case strings.Contains(c.args, "FILE"):
			if len(pos) == 0 {
				return files.Predict(a)
			}
		}
		return nil
	})
}

// waveFiles predicts wave files (*.hcl, *.hcl.json) and folders.
var waveFiles = orderedUnion(complete.PredictFiles("*.hcl"), complete.PredictFiles("*.hcl.json"))

// orderedUnion predicts what any of ps predicts, each once, sorted.
func orderedUnion(ps ...complete.Predictor) complete.PredictFunc {
	return func(a complete.Args) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Predict(a)...)
		}
		sort.Strings(out)
		return slices.Compact(out)
	}
}

func commandNames() []string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return names
}

// positional is the positional arguments among args (the completed words
// after the command): flags are skipped, with the value of a flag that
// takes one when it is the next word.
func positional(args []string, fs *flag.FlagSet) []string {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...)
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
			i++ // its value
		}
	}
	return pos
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// lotIDs are the ids of the lot blocks of the wave file, in file order;
// none when it cannot be read. It only parses the file: no variables are
// evaluated, nothing else is read.
func lotIDs(file string) []string {
	// Bounded, as every wave file read: a named pipe or a link to
	// /dev/zero in its place must not hang the shell's completion.
	src, err := spec.ReadWaveFile(file)
	if err != nil {
		return nil
	}
	p := hclparse.NewParser()
	var f *hcl.File
	if strings.HasSuffix(file, ".json") {
		f, _ = p.ParseJSON(src, file)
	} else {
		f, _ = p.ParseHCL(src, file)
	}
	if f == nil {
		return nil
	}
	content, _, _ := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "lot", LabelNames: []string{"id"}}}})
	var ids []string
	for _, b := range content.Blocks {
		ids = append(ids, b.Labels[0])
	}
	return ids
}

// runCompletion prints the lines that turn on completion in a shell, to
// add to its startup file (docs/commands.md, Shell completion, says where).
func runCompletion(e *env, args []string) ExitCode {
	fs := newFlags(e, "completion", "bash|zsh|fish", "Print what turns on cadence's completion of commands, flags, wave files and lot ids\nin a shell, to add to its startup file:\n  bash: cadence completion bash >> ~/.bashrc\n  zsh:  cadence completion zsh >> ~/.zshrc\n  fish: cadence completion fish > ~/.config/fish/completions/cadence.fish\nThe lines run this cadence binary (its absolute path) to complete. Nothing is written\nby cadence itself.")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if fs.json {
		fmt.Fprintln(e.stderr, "cadence completion: no -json: the output is shell script")
		return ExitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "cadence completion: usage: cadence completion bash|zsh|fish")
		return ExitUsage
	}
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence completion: cannot find this binary: %v\n", err)
		return ExitError
	}
	script, ok := completionScript(pos[0], bin)
	if !ok {
		fmt.Fprintf(e.stderr, "cadence completion: no shell %q (bash, zsh or fish)\n", pos[0])
		return ExitUsage
	}
	fmt.Fprint(e.stdout, script)
	return ExitOK
}

// completionScript is the startup-file text that makes shell complete
// cadence by running bin: the lines posener/complete's installer writes.
func completionScript(shell, bin string) (string, bool) {
	q := shellQuote(bin)
	switch shell {
	case "bash":
		return fmt.Sprintf("complete -C %s cadence\n", q), true
	case "zsh":
		return fmt.Sprintf("autoload -U +X bashcompinit && bashcompinit\ncomplete -o nospace -C %s cadence\n", q), true
	case "fish":
		return fmt.Sprintf(`function __complete_cadence
    set -lx COMP_LINE (commandline -cp)
    test -z (commandline -ct)
    and set COMP_LINE "$COMP_LINE "
    %s
end
complete -f -c cadence -a "(__complete_cadence)"
`, q), true
	}
	return "", false
}

// shellQuote quotes s for sh, zsh and fish when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
