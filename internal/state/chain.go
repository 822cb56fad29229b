package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
)

// The journal's chain of digests (docs/running.md, State and resume): each
// record a Store appends ends with "digest", sha256 over the previous
// record's digest, a newline, and the record's JSON without the digest;
// the state file's JournalHead is the digest of the last record it holds.
// A record edited, reordered, or added by anything that does not follow
// the chain is refused on replay. The chain has no secret: it detects a
// forgery that does not recompute it, and the step sandbox keeps steps
// from writing the journal at all.

// ErrJournalForged is wrapped by the error of a journal whose records do
// not follow the chain of digests cadence wrote.
var ErrJournalForged = errors.New("the journal was changed by something other than cadence (a record edited, reordered or added: its digests do not chain)")

// chainGenesis is the head of a chain no record was written to yet.
const chainGenesis = "0000000000000000000000000000000000000000000000000000000000000000"

// digestSuffix ends a chained record: `,"digest":"<64 hex>"}`.
const digestSuffix = `,"digest":"`

// chainDigest is the digest of the record body (its JSON without the
// digest) following prev.
func chainDigest(prev string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write([]byte{'\n'})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// withDigest is the journal line of body (a JSON object) with its digest
// as the last field, newline-terminated.
func withDigest(body []byte, digest string) []byte {
	line := make([]byte, 0, len(body)+len(digestSuffix)+len(digest)+3)
	line = append(line, body[:len(body)-1]...)
	line = append(line, digestSuffix...)
	line = append(line, digest...)
	return append(line, '"', '}', '\n')
}

// splitDigest takes the digest off a journal line (trimmed): the record's
// body as it was hashed, the digest, and whether the line had one.
func splitDigest(line []byte) (body []byte, digest string, ok bool) {
	const n = len(digestSuffix) + 64 + 2
	if len(line) < n+2 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return line, "", false
	}
	tail := line[len(line)-n:]
	if !bytes.HasPrefix(tail, []byte(digestSuffix)) {
		return line, "", false
	}
	d := string(tail[len(digestSuffix) : len(digestSuffix)+64])
	if _, err := hex.DecodeString(d); err != nil {
		return line, "", false
	}
	body = append(bytes.Clone(line[:len(line)-n]), '}')
	return body, d, true
}
