package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// Bytes is a size in bytes.
type Bytes int64

// byteUnits are the suffixes ParseBytes reads, longest first: binary
// (KiB, MiB, GiB, TiB) and decimal (KB, MB, GB, TB) as written by IEC 80000-13.
var byteUnits = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}

// ParseBytes reads a size: a whole number of bytes ("1048576"), or a
// number with a unit ("16MiB", "512KiB", "1.5GiB", "4MB", "100B"; a space
// before the unit is allowed). Underscores are allowed as digit
// separators. The result must be a whole, non-negative number of bytes.
func ParseBytes(s string) (Bytes, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			mult, t = u.mult, strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	const places = 6
	v, err := parseDecimal(t, places)
	if err != nil || t == "" {
		return 0, fmt.Errorf("%q is not a size: write a number of bytes or a number with a unit, like \"16MiB\", \"512KiB\" or \"1GiB\"", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("a size cannot be negative (%q)", s)
	}
	const scale = 1_000_000
	whole, frac := v/scale, v%scale
	if whole > (1<<62)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	n := whole*mult + frac*mult/scale
	if frac*mult%scale != 0 {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	return Bytes(n), nil
}

// String renders the size in the largest binary unit that divides it
// ("16MiB", "1536KiB", "100B").
func (b Bytes) String() string {
	switch {
	case b >= 1<<40 && b%(1<<40) == 0:
		return strconv.FormatInt(int64(b>>40), 10) + "TiB"
	case b >= 1<<30 && b%(1<<30) == 0:
		return strconv.FormatInt(int64(b>>30), 10) + "GiB"
	case b >= 1<<20 && b%(1<<20) == 0:
		return strconv.FormatInt(int64(b>>20), 10) + "MiB"
	case b >= 1<<10 && b%(1<<10) == 0:
		return strconv.FormatInt(int64(b>>10), 10) + "KiB"
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}
