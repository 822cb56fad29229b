package control

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/internal/ids"
	"github.com/cadence-run/cadence/internal/safefile"
	"github.com/cadence-run/cadence/internal/state"
)

// Only the lead steers (docs/running.md, Only the lead steers): each apply
// makes a random key (MakeKey) in a file only the user may read
// (layout.Wave.SteerKey: 0600, in a 0700 folder no step can read), and
// removes it when it ends (RemoveKey). The steering client reads it and
// signs each request it sends (Request.Sig: HMAC-SHA256 over the
// request's canonical content, hex); the apply's channel (Channel.Keys)
// refuses a request without a valid signature (ErrUnsigned).

// keyBytes is a steering key's length (random bytes; the file holds them
// as hex).
const keyBytes = 32

// ErrUnsigned is wrapped by the error of a request that is not signed with
// one of the channel's keys.
var ErrUnsigned = errors.New("a request not signed by the lead's cadence: refused")

// MakeKey makes a new key at path (0600, its folder made 0700 and refused
// when others may write it), replacing a key left by an apply that was
// killed, and returns it with that left key (nil when there was none): an
// apply also takes, at its start, what its killed predecessor was sent.
func MakeKey(path string) (key, left []byte, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("make the steering key's folder: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("make the steering key's folder private: %w", err)
	}
	if st, err := os.Lstat(dir); err != nil {
		return nil, nil, err
	} else if err := ownOnly(dir, st, true); err != nil {
		return nil, nil, err
	}
	left, err = ReadKey(path)
	if err != nil {
		left = nil
	}
	key = []byte(ids.Hex(keyBytes))
	if err := state.WriteFileAtomic(path, key); err != nil {
		return nil, nil, fmt.Errorf("write the steering key: %w", err)
	}
	return key, left, nil
}

// ReadKey reads the key at path; a file that is not this user's, or that
// others may read, is refused (ErrForeign). A missing key wraps
// fs.ErrNotExist.
func ReadKey(path string) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := ownOnly(path, st, false); err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read by others (mode %v): %w", path, st.Mode().Perm(), ErrForeign)
	}
	data, err := safefile.Read(path, 4*keyBytes)
	if err != nil {
		return nil, err
	}
	key := []byte(strings.TrimSpace(string(data)))
	if len(key) != 2*keyBytes {
		return nil, fmt.Errorf("damaged steering key %s", path)
	}
	return key, nil
}

// RemoveKey removes the key at path when it is still key (a later apply
// may have made its own).
func RemoveKey(path string, key []byte) error {
	if cur, err := ReadKey(path); err != nil || !hmac.Equal(cur, key) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// canonical is the content a request's signature covers: every field but
// Sig, Sent in Unix nanoseconds.
func canonical(r Request) []byte {
	data, _ := json.Marshal(struct {
		ID   string   `json:"id"`
		Kind Kind     `json:"kind"`
		Lots []string `json:"lots"`
		Now  bool     `json:"now"`
		Lot  string   `json:"lot"`
		Text string   `json:"text"`
		PID  int      `json:"pid"`
		Sent int64    `json:"sent"`
	}{r.ID, r.Kind, r.Lots, r.Now, r.Lot, r.Text, r.PID, r.Sent.UnixNano()})
	return data
}

// sign is r's signature with key (hex).
func sign(key []byte, r Request) string {
	m := hmac.New(sha256.New, key)
	m.Write(canonical(r))
	return hex.EncodeToString(m.Sum(nil))
}

// signedBy reports whether r carries a valid signature by one of keys.
func signedBy(keys [][]byte, r Request) bool {
	got, err := hex.DecodeString(r.Sig)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	for _, k := range keys {
		want, _ := hex.DecodeString(sign(k, r))
		if hmac.Equal(got, want) {
			return true
		}
	}
	return false
}
