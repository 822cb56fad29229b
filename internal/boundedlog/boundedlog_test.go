package boundedlog

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
)

// want is what a Writer of limit must leave in its destination after all
// of data was written (in any chunks) and Close: the data whole when it
// fits, else its first limit/2 bytes, the marker, and its last limit-limit/2.
func want(data []byte, limit int64) []byte {
	limit = max(limit, MinLimit)
	h, t := limit/2, limit-limit/2
	if int64(len(data)) <= h+t {
		return data
	}
	out := append([]byte{}, data[:h]...)
	out = append(out, Marker(int64(len(data))-h-t)...)
	return append(out, data[int64(len(data))-t:]...)
}

// check writes data to a Writer in the chunk sizes sizes gives and
// compares the result with want.
func check(t *testing.T, data []byte, limit int64, sizes func() int) {
	t.Helper()
	var dst bytes.Buffer
	w := New(&dst, limit, func(err error) { t.Fatalf("onError: %v", err) })
	for rest := data; len(rest) > 0; {
		k := min(max(sizes(), 0), len(rest))
		n, err := w.Write(rest[:k])
		if n != k || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v; want %d, nil", k, n, err, k)
		}
		rest = rest[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, exp := dst.Bytes(), want(data, limit); !bytes.Equal(got, exp) {
		t.Fatalf("limit %d, %d bytes written: got %d bytes %q…, want %d bytes %q…", limit, len(data), len(got), head(got), len(exp), head(exp))
	}
	if w.Total() != int64(len(data)) {
		t.Errorf("Total = %d, want %d", w.Total(), len(data))
	}
	if d, lim := w.Dropped(), max(limit, MinLimit); d != max(0, int64(len(data))-lim) {
		t.Errorf("Dropped = %d, want %d", d, max(0, int64(len(data))-lim))
	}
}

func head(b []byte) []byte { return b[:min(len(b), 40)] }

func TestUnderTheLimitPassesThroughWhole(t *testing.T) {
	data := []byte(strings.Repeat("line of output\n", 100)) // 1500 bytes
	check(t, data, 4096, func() int { return 7 })
	check(t, data, 1500, func() int { return 1500 })
	check(t, nil, 4096, func() int { return 1 })
}

func TestOverTheLimitKeepsHeadAndTailAroundOneLine(t *testing.T) {
	var data []byte
	for i := range 10000 {
		data = append(data, []byte(strings.Repeat("y", i%13)+"\n")...)
	}
	for _, limit := range []int64{0, 1024, 1025, 4096, 10000, int64(len(data)) - 1, int64(len(data))} {
		for _, chunk := range []int{1, 3, 512, 4096, len(data)} {
			check(t, data, limit, func() int { return chunk })
		}
	}
	var dst bytes.Buffer
	w := New(&dst, 2048, nil)
	_, _ = w.Write(data)
	_ = w.Close()
	if n := bytes.Count(dst.Bytes(), []byte("cadence dropped")); n != 1 {
		t.Fatalf("the output holds %d dropped lines, want 1:\n%s", n, dst.Bytes())
	}
}

// TestAnyChunking compares random chunkings of random data with want: the
// ring's wrap-around at every offset.
func TestAnyChunking(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		data := make([]byte, rng.IntN(9000))
		for i := range data {
			data[i] = byte('a' + rng.IntN(26))
		}
		limit := int64(rng.IntN(5000))
		maxChunk := 1 + rng.IntN(3000)
		check(t, data, limit, func() int { return rng.IntN(maxChunk + 1) })
	}
}

func FuzzWriter(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint16(1024), uint8(3))
	f.Add(bytes.Repeat([]byte("y\n"), 3000), uint16(1500), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16, chunk uint8) {
		check(t, data, int64(limit), func() int { return int(chunk) + 1 })
	})
}

// TestDrainsWhatItDoesNotKeep: a copy of 64 MiB through a 4 KiB Writer
// ends (the pipe is never left unread) and keeps 4 KiB and a line.
func TestDrainsWhatItDoesNotKeep(t *testing.T) {
	var dst bytes.Buffer
	w := New(&dst, 4096, nil)
	const size = 64 << 20
	n, err := io.Copy(w, io.LimitReader(yes{}, size))
	if n != size || err != nil {
		t.Fatalf("copy = %d, %v", n, err)
	}
	_ = w.Close()
	if dst.Len() != 4096+len(Marker(size-4096)) {
		t.Fatalf("kept %d bytes, want %d", dst.Len(), 4096+len(Marker(size-4096)))
	}
}

type yes struct{}

func (yes) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "y\n"[i%2]
	}
	return len(p), nil
}

// failing accepts ok bytes, then writes part of what it is given and fails
// with ENOSPC, and counts the writes it was asked for.
type failing struct {
	ok     int
	got    bytes.Buffer
	writes int
}

func (f *failing) Write(p []byte) (int, error) {
	f.writes++
	if f.got.Len()+len(p) <= f.ok {
		return f.got.Write(p)
	}
	k := f.ok - f.got.Len()
	f.got.Write(p[:k])
	f.ok = f.got.Len() // full from now on
	return k, syscall.ENOSPC
}

// TestWriteErrorStopsWritingAndIsReportedOnce: after the destination's
// first error nothing more is written to it, even when it has room again
// (space freed by another process is not taken back); the caller never
// sees an error from Write; onError is called once.
func TestWriteErrorStopsWritingAndIsReportedOnce(t *testing.T) {
	dst := &failing{ok: 100}
	var reported []error
	w := New(dst, 1<<20, func(err error) { reported = append(reported, err) })
	for range 50 {
		if n, err := w.Write([]byte("0123456789abcdef")); n != 16 || err != nil {
			t.Fatalf("Write = %d, %v; want 16, nil", n, err)
		}
	}
	writes := dst.writes
	dst.ok = 1 << 30 // space is freed
	for range 50 {
		_, _ = w.Write([]byte("more"))
	}
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close = %v, want ENOSPC", err)
	}
	if dst.writes != writes {
		t.Errorf("the destination got %d writes after its error, want none", dst.writes-writes)
	}
	if len(reported) != 1 || !errors.Is(reported[0], syscall.ENOSPC) {
		t.Errorf("onError got %v, want one ENOSPC", reported)
	}
	if !errors.Is(w.Err(), syscall.ENOSPC) || dst.got.Len() != 100 {
		t.Errorf("Err = %v, kept %d bytes; want ENOSPC, 100", w.Err(), dst.got.Len())
	}
}

// TestWriteErrorAtClose: the tail's write failing is reported as well.
func TestWriteErrorAtClose(t *testing.T) {
	dst := &failing{ok: 600}
	var reported int
	w := New(dst, 1024, func(error) { reported++ })
	_, _ = w.Write(bytes.Repeat([]byte("x"), 5000))
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) || reported != 1 {
		t.Fatalf("Close = %v with %d reports, want ENOSPC and 1", err, reported)
	}
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) || reported != 1 {
		t.Fatalf("second Close = %v with %d reports, want ENOSPC and still 1", err, reported)
	}
}
