package proc

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// maxRequestFiles bounds the descriptors one request passes: the three
// standard files and the held ones.
const maxRequestFiles = 64

// maxRequestBytes bounds a request's body (its argv and environment; Linux
// allows at most a few MiB of those to a process anyway).
const maxRequestBytes = 64 << 20

// request is one step Run asks a supervisor to run, on the supervisor's
// socket: a 4-byte big-endian length, with the step's descriptors attached
// (SCM_RIGHTS), then that many bytes of this as JSON.
type request struct {
	// Path is the program, looked up by cadence; Argv its whole argv.
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	// Env is the step's whole environment; Dir its working folder.
	Env []string `json:"env"`
	Dir string   `json:"dir"`
	// Grace is the time between SIGTERM and SIGKILL of a stop request.
	Grace time.Duration `json:"grace"`
	// Std are the indexes, among the attached descriptors, of the step's
	// stdin, stdout and stderr (-1: /dev/null); Hold, of the files the
	// supervisor keeps open until the step's tree is gone (Cmd.Hold).
	Std  [3]int `json:"std"`
	Hold []int  `json:"hold"`
}

// sendRequest writes q on conn with files attached.
func sendRequest(conn *net.UnixConn, q request, files []*os.File) error {
	if len(files) > maxRequestFiles {
		return fmt.Errorf("%d files for one step: at most %d", len(files), maxRequestFiles)
	}
	body, err := json.Marshal(q)
	if err != nil {
		return err
	}
	hdr := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = syscall.UnixRights(fds...)
	}
	if _, _, err := conn.WriteMsgUnix(hdr, oob, nil); err != nil {
		return err
	}
	_, err = conn.Write(body)
	return err
}

// readRequest reads the next request from conn, and the descriptors that
// came with it (close-on-exec). io.EOF: conn ended between requests.
func readRequest(conn *net.UnixConn) (request, []*os.File, error) {
	var q request
	hdr := make([]byte, 4)
	oob := make([]byte, syscall.CmsgSpace(4*maxRequestFiles))
	n, oobn, _, _, err := conn.ReadMsgUnix(hdr, oob)
	if err != nil {
		return q, nil, err
	}
	var files []*os.File
	if oobn > 0 {
		msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return q, nil, err
		}
		for i := range msgs {
			fds, err := syscall.ParseUnixRights(&msgs[i])
			if err != nil {
				continue
			}
			for _, fd := range fds {
				files = append(files, os.NewFile(uintptr(fd), "step file"))
			}
		}
	}
	fail := func(err error) (request, []*os.File, error) {
		for _, f := range files {
			f.Close()
		}
		return q, nil, err
	}
	if n == 0 && oobn == 0 {
		return fail(io.EOF)
	}
	if _, err := io.ReadFull(conn, hdr[n:]); err != nil {
		return fail(err)
	}
	size := binary.BigEndian.Uint32(hdr)
	if size > maxRequestBytes {
		return fail(errors.New("request too large"))
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(conn, body); err != nil {
		return fail(err)
	}
	if err := json.Unmarshal(body, &q); err != nil {
		return fail(err)
	}
	return q, files, nil
}
