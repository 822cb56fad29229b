// Package engine runs an embedded NATS server with JetStream: the engine of
// remote steps for a small team (`cadence engine`, docs/remote.md "Engine").
// It listens on loopback unless TLS is configured, and keeps JetStream's file
// store in one folder, so a restarted engine on the same folder loses no job
// and no result.
package engine

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// DefaultListen is the engine's address when Options.Listen is empty.
const DefaultListen = "127.0.0.1:4222"

// readyTimeout bounds how long Start waits for the server to accept
// connections.
const readyTimeout = 10 * time.Second

// Options configure an engine.
type Options struct {
	// Listen is host:port (DefaultListen when empty); port -1 picks a free
	// port (tests), and so does 0. A host other than loopback needs TLS.
	Listen string
	// StoreDir is the folder of JetStream's file store (required).
	StoreDir string
	// TLS, when its Cert and Key are set, makes every client connect with
	// TLS; a CA also makes the server require and verify client
	// certificates.
	TLS TLSFiles
	// ConfigFile, optional, is a nats-server configuration file giving
	// accounts, users and their permissions (nats-server's own format);
	// Listen, StoreDir and TLS above override what it says of them.
	ConfigFile string
	// Users, when set, are the only clients the engine accepts, each with
	// its permissions (docs/remote.md, "Security"); not with ConfigFile.
	Users []User
}

// TLSFiles are PEM file paths.
type TLSFiles struct {
	Cert, Key, CA string
}

func (t TLSFiles) enabled() bool { return t.Cert != "" || t.Key != "" }

// Engine is a running embedded server.
type Engine struct {
	srv *server.Server
}

// Start starts the server and returns once it accepts connections. Errors:
// a bad Listen, a non-loopback Listen without TLS, an unreadable TLS or
// configuration file, a store that cannot be opened, a port in use.
func Start(opts Options) (*Engine, error) {
	if opts.StoreDir == "" {
		return nil, errors.New("engine: no store folder")
	}
	listen := opts.Listen
	if listen == "" {
		listen = DefaultListen
	}
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("engine: listen address %q: %w", listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < -1 || port > 65535 {
		return nil, fmt.Errorf("engine: listen address %q: bad port %q", listen, portText)
	}
	if port == 0 {
		port = -1 // any free port, as net.Listen
	}
	if opts.TLS.enabled() && (opts.TLS.Cert == "" || opts.TLS.Key == "") {
		return nil, errors.New("engine: TLS needs both a certificate and a key")
	}
	if !Loopback(host) && !opts.TLS.enabled() {
		return nil, fmt.Errorf("engine: listen address %q is not loopback: give a TLS certificate and key (the engine holds source code and briefs)", listen)
	}
	if opts.ConfigFile != "" && len(opts.Users) > 0 {
		return nil, errors.New("engine: users come from the configuration file or from the engine's auth folder, not both")
	}
	sopts := &server.Options{}
	if len(opts.Users) > 0 {
		if sopts.Nkeys, err = nkeyUsers(opts.Users); err != nil {
			return nil, err
		}
	}
	if opts.ConfigFile != "" {
		if sopts, err = server.ProcessConfigFile(opts.ConfigFile); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
	}
	sopts.Host, sopts.Port = host, port
	sopts.JetStream = true
	sopts.StoreDir = opts.StoreDir
	sopts.NoSigs = true
	sopts.NoLog = true
	sopts.HTTPPort = 0
	if opts.TLS.enabled() {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: opts.TLS.Cert, KeyFile: opts.TLS.Key, CaFile: opts.TLS.CA, Verify: opts.TLS.CA != ""})
		if err != nil {
			return nil, fmt.Errorf("engine: TLS: %w", err)
		}
		sopts.TLSConfig, sopts.TLS, sopts.TLSVerify = tc, true, opts.TLS.CA != ""
		sopts.TLSTimeout = 2
	}
	if port > 0 {
		// A port in use is refused at once with the OS's reason: the
		// server would only fail to become ready within readyTimeout.
		l, err := net.Listen("tcp", net.JoinHostPort(host, portText))
		if err != nil {
			return nil, fmt.Errorf("engine: cannot listen on %s: %w (stop what holds it, or choose another address with -listen)", listen, err)
		}
		l.Close()
	}
	srv, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(readyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("engine: not ready within %s on %s (port in use?)", readyTimeout, listen)
	}
	if !srv.JetStreamEnabled() {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("engine: JetStream did not start on store %s", opts.StoreDir)
	}
	return &Engine{srv: srv}, nil
}

// URL is the address clients connect to (nats://host:port, or tls://).
func (e *Engine) URL() string { return e.srv.ClientURL() }

// Connect opens a client connection to the engine inside this process
// (no socket: it needs neither the listen address nor TLS); an engine
// with Users needs opts that authenticate as one of them (ClientOptions).
func (e *Engine) Connect(opts ...nats.Option) (*nats.Conn, error) {
	nc, err := nats.Connect("", append(opts, nats.InProcessServer(e.srv))...)
	if err != nil {
		return nil, fmt.Errorf("engine: connect in process: %w", err)
	}
	return nc, nil
}

// Shutdown stops the server and returns once it stopped; the store stays.
func (e *Engine) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// Loopback says whether host (a name or an IP) only reaches this machine:
// "localhost" or a loopback IP. An empty host (every interface) is not.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
