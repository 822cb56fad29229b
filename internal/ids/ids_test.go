package ids

import (
	"regexp"
	"testing"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		u := UUID()
		if !uuidV4.MatchString(u) {
			t.Fatalf("UUID() = %q, not a version 4 UUID", u)
		}
		if seen[u] {
			t.Fatalf("UUID() repeated %q", u)
		}
		seen[u] = true
	}
}

func TestHex(t *testing.T) {
	for _, n := range []int{0, 1, 8, 16} {
		h := Hex(n)
		if len(h) != 2*n || !regexp.MustCompile(`^[0-9a-f]*$`).MatchString(h) {
			t.Errorf("Hex(%d) = %q", n, h)
		}
	}
	if Hex(8) == Hex(8) {
		t.Error("Hex(8) repeated itself")
	}
}
