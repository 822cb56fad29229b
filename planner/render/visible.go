package render

import (
	"strings"
	"unicode/utf8"
)

// Visible returns s for a terminal: the C0 control characters and DEL
// shown as their Unicode control pictures (ESC as "␛", U+241B; BEL as
// "␇"), newlines and tabs too unless keepLines, and the C1 control
// characters (U+0080 to U+009F, which some terminals read as ESC
// sequences) replaced by U+FFFD. User text (lot titles, causes, a step's
// output) goes through it before any text output, so that none of it can
// move the cursor, retitle the window or ring the bell.
func Visible(s string, keepLines bool) string {
	if strings.IndexFunc(s, func(r rune) bool { return isControl(r, keepLines) }) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		switch {
		case !isControl(r, keepLines):
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune(0x2421)
		default:
			b.WriteRune(utf8.RuneError)
		}
	}
	return b.String()
}

// isControl reports the runes Visible replaces.
func isControl(r rune, keepLines bool) bool {
	if keepLines && (r == '\n' || r == '\t') {
		return false
	}
	return r < 0x20 || (r >= 0x7f && r <= 0x9f)
}
