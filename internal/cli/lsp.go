package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/cadence-run/cadence/internal/lsp"
	"github.com/cadence-run/cadence/spec"
)

func runLSP(e *env, args []string) ExitCode {
	fs := newFlags(e, "lsp", "", "Run the language server for wave files (*.hcl, *.hcl.json) on the standard input and\noutput, for an editor to start: diagnostics as validate gives them, completion, hover,\ndefinitions, references, symbols and formatting. It reads the editor's text, starts no\nprocess and touches no git repository.")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(e.stderr, "cadence lsp: takes no argument (got %q)\n", pos[0])
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	environ := envVars(os.Environ())
	opts := lsp.Options{
		AgentKinds:      e.agents().Kinds(),
		AgentAttributes: e.agents().Attributes(),
		// validate's options: a diagnostic in the editor is one validate gives
		LoadOptions: func(file string) spec.Options {
			return spec.Options{VarFiles: autoVarFiles(file), EnvVars: environ, AgentKinds: e.agents().Kinds(), AgentSettings: e.agents().DecodeSettings,
				AgentCommand: e.agents().DefaultCommand, LookupEnv: os.LookupEnv}
		},
	}
	if err := lsp.Serve(ctx, stdio{e.stdin, e.stdout}, opts); err != nil {
		fmt.Fprintf(e.stderr, "cadence lsp: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// stdio is the standard input and output as the server's one stream.
type stdio struct {
	io.Reader
	io.Writer
}

// Close ends nothing: the streams are the process's.
func (stdio) Close() error { return nil }
