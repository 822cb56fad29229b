// Package enginetest starts embedded engines for tests: one per test, on
// loopback with a free port, its store in the test's temporary folder.
package enginetest

import (
	"testing"

	"github.com/cadence-run/cadence/executor/remote/engine"
)

// Start starts an engine on 127.0.0.1 with a free port and a store in
// t.TempDir(), ready for connections; it is shut down when the test ends.
func Start(t testing.TB) *engine.Engine {
	t.Helper()
	return StartStore(t, t.TempDir())
}

// StartStore is Start with a given store folder (a restart test reuses
// one); every engine it starts is shut down when the test ends (Shutdown
// twice is harmless).
func StartStore(t testing.TB, store string) *engine.Engine {
	t.Helper()
	e, err := engine.Start(engine.Options{Listen: "127.0.0.1:-1", StoreDir: store})
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	t.Cleanup(e.Shutdown)
	return e
}
