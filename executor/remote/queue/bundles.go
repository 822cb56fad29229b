package queue

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go/jetstream"
)

// DefaultMaxBundleBytes bounds a bundle when no bound is given: 512 MiB.
const DefaultMaxBundleBytes int64 = 512 << 20

// ErrTooBig is returned when a bundle is larger than its bound.
var ErrTooBig = errors.New("bundle larger than its bound")

// PutBundle stores r under name in the queue's bundles store, refusing
// (and storing nothing) past maxBytes.
func (q *Queue) PutBundle(ctx context.Context, name string, r io.Reader, maxBytes int64) error {
	lr := &boundedReader{r: r, left: maxBytes}
	if _, err := q.bundles.Put(ctx, jetstream.ObjectMeta{Name: name}, lr); err != nil {
		if lr.over {
			return fmt.Errorf("queue %s: bundle %s: %w (%d bytes)", q.name, name, ErrTooBig, maxBytes)
		}
		return fmt.Errorf("queue %s: bundle %s: %w", q.name, name, err)
	}
	return nil
}

// GetBundle copies bundle name to w, refusing one larger than maxBytes
// before reading it.
func (q *Queue) GetBundle(ctx context.Context, name string, w io.Writer, maxBytes int64) error {
	obj, err := q.bundles.Get(ctx, name)
	if err != nil {
		return fmt.Errorf("queue %s: bundle %s: %w", q.name, name, err)
	}
	defer obj.Close()
	info, err := obj.Info()
	if err != nil {
		return fmt.Errorf("queue %s: bundle %s: %w", q.name, name, err)
	}
	if int64(info.Size) > maxBytes {
		return fmt.Errorf("queue %s: bundle %s: %w (%d bytes, bound %d)", q.name, name, ErrTooBig, info.Size, maxBytes)
	}
	n, err := io.Copy(w, io.LimitReader(obj, maxBytes+1))
	if err != nil {
		return fmt.Errorf("queue %s: bundle %s: %w", q.name, name, err)
	}
	if n > maxBytes {
		return fmt.Errorf("queue %s: bundle %s: %w (bound %d)", q.name, name, ErrTooBig, maxBytes)
	}
	return nil
}

// boundedReader fails once more than left bytes were read.
type boundedReader struct {
	r    io.Reader
	left int64
	over bool
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		b.over = true
		return n, ErrTooBig
	}
	return n, err
}
