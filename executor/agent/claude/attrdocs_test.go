package claude

import (
	"flag"
	"testing"

	"github.com/cadence-run/cadence/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite attrdocs.go from the table of docs/wave-file.md")

// TestAttributeDocs checks that attrdocs.go holds the table under
// "### Kind `claude`" of docs/wave-file.md as it is (go test -run
// TestAttributeDocs -update rewrites it).
func TestAttributeDocs(t *testing.T) {
	testutil.AttributeDocsFile(t, "attrdocs.go", "claude", "../../../docs/wave-file.md", "### Kind `claude`", "TestAttributeDocs", *update)
}
