// Package control is the request channel between the commands that steer
// a wave (`cadence drop`, `cadence stop`, `cadence answer`) and the apply
// that runs it (docs/running.md, Steering a live wave).
//
// The channel is a folder next to the wave lock, <state file>.requests
// (layout.Wave.Requests), private to the user (0700). A command writes one
// request file, <unix nanoseconds>-<id>.req.json, atomically (a temporary
// file, fsync, rename, fsync of the folder): once Send returns, the request
// survives a crash of the command and of the apply. The apply reads the
// pending requests (Pending), records their effect in the wave's state,
// then writes the acknowledgement, <id>.ack.json, atomically and removes
// the request (Ack): a request whose effect was recorded but not yet
// acknowledged when the apply died is taken again by whoever comes next,
// so every effect must be idempotent. The command waits for the
// acknowledgement (ReadAck); when the apply is gone first, the command,
// holding the wave lock, withdraws the request (Withdraw) and records it
// itself, or the next apply takes it when it starts.
//
// Only the owner may use the channel: a folder not owned by this user, or
// that others may write, is refused (ErrForeign), and so is a request file
// of another owner. A request file is at most MaxRequestBytes.
//
// The package holds the channel's files (Channel) and the commands' side of
// it (Client: lock probe, send, wait for the acknowledgement, withdraw);
// what a request does is the executor's (applied by the live apply) and
// the command's (internal/cli, when no apply is live).
package control

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/cadence-run/cadence/internal/ids"
	"github.com/cadence-run/cadence/internal/safefile"
	"github.com/cadence-run/cadence/internal/state"
)

// Kind is what a request asks.
type Kind string

// Request kinds.
const (
	// KindDrop: hand back the lots Lots (dropped by the lead); Now stops a
	// running lot's step instead of letting it end.
	KindDrop Kind = "drop"
	// KindStop: no new step or lot starts; running steps end; the wave
	// ends interrupted (resumable). It lasts one run.
	KindStop Kind = "stop"
	// KindAnswer: the answer Text to the question lot Lot waits on.
	KindAnswer Kind = "answer"
)

// MaxRequestBytes caps a request file (an answer's text is most of it).
const MaxRequestBytes = 1 << 20

// ErrForeign is wrapped by the error of a channel folder or request file
// that is not the user's own, or that others may write.
var ErrForeign = errors.New("not private to this user")

// Request is one request, as its file holds it (JSON, snake_case).
type Request struct {
	// ID is random (16 hex digits): the acknowledgement's file name.
	ID   string   `json:"id"`
	Kind Kind     `json:"kind"`
	Lots []string `json:"lots,omitempty"`
	Now  bool     `json:"now,omitempty"`
	Lot  string   `json:"lot,omitempty"`
	Text string   `json:"text,omitempty"`
	// PID is the sending command's process id; Sent when it sent it.
	PID  int       `json:"pid"`
	Sent time.Time `json:"sent"`
	// Sig is the request's signature with the live apply's key (hex
	// HMAC-SHA256, key.go); empty when sent without a key.
	Sig string `json:"sig,omitempty"`
}

// Result is what became of one lot of a request.
type Result struct {
	Lot string `json:"lot"`
	// Taken says the request holds for the lot; else Reason says why it
	// was refused. When taken, Reason says what happens now.
	Taken  bool   `json:"taken"`
	Reason string `json:"reason"`
}

// Ack is the acknowledgement of a request.
type Ack struct {
	ID string `json:"id"`
	// PID is the process that took the request (an apply, or the command
	// itself when no apply was live); Taken when.
	PID   int       `json:"pid"`
	Taken time.Time `json:"taken"`
	// Results are per lot (drop, answer); Note says what the request did
	// as a whole (stop), or why it was refused.
	Results []Result `json:"results,omitempty"`
	Note    string   `json:"note,omitempty"`
}

// Channel is the request folder of one wave. Keys, when set, are the
// steering keys (key.go): Send signs with the first, Pending refuses a
// request signed with none of them (ErrUnsigned). Without keys, requests
// are neither signed nor checked (the commands' side at rest).
type Channel struct {
	Dir  string
	Keys [][]byte
}

// NewID returns a fresh request id.
func NewID() string { return ids.Hex(8) }

const (
	reqSuffix = ".req.json"
	ackSuffix = ".ack.json"
)

// Send writes r durably (r.ID and r.Sent are set when empty) and returns
// it. The folder is made (0700) when missing.
func (c Channel) Send(r Request) (Request, error) {
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.Sent.IsZero() {
		r.Sent = time.Now().UTC()
	}
	r.Sig = ""
	if len(c.Keys) > 0 {
		r.Sig = sign(c.Keys[0], r)
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return r, fmt.Errorf("make the request folder: %w", err)
	}
	if err := c.private(); err != nil {
		return r, err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return r, err
	}
	return r, c.write(requestName(r), data)
}

// requestName is the file name of request r: <unix nanoseconds>-<id>.req.json.
func requestName(r Request) string {
	return fmt.Sprintf("%020d-%s%s", r.Sent.UnixNano(), r.ID, reqSuffix)
}

