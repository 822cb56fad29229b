package control

// Watch tells when a request may have arrived in the channel, so that the
// apply looks at the folder when something changed there instead of every
// so often. On Linux it is inotify (watch_linux.go) on the channel's
// folder and, for the folder's creation by the first Send, on the folder
// that holds it; elsewhere, or when inotify is refused (its limits), Watch
// returns an error and the caller polls.
type Watch struct {
	// C receives a value after a change that may be a request: a file
	// moved into or written in the channel's folder, the folder made,
	// removed or moved, or events lost (the kernel's queue overflowed).
	// Changes coalesce: at most one value waits. C is closed when the
	// watch breaks (Close, or a read error): the caller polls then.
	C <-chan struct{}

	close func() error
}

// Close ends the watch; C is closed once its reader is done.
func (w *Watch) Close() error { return w.close() }
