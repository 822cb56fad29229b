package engine_test

import (
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
