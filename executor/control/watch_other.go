//go:build !linux

package control

import "errors"

// Watch is Linux's only (inotify): elsewhere the caller polls.
func (c Channel) Watch() (*Watch, error) {
	return nil, errors.New("no inotify on this system: the request channel is polled")
}
