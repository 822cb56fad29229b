package cli

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// listFlag is a flag that may be given several times.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// varFlag is -var: a listFlag whose values must look like name=value, so
// that a malformed one is a usage error (exit 2) before anything loads.
type varFlag listFlag

func (l *varFlag) String() string { return (*listFlag)(l).String() }
func (l *varFlag) Set(v string) error {
	if name, _, ok := strings.Cut(v, "="); !ok || name == "" {
		return fmt.Errorf("%q must look like name=value", v)
	}
	return (*listFlag)(l).Set(v)
}

// flagSet is a command's flags with the common ones.
type flagSet struct {
	*flag.FlagSet
	json    bool
	noColor bool
	level   string
}

// varFlags adds -var and -var-file, the wave's variables, to the set
// (plan, apply, validate, list: spec.Options Vars and VarFiles).
func (fs *flagSet) varFlags(vars, varFiles *listFlag) {
	fs.Var((*varFlag)(vars), "var", "set a variable: -var name=value (repeatable)")
	fs.Var(varFiles, "var-file", "read variables from an HCL or JSON file (repeatable)")
}

func newFlags(e *env, name, args, summary string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
	fs.SetOutput(e.stderr)
	fs.BoolVar(&fs.json, "json", false, "machine-readable JSON output")
	fs.BoolVar(&fs.noColor, "no-color", false, "no ANSI colour")
	fs.StringVar(&fs.level, "log-level", "", "log level: trace, debug, info, warn, error (or CADENCE_LOG)")
	if e.flagsMade != nil {
		e.flagsMade(fs.FlagSet)
	}
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: cadence %s [flags] %s\n\n%s\n\nFlags:\n", name, args, summary)
		printDefaults(w, fs.FlagSet)
	}
	return fs
}

// printDefaults writes each flag of fs with its usage and, as Go's
// flag.PrintDefaults does, its default when that is not the zero value of
// its type: `(default "text")` for a string, `(default 4)` otherwise.
func printDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, use := flag.UnquoteUsage(f)
		if name != "" {
			name = " " + name
		}
		fmt.Fprintf(w, "  -%s%s\n      %s%s\n", f.Name, name, use, defaultText(f))
	})
}

// defaultText is " (default V)" for a flag whose default is not the zero
// value of its type (a string's V quoted), "" otherwise.
func defaultText(f *flag.Flag) string {
	if isZeroValue(f) {
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return fmt.Sprintf(" (default %q)", f.DefValue)
		}
	}
	return fmt.Sprintf(" (default %s)", f.DefValue)
}

// isZeroValue reports whether f's default is the zero value of its type:
// what a new value of that type prints (the test of Go's flag package).
func isZeroValue(f *flag.Flag) bool {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	if !ok {
		return f.DefValue == ""
	}
	return f.DefValue == v.String()
}

// parse parses flags and positional arguments in any order (Go's flag
// package stops at the first positional argument; cadence does not).
// It returns the positional arguments and an exit code >= 0 when the
// command should stop (help shown, or a usage error).
func (fs *flagSet) parse(e *env, args []string) ([]string, ExitCode) {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(e.stdout) // asked-for help is output, not an error
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return nil, ExitOK
			}
			return nil, ExitUsage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			pos = append(pos, rest[1:]...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if fs.noColor {
		e.noColor = true
	}
	if fs.level != "" {
		// A command's -log-level wins; sub-loggers follow the level.
		e.log.SetLevel(logLevel(e.stderr, fs.level))
	}
	return pos, goOn
}

// oneFile returns the wave file argument: the only positional argument, or
// wave.hcl in the current folder.
func oneFile(e *env, cmd string, pos []string) (string, bool) {
	switch len(pos) {
	case 0:
		return "wave.hcl", true
	case 1:
		return pos[0], true
	}
	fmt.Fprintf(e.stderr, "cadence %s: one wave file at most; got %s\n", cmd, strings.Join(pos, " "))
	return "", false
}
