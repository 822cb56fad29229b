package gitint

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/proc"
)

// The witness of the lead's moves (docs/integration.md, "Detection, always"). While a wave runs,
// the cadence process that installed a repository's guard listens on a
// unix socket, <common>/cadence/witness.sock (witnessPath), mode 0600. At
// "committed", the lead-side reference-transaction hook of a git process
// that is_step does not take for a step's runs the witness client (the
// cadence binary's hidden subcommand WitnessCommand, ReportToWitness),
// which sends the updates of guarded refs, one a line "<old> <new> <ref>",
// and waits for the answer. The witness takes the client's pid from the
// kernel (SO_PEERCRED, peerPid), not from anything the client says, and
// walks its parents (proc.Below): a process below the owner of the guard
// (this process: every step of the wave runs below it) is a step posing
// as the lead, and its report is refused (kept for Refusals); a process
// whose parents /proc cannot show is not believed; any other's moves are
// recorded in memory, with the time they were received (OutsideMoves).
// Nothing on disk is trusted: a step that writes files or runs git
// without hooks cannot add a move to what the witness holds.
//
// The witness lives as long as the guard: InstallGuard starts it (or
// keeps the one this process runs, for RepairGuard), its removal closes it
// (and the socket file goes); a socket file left by a killed cadence is
// removed by the next install or by cadence clean. The hook runs the
// client only while the socket exists, and the client gives up after
// witnessTimeout: the lead's git never waits longer, never fails for it.

// WitnessCommand is the hidden subcommand of the cadence binary that runs
// the witness client: `cadence __witness <socket>`, the report on its
// standard input (internal/cli hands it to ReportToWitness). It is not
// meant for users and is not listed in the help.
const WitnessCommand = "__witness"

// witnessSock is the socket's name in <common>/cadence.
const witnessSock = "witness.sock"

// witnessTimeout bounds a report: the client's connection, write and
// wait for the answer, and the witness's reading of it.
const witnessTimeout = 2 * time.Second

// witnessMaxReport bounds a report's bytes (a fetch of hundreds of tags
// fits); a longer one is refused whole.
const witnessMaxReport = 64 << 10

// witnessMaxMoves bounds the moves the witness holds: past it the oldest
// are dropped (a move of the lead's the witness no longer holds is put
// back as an incident, its value under a rescue ref).
const witnessMaxMoves = 4096

// witnessMaxRefusals bounds the refused reports held until taken.
const witnessMaxRefusals = 64

// witnessConns bounds the reports the witness reads at once.
const witnessConns = 8

// maxSunPath is the longest socket path bound or dialled as it is (the
// kernel's sun_path holds 108 bytes with the final NUL); a longer one is
// reached through its folder's file descriptor (sockAddr).
const maxSunPath = 100

// witnessPath is the witness's socket for the repository whose git common
// dir is common: beside the guard folder, which InstallGuard replaces
// whole while the witness keeps listening.
func witnessPath(common string) string {
	return filepath.Join(filepath.Dir(layout.RepoGuard(common)), witnessSock)
}

// Refusal is a report the witness refused because the process that sent
// it runs below cadence (a step's): when, the pid, and the moves it
// claimed as the lead's.
type Refusal struct {
	When  time.Time
	Pid   int
	Moves []RefMove
}

// String says what was refused, for an incident.
func (r Refusal) String() string {
	var ms []string
	for _, m := range r.Moves {
		ms = append(ms, m.String())
	}
	what := strings.Join(ms, ", ")
	if what == "" {
		what = "no move it could parse"
	}
	return fmt.Sprintf("a process of a step (pid %d, below cadence) posed as the lead: it reported %s to cadence's witness as the lead's; refused, nothing recorded", r.Pid, what)
}

// witness is one repository's (see above).
type witness struct {
	ln   net.Listener
	done chan struct{}
	wg   sync.WaitGroup
	// dir holds the socket's folder open while the socket is bound
	// through it (sockAddr); nil otherwise.
	dir *os.File

	mu      sync.Mutex
	owner   int
	moves   []OutsideMove
	refused []Refusal
}

// witnesses are the witnesses this process runs, by git common dir.
var witnesses sync.Map // common dir -> *witness

// startWitness starts the witness of the repository whose git common dir
// is common, or keeps the one this process runs, with owner (the process
// whose descendants are steps) as the guard's owner. The caller holds the
// repository's lock (one wave per repository), so a socket file already
// there is a dead cadence's: it is removed.
func startWitness(common string, owner int) (*witness, error) {
	if v, ok := witnesses.Load(common); ok {
		w := v.(*witness)
		w.mu.Lock()
		w.owner = owner
		w.mu.Unlock()
		return w, nil
	}
	path := witnessPath(common)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	addr, dir, err := sockAddr(path)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", addr)
	if err != nil {
		if dir != nil {
			dir.Close()
		}
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		if dir != nil {
			dir.Close()
		}
		return nil, err
	}
	w := &witness{ln: ln, done: make(chan struct{}), dir: dir, owner: owner}
	witnesses.Store(common, w)
	go w.serve()
	return w, nil
}

// stopWitness closes the witness of common, if this process runs one:
// the socket is removed, and it returns once every report in progress
// has ended (each is bounded by witnessTimeout).
func stopWitness(common string) {
	v, ok := witnesses.LoadAndDelete(common)
	if !ok {
		return
	}
	w := v.(*witness)
	w.ln.Close()
	<-w.done
	w.wg.Wait()
	if w.dir != nil {
		w.dir.Close()
	}
}

