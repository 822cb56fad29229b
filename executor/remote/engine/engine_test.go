package engine_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine"
	"github.com/cadence-run/cadence/executor/remote/engine/enginetest"
	"github.com/nats-io/nats.go"
)

func TestNonLoopbackNeedsTLS(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0", "192.0.2.1:4222", "example.com:4222"} {
		_, err := engine.Start(engine.Options{Listen: listen, StoreDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "not loopback") {
			t.Errorf("Start(%q) = %v, want a refusal naming loopback", listen, err)
		}
	}
	if _, err := engine.Start(engine.Options{Listen: "0.0.0.0:0", StoreDir: t.TempDir(), TLS: engine.TLSFiles{Cert: "c.pem"}}); err == nil || !strings.Contains(err.Error(), "both a certificate and a key") {
		t.Errorf("TLS without a key: %v", err)
	}
}

func TestStartConnect(t *testing.T) {
	e := enginetest.Start(t)
	if !strings.HasPrefix(e.URL(), "nats://127.0.0.1:") || strings.HasSuffix(e.URL(), ":4222") {
		t.Errorf("URL = %q, want loopback on a free port", e.URL())
	}
	nc, err := nats.Connect(e.URL(), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	in, err := e.Connect()
	if err != nil {
		t.Fatal(err)
	}
	in.Close()
}

// A port another program holds is refused at once, naming the port and
// what to do, never after the ready timeout with a guess (a new user's
// first `cadence engine` on a machine where 4222 is taken waited 10s for
// "not ready within 10s (port in use?)").
func TestEnginePortInUseRefusedAtOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	e, err := engine.Start(engine.Options{Listen: l.Addr().String(), StoreDir: t.TempDir()})
	if err == nil {
		e.Shutdown()
		t.Fatal("engine started on a port in use")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("refused after %s, want at once", took)
	}
	if !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "-listen") {
		t.Errorf("error %q: want the OS's reason and the -listen flag to choose another port", err)
	}
}
