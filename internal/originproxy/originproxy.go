// Package originproxy is the HTTP proxy a UX session's browser is given:
// it passes requests for one origin (host:port) only, plain requests and
// tunnels (CONNECT, which a browser uses for WebSockets and TLS through a
// proxy) alike, and refuses every other with 403. Unlike a rule inside
// the browser, it also sees a redirect's next request and WebSockets.
// The browser must send loopback addresses through it too (chromium:
// --proxy-bypass-list=<-loopback>).
package originproxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxTunnels bounds the tunnels open at once.
const maxTunnels = 64

// Proxy is a running proxy on 127.0.0.1.
type Proxy struct {
	allowed string
	ln      net.Listener
	srv     *http.Server
	tr      *http.Transport

	mu      sync.Mutex
	tunnels map[net.Conn]bool
	closed  bool
	// refused counts the requests refused (Refused).
	refused int
}

// Start runs a proxy that passes requests for allowed ("host:port", as a
// URL's Host with its port) only.
func Start(allowed string) (*Proxy, error) {
	if _, _, err := net.SplitHostPort(allowed); err != nil {
		return nil, fmt.Errorf("origin proxy: %q is not host:port", allowed)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("origin proxy: %w", err)
	}
	p := &Proxy{allowed: strings.ToLower(allowed), ln: ln, tunnels: map[net.Conn]bool{},
		tr: &http.Transport{Proxy: nil, DisableKeepAlives: true, ResponseHeaderTimeout: time.Minute}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's address for the browser ("http://127.0.0.1:PORT").
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Refused is how many requests the proxy refused.
func (p *Proxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// Close stops the proxy and ends its open tunnels.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	p.tr.CloseIdleConnections()
	return p.srv.Close()
}

func (p *Proxy) refuse(w http.ResponseWriter, host string) {
	p.mu.Lock()
	p.refused++
	p.mu.Unlock()
	http.Error(w, "cadence: the UX session's browser may open "+p.allowed+" only, not "+host, http.StatusForbidden)
}

// ServeHTTP passes a request for the allowed origin and refuses others.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := strings.ToLower(r.Host)
	if r.Method != http.MethodConnect {
		host = strings.ToLower(r.URL.Host)
		if r.URL.Port() == "" && r.URL.Scheme == "http" {
			host += ":80"
		}
	}
	if host != p.allowed {
		p.refuse(w, host)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// tunnel joins the client to the allowed origin (CONNECT).
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	full := len(p.tunnels) >= maxTunnels*2 || p.closed
	p.mu.Unlock()
	if full {
		http.Error(w, "cadence: too many tunnels", http.StatusServiceUnavailable)
		return
	}
	up, err := net.DialTimeout("tcp", p.allowed, 10*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(up, down) {
		return
	}
	_, _ = down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(up, buf); closeWrite(up) }()
	go func() { defer wg.Done(); _, _ = io.Copy(down, up); closeWrite(down) }()
	go func() {
		wg.Wait()
		up.Close()
		down.Close()
		p.mu.Lock()
		delete(p.tunnels, up)
		delete(p.tunnels, down)
		p.mu.Unlock()
	}()
}

// track records a tunnel's two ends (false, both closed, when the proxy
// is closed).
func (p *Proxy) track(up, down net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		up.Close()
		down.Close()
		return false
	}
	p.tunnels[up], p.tunnels[down] = true, true
	return true
}

// closeWrite ends the sending half of a TCP connection (the other end
// reads its end), else nothing.
func closeWrite(c net.Conn) {
	if t, ok := c.(*net.TCPConn); ok {
		_ = t.CloseWrite()
	}
}