// removeStaleSocket removes the socket file of common when this process
// runs no witness there (a killed cadence's, for cadence clean).
func removeStaleSocket(common string) error {
	if _, ok := witnesses.Load(common); ok {
		return nil
	}
	if err := os.Remove(witnessPath(common)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// sockAddr is the address to bind or dial for the socket at path: path
// itself when it fits sun_path, else the same file reached through an
// open descriptor of its folder (/proc/self/fd/<n>/<name>), which the
// caller closes once the socket is closed (bound) or connected (dialled).
func sockAddr(path string) (string, *os.File, error) {
	if len(path) <= maxSunPath {
		return path, nil, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path)), dir, nil
}

// serve accepts reports until the listener closes, witnessConns at once.
func (w *witness) serve() {
	defer close(w.done)
	slots := make(chan struct{}, witnessConns)
	for {
		c, err := w.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(50 * time.Millisecond) // out of descriptors: a report waits
			continue
		}
		slots <- struct{}{}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer func() { <-slots }()
			w.handle(c)
		}()
	}
}

// Answers of the witness to a report (the client's exit ignores them; a
// refused one is said on its standard error).
const (
	witnessOK         = "ok"
	witnessRefused    = "refused"
	witnessUnverified = "unverified"
)

// handle reads one report and answers it (see above).
func (w *witness) handle(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(witnessTimeout))
	pid := peerPid(c)
	b, err := io.ReadAll(io.LimitReader(c, witnessMaxReport+1))
	if err != nil || len(b) > witnessMaxReport {
		_, _ = io.WriteString(c, witnessUnverified+"\n")
		return
	}
	moves := parseReport(string(b))
	w.mu.Lock()
	owner := w.owner
	w.mu.Unlock()
	below, known := proc.Below(pid, owner)
	now := time.Now()
	answer := witnessOK
	w.mu.Lock()
	switch {
	case below:
		answer = witnessRefused
		w.refused = append(w.refused, Refusal{When: now, Pid: pid, Moves: moves})
		if n := len(w.refused) - witnessMaxRefusals; n > 0 {
			w.refused = w.refused[n:]
		}
	case !known:
		answer = witnessUnverified
	default:
		for _, m := range moves {
			w.moves = append(w.moves, OutsideMove{When: now, RefMove: m})
		}
		if n := len(w.moves) - witnessMaxMoves; n > 0 {
			w.moves = append([]OutsideMove(nil), w.moves[n:]...)
		}
	}
	w.mu.Unlock()
	_, _ = io.WriteString(c, answer+"\n")
}

// parseReport reads a report's lines "<old> <new> <ref>" (git's
// reference-transaction input) for branches and tags; other lines are
// skipped. A created ref has Old "", a deleted one New "".
func parseReport(s string) []RefMove {
	var out []RefMove
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !isOID(f[0]) || !isOID(f[1]) ||
			!(strings.HasPrefix(f[2], "refs/heads/") || strings.HasPrefix(f[2], "refs/tags/")) {
			continue
		}
		m := RefMove{Ref: f[2], Old: f[0], New: f[1]}
		if zeroOID(m.Old) {
			m.Old = ""
		}
		if zeroOID(m.New) {
			m.New = ""
		}
		out = append(out, m)
	}
	return out
}

// isOID says whether s is an object name: 40 (SHA-1) or 64 (SHA-256)
// lowercase hex digits.
func isOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// witnessed returns the moves the witness of common recorded at since or
// later, oldest first (none when this process runs no witness there), and
// takes the refusals it holds (each is handed out once).
func witnessed(common string, since time.Time, takeRefusals bool) ([]OutsideMove, []Refusal) {
	v, ok := witnesses.Load(common)
	if !ok {
		return nil, nil
	}
	w := v.(*witness)
	w.mu.Lock()
	defer w.mu.Unlock()
	var moves []OutsideMove
	for _, m := range w.moves {
		if !m.When.Before(since) {
			moves = append(moves, m)
		}
	}
	var refused []Refusal
	if takeRefusals {
		refused, w.refused = w.refused, nil
	}
	return moves, refused
}

// ReportToWitness is the witness client (WitnessCommand): it sends the
// report in (at most witnessMaxReport bytes; git's reference-transaction
// lines, read until in ends) to the witness listening at sock and returns its answer: "ok",
// "refused" (the client runs below cadence), "unverified". Everything is
// bounded by witnessTimeout; no witness there is an error.
func ReportToWitness(sock string, in io.Reader) (string, error) {
	deadline := time.Now().Add(witnessTimeout)
	// Standard input is read first, within the deadline (the goroutine
	// of a report that never comes ends with the client's process).
	read := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(in, witnessMaxReport))
		read <- b
	}()
	var report []byte
	select {
	case report = <-read:
	case <-time.After(time.Until(deadline)):
		return "", errors.New("no report on standard input")
	}
	addr, dir, err := sockAddr(sock)
	if err != nil {
		return "", err
	}
	d := net.Dialer{Deadline: deadline}
	c, err := d.Dial("unix", addr)
	if dir != nil {
		dir.Close()
	}
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	if _, err := c.Write(report); err != nil {
		return "", err
	}
	if uc, ok := c.(*net.UnixConn); ok {
		_ = uc.CloseWrite()
	}
	b, err := io.ReadAll(io.LimitReader(c, 256))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
