// Package enginetest starts embedded engines for tests: one per test, on
// loopback with a free port, its store in the test's temporary folder.
package enginetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// Certs writes a new CA and a server certificate it signed, for 127.0.0.1
// and localhost, as PEM files in dir: ca.pem, cert.pem, key.pem (ECDSA
// P-256, valid from an hour ago for a day). It returns the server's files
// (without CA: clients are not asked for certificates) and the CA's path.
func Certs(t testing.TB, dir string) (server engine.TLSFiles, ca string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cadence test CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "cadence engine"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, kind string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: data}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ca = write("ca.pem", "CERTIFICATE", caDER)
	return engine.TLSFiles{Cert: write("cert.pem", "CERTIFICATE", der), Key: write("key.pem", "EC PRIVATE KEY", keyDER)}, ca
}
