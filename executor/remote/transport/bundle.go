package transport

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
)

// maxHeader bounds the bytes of a bundle's header (its lines before the
// pack) that are read: a header longer than this is refused as corrupt.
// A thin bundle of a lot's commits has one ref and a few prerequisites;
// 1 MiB holds more than ten thousand prerequisite lines.
const maxHeader = 1 << 20

// maxPrerequisites bounds the prerequisites of a result bundle: each is
// one ancestry question to git on the lead.
const maxPrerequisites = 1000

// Ref is one ref a bundle names: its object id (hex) and full name.
type Ref struct {
	OID  string
	Name string
}

// header is what a bundle's header says (gitformat-bundle(5)): its
// version (2 or 3), the v3 capabilities ("object-format=sha256"), its
// prerequisites (object ids the reader must have) and its refs, in file
// order.
type header struct {
	Version       int
	Capabilities  []string
	Prerequisites []string
	Refs          []Ref
	// Size is the header's length in bytes, its blank line included:
	// where the pack begins.
	Size int64
}

// readHeader reads the header of the bundle file at path: at most
// maxHeader bytes, up to the blank line before the pack.
func readHeader(path string) (header, error) {
	f, err := os.Open(path)
	if err != nil {
		return header{}, err
	}
	defer f.Close()
	return parseHeader(io.LimitReader(f, maxHeader))
}

// parseHeader parses a bundle header from r up to and including its
// terminating blank line (what follows is the pack, not read). Errors
// say which line is wrong; a header cut before its blank line is one.
func parseHeader(r io.Reader) (header, error) {
	br := bufio.NewReader(r)
	var h header
	line := func() (string, error) {
		s, err := br.ReadString('\n')
		h.Size += int64(len(s))
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "", errors.New("the header ends before its blank line")
			}
			return "", err
		}
		return strings.TrimSuffix(s, "\n"), nil
	}
	sig, err := line()
	if err != nil {
		return h, err
	}
	switch sig {
	case "# v2 git bundle":
		h.Version = 2
	case "# v3 git bundle":
		h.Version = 3
	default:
		return h, fmt.Errorf("not a git bundle (first line %.40q)", sig)
	}
	for n := 2; ; n++ {
		s, err := line()
		if err != nil {
			return h, err
		}
		switch {
		case s == "":
			return h, nil
		case strings.HasPrefix(s, "@"):
			if h.Version < 3 || len(h.Prerequisites) > 0 || len(h.Refs) > 0 {
				return h, fmt.Errorf("line %d: a capability out of place", n)
			}
			h.Capabilities = append(h.Capabilities, s[1:])
		case strings.HasPrefix(s, "-"):
			oid, _, _ := strings.Cut(s[1:], " ")
			if !isOID(oid) {
				return h, fmt.Errorf("line %d: a prerequisite that is no object id", n)
			}
			if len(h.Refs) > 0 {
				return h, fmt.Errorf("line %d: a prerequisite after the refs", n)
			}
			h.Prerequisites = append(h.Prerequisites, oid)
		default:
			ref, err := parseRefLine(s)
			if err != nil {
				return h, fmt.Errorf("line %d: %w", n, err)
			}
			h.Refs = append(h.Refs, ref)
		}
	}
}

// parseListHeads parses the output of `git bundle list-heads FILE`: one
// "<oid> <refname>" line per ref.
func parseListHeads(out string) ([]Ref, error) {
	var refs []Ref
	for _, s := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if s == "" {
			continue
		}
		ref, err := parseRefLine(s)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// parseRefLine parses "<oid> <refname>": a hex object id, one space, a
// ref name with no space or control character.
func parseRefLine(s string) (Ref, error) {
	oid, name, ok := strings.Cut(s, " ")
	if !ok || !isOID(oid) {
		return Ref{}, fmt.Errorf("not a ref line: %.80q", s)
	}
	if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return Ref{}, fmt.Errorf("not a ref name: %.80q", name)
	}
	return Ref{OID: oid, Name: name}, nil
}

// isOID says whether s is a full lowercase hex object id (SHA-1 or
// SHA-256).
func isOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// emptyBundle returns a bundle naming ref at oid with oid as its only
// prerequisite and a pack of no objects (gitformat-bundle(5),
// gitformat-pack(5)): the bundle of an empty range, which `git bundle
// create` refuses to write. objectFormat is the repository's ("sha1" or
// "sha256": `git rev-parse --show-object-format`).
func emptyBundle(objectFormat, ref, oid string) ([]byte, error) {
	var b bytes.Buffer
	var sum hash.Hash
	switch objectFormat {
	case "sha1":
		b.WriteString("# v2 git bundle\n")
		sum = sha1.New()
	case "sha256":
		b.WriteString("# v3 git bundle\n@object-format=sha256\n")
		sum = sha256.New()
	default:
		return nil, fmt.Errorf("object format %q", objectFormat)
	}
	fmt.Fprintf(&b, "-%s\n%s %s\n\n", oid, oid, ref)
	pack := []byte("PACK")
	pack = binary.BigEndian.AppendUint32(pack, 2) // version
	pack = binary.BigEndian.AppendUint32(pack, 0) // objects
	sum.Write(pack)
	b.Write(sum.Sum(pack))
	return b.Bytes(), nil
}
