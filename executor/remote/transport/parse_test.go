package transport

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const (
	oidA = "a7447a626c7683822137f4f5d0e4ce964298e622"
	oidB = "065017d5d1bd137d2ff75be8d1578ca3d983f65c"
	oid3 = "1f1a8d7b3c9e0e4f2a5b6c7d8e9f00112233445566778899aabbccddeeff0011"
)

// TestParseHeader reads the headers git writes (v2, v3 with the object
// format) and refuses what is not one.
func TestParseHeader(t *testing.T) {
	for _, c := range []struct {
		in   string
		want header
		err  string
	}{
		{"# v2 git bundle\n-" + oidB + " a\n" + oidA + " refs/heads/main\n\nPACK",
			header{Version: 2, Prerequisites: []string{oidB}, Refs: []Ref{{oidA, "refs/heads/main"}}}, ""},
		{"# v3 git bundle\n@object-format=sha256\n" + oid3 + " refs/heads/x\n\n",
			header{Version: 3, Capabilities: []string{"object-format=sha256"}, Refs: []Ref{{oid3, "refs/heads/x"}}}, ""},
		{"# v2 git bundle\n" + oidA + " refs/heads/main\n", header{}, "ends before its blank line"},
		{"# v4 git bundle\n\n", header{}, "not a git bundle"},
		{"# v2 git bundle\n@object-format=sha1\n\n", header{}, "capability out of place"},
		{"# v2 git bundle\n" + oidA + " refs/heads/main\n-" + oidB + "\n\n", header{}, "prerequisite after the refs"},
		{"# v2 git bundle\n" + oidA + " refs/heads/a b\n\n", header{}, "not a ref name"},
		{"# v2 git bundle\n" + strings.ToUpper(oidA) + " refs/heads/main\n\n", header{}, "not a ref line"},
		{"# v2 git bundle\n-zz\n\n", header{}, "no object id"},
	} {
		h, err := parseHeader(strings.NewReader(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseHeader(%q) = %v, want an error with %q", c.in, err, c.err)
			}
			continue
		}
		c.want.Size = int64(strings.Index(c.in, "\n\n") + 2)
		if err != nil || !reflect.DeepEqual(h, c.want) {
			t.Errorf("parseHeader(%q) = %+v, %v; want %+v", c.in, h, err, c.want)
		}
	}
}

// FuzzParseHeader checks that what parseHeader accepts is a header whose
// every field is well formed, and that writing it again reads the same.
func FuzzParseHeader(f *testing.F) {
	f.Add([]byte("# v2 git bundle\n-" + oidB + " a\n" + oidA + " refs/heads/main\n\nPACK"))
	f.Add([]byte("# v3 git bundle\n@object-format=sha256\n" + oid3 + " refs/heads/x\n\n"))
	b, _ := emptyBundle("sha1", "refs/heads/cadence/w/l", oidA)
	f.Add(b)
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := parseHeader(bytes.NewReader(in))
		if err != nil {
			return
		}
		if h.Size < 2 || h.Size > int64(len(in)) || string(in[h.Size-2:h.Size]) != "\n\n" {
			t.Fatalf("header size %d of %q", h.Size, in)
		}
		if h.Version != 2 && h.Version != 3 {
			t.Fatalf("version %d", h.Version)
		}
		var w strings.Builder
		fmt.Fprintf(&w, "# v%d git bundle\n", h.Version)
		for _, c := range h.Capabilities {
			w.WriteString("@" + c + "\n")
		}
		for _, p := range h.Prerequisites {
			if !isOID(p) {
				t.Fatalf("prerequisite %q", p)
			}
			w.WriteString("-" + p + "\n")
		}
		for _, r := range h.Refs {
			if _, err := parseRefLine(r.OID + " " + r.Name); err != nil {
				t.Fatalf("ref %+v: %v", r, err)
			}
			w.WriteString(r.OID + " " + r.Name + "\n")
		}
		w.WriteString("\n")
		again, err := parseHeader(strings.NewReader(w.String()))
		h.Size = int64(w.Len())
		if err != nil || !reflect.DeepEqual(again, h) {
			t.Fatalf("written again %q: %+v, %v; first %+v", w.String(), again, err, h)
		}
	})
}

// FuzzParseListHeads checks that what parseListHeads accepts of `git
// bundle list-heads` output is well-formed refs, one per non-empty line.
func FuzzParseListHeads(f *testing.F) {
	f.Add(oidA + " refs/heads/main\n")
	f.Add(oidA + " refs/heads/main\n" + oidB + " refs/tags/x\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, out string) {
		refs, err := parseListHeads(out)
		if err != nil {
			return
		}
		lines := 0
		for _, l := range strings.Split(out, "\n") {
			if l != "" {
				lines++
			}
		}
		if len(refs) != lines {
			t.Fatalf("%d refs of %d lines", len(refs), lines)
		}
		for _, r := range refs {
			if !isOID(r.OID) || r.Name == "" || strings.ContainsAny(r.Name, " \n\t\x00") {
				t.Fatalf("ref %+v", r)
			}
		}
	})
}
