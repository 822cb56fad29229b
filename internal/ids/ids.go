// Package ids makes the random identifiers cadence records: session ids,
// a state file's lineage, steering request ids, and the apply's steering
// key (executor/control). Every one is drawn from crypto/rand, so Hex is
// fit for a secret as well as a name.
package ids

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// UUID returns a random (version 4, RFC 9562) UUID in its 36-character
// text form, e.g. "0b4f6c1e-3d2a-4c8e-9f10-5a6b7c8d9e0f".
func UUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Hex returns n random bytes as 2n lowercase hexadecimal digits.
func Hex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
