package codex

import (
	"flag"
	"testing"

	"github.com/cadence-run/cadence/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite attrdocs.go from the table of docs/wave-file.md")

// TestAttributeDocs checks that attrdocs.go holds the table under
// "### Kind `codex`" of docs/wave-file.md as it is (go test -run
// TestAttributeDocs -update rewrites it).
func TestAttributeDocs(t *testing.T) {
	testutil.AttributeDocsFile(t, "attrdocs.go", "codex", "../../../docs/wave-file.md", "### Kind `codex`", "TestAttributeDocs", *update)
}
