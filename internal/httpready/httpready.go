// Package httpready tells whether an application answers at a URL: the
// readiness check of a service cadence starts (internal/proc's Ready,
// given this check by its caller, so that the process runner and the
// step supervisor built from it link no network code).
package httpready

import (
	"context"
	"io"
	"net/http"
	"time"
)

// requestTimeout bounds one request (connect, headers and body), so that
// a server that accepts and never answers costs one poll.
const requestTimeout = 2 * time.Second

// bodyBytes is the most of an answer's body that is read.
const bodyBytes = 4 << 10

// Answers reports whether a GET of url gets an HTTP status below 500 (a
// redirect counts, unfollowed), without a proxy or kept connection.
func Answers(ctx context.Context, url string) bool {
	client := &http.Client{
		Timeout:       requestTimeout,
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, bodyBytes))
	_ = resp.Body.Close()
	return resp.StatusCode < 500
}
