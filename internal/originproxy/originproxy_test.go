package originproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/originproxy"
)

// TestOnlyTheOrigin: a plain request and a tunnel to the allowed origin
// pass; another origin on the same host (another port) is refused both
// ways, and so is a redirect's next request.
func TestOnlyTheOrigin(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") }))
	defer other.Close()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
			return
		}
		fmt.Fprint(w, "app")
	}))
	defer app.Close()
	appURL, _ := url.Parse(app.URL)
	otherURL, _ := url.Parse(other.URL)
	p, err := originproxy.Start(appURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pu, _ := url.Parse(p.URL())
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}}

	get := func(u string) (int, string) {
		resp, err := c.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return resp.StatusCode, string(b)
	}
	if code, body := get(app.URL + "/"); code != 200 || body != "app" {
		t.Errorf("the app through the proxy: %d %q", code, body)
	}
	if code, body := get(other.URL + "/"); code != http.StatusForbidden || strings.Contains(body, "secret") {
		t.Errorf("another origin: %d %q", code, body)
	}
	if code, body := get(app.URL + "/go"); code != http.StatusForbidden || strings.Contains(body, "secret") {
		t.Errorf("a redirect to another origin: %d %q", code, body)
	}
	tunnel := func(host string) string {
		conn, err := net.DialTimeout("tcp", pu.Host, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
		line, _ := bufio.NewReader(conn).ReadString('\n')
		return line
	}
	if line := tunnel(appURL.Host); !strings.Contains(line, " 200 ") {
		t.Errorf("a tunnel to the app: %q", line)
	}
	if line := tunnel(otherURL.Host); !strings.Contains(line, " 403 ") {
		t.Errorf("a tunnel to another origin: %q", line)
	}
	if p.Refused() != 3 {
		t.Errorf("refused %d requests, want 3", p.Refused())
	}
}
