package archtest

import (
	"strings"
	"testing"
)

// leaves are packages that import no other cadence package: small helpers
// every layer may use.
var leaves = []string{"internal/ids"}

// TestLeafPackages fails when a leaf package imports a cadence package.
func TestLeafPackages(t *testing.T) {
	all := deps(t)
	for _, leaf := range leaves {
		ds, ok := all[leaf]
		if !ok {
			t.Errorf("%s: no such package", leaf)
		}
		if len(ds) > 0 {
			t.Errorf("%s imports %s: it must import no cadence package", leaf, strings.Join(ds, ", "))
		}
	}
}