// write puts data under name atomically and durably
// (state.WriteFileAtomic: a temporary ".<name>.tmp-*", fsync, rename, fsync
// of the folder).
func (c Channel) write(name string, data []byte) error {
	return state.WriteFileAtomic(filepath.Join(c.Dir, name), data)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// private checks that the folder is this user's and that no one else may
// write it.
func (c Channel) private() error {
	st, err := os.Lstat(c.Dir)
	if err != nil {
		return err
	}
	return ownOnly(c.Dir, st, true)
}

// ownOnly refuses a file or folder of another owner, or one others may
// write (a folder), or that is not what it should be.
func ownOnly(path string, st fs.FileInfo, dir bool) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case dir && !st.IsDir():
		return fmt.Errorf("%s is not a folder: %w", path, ErrForeign)
	case !dir && !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file: %w", path, ErrForeign)
	case ok && int(sys.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to user %d: %w", path, sys.Uid, ErrForeign)
	case dir && st.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s may be written by others (mode %v; chmod 700 it if it is yours): %w", path, st.Mode().Perm(), ErrForeign)
	}
	return nil
}

// Pending returns the requests waiting in the channel, oldest first. A
// missing folder has none. A request file that cannot be read or parsed,
// or is not the user's, or (with Keys) is not signed with one of them
// (ErrUnsigned), is returned in bad with why, by file name: the
// caller acknowledges it as refused (AckBad) so that it never blocks the
// channel.
func (c Channel) Pending() (reqs []Request, bad map[string]error, err error) {
	ents, err := os.ReadDir(c.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := c.private(); err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), reqSuffix) && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		r, rerr := c.read(name)
		if errors.Is(rerr, fs.ErrNotExist) {
			continue // withdrawn meanwhile
		}
		if rerr != nil {
			if bad == nil {
				bad = map[string]error{}
			}
			bad[name] = rerr
			continue
		}
		reqs = append(reqs, r)
	}
	return reqs, bad, nil
}

// read parses the request file name.
func (c Channel) read(name string) (Request, error) {
	path := filepath.Join(c.Dir, name)
	st, err := os.Lstat(path)
	if err != nil {
		return Request{}, err
	}
	if err := ownOnly(path, st, false); err != nil {
		return Request{}, err
	}
	data, err := safefile.Read(path, MaxRequestBytes)
	if err != nil {
		return Request{}, err
	}
	var r Request
	if err := json.Unmarshal(data, &r); err != nil {
		return Request{}, fmt.Errorf("damaged request %s: %w", name, err)
	}
	if r.ID == "" || !strings.HasSuffix(name, "-"+r.ID+reqSuffix) || !validID(r.ID) {
		return Request{}, fmt.Errorf("damaged request %s: its id does not match its name", name)
	}
	switch r.Kind {
	case KindDrop, KindStop, KindAnswer:
	default:
		return Request{}, fmt.Errorf("request %s: unknown kind %q", name, r.Kind)
	}
	if len(c.Keys) > 0 && !signedBy(c.Keys, r) {
		return Request{}, fmt.Errorf("request %s (%s): %w", name, r.Kind, ErrUnsigned)
	}
	return r, nil
}

// validID reports whether id is 16 lowercase hex digits (NewID's form): it
// names a file.
func validID(id string) bool {
	if len(id) != 16 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// Ack records the acknowledgement of r, then removes r's file.
func (c Channel) Ack(r Request, a Ack) error {
	a.ID = r.ID
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := c.write(r.ID+ackSuffix, data); err != nil {
		return err
	}
	_, err = c.Withdraw(r.ID)
	return err
}

// AckBad removes a request file that Pending could not read (its name), so
// that it never blocks the channel; its sender, if any, waits in vain and
// says the request was not taken.
func (c Channel) AckBad(name string) error {
	err := os.Remove(filepath.Join(c.Dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Withdraw removes the pending request id and reports whether it was still
// pending (not yet taken).
func (c Channel) Withdraw(id string) (bool, error) {
	matches, err := filepath.Glob(filepath.Join(c.Dir, "*-"+id+reqSuffix))
	if err != nil || len(matches) == 0 || !validID(id) {
		return false, err
	}
	for _, m := range matches {
		if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return true, syncDir(c.Dir)
}

// ReadAck returns the acknowledgement of request id and whether there is
// one yet; a found acknowledgement is removed (it is the sender's).
func (c Channel) ReadAck(id string) (Ack, bool, error) {
	path := filepath.Join(c.Dir, id+ackSuffix)
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Ack{}, false, nil
	}
	if err != nil {
		return Ack{}, false, err
	}
	if err := ownOnly(path, st, false); err != nil {
		return Ack{}, false, err
	}
	data, err := safefile.Read(path, MaxRequestBytes)
	if err != nil {
		return Ack{}, false, err
	}
	var a Ack
	if err := json.Unmarshal(data, &a); err != nil {
		return Ack{}, false, fmt.Errorf("damaged acknowledgement %s: %w", path, err)
	}
	_ = os.Remove(path)
	return a, true, nil
}

// Tidy removes acknowledgements older than age (their senders are gone) and
// temporary files of writes cut short.
func (c Channel) Tidy(age time.Duration, now time.Time) {
	ents, err := os.ReadDir(c.Dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ackSuffix) && !strings.Contains(name, ".tmp-") {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > age {
			_ = os.Remove(filepath.Join(c.Dir, name))
		}
	}
}
