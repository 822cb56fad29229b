package render

import (
	"strings"
	"unicode/utf8"
)

// zwsp is a zero-width space as an HTML entity: put after '@' or '#' it
// keeps GitHub from reading a mention or an issue reference, and shows
// nothing (Dependabot's way in its pull-request bodies).
const zwsp = "&#8203;"

// mdEscaper escapes text for a Markdown table cell or list item: the
// backslash (so that no escape of the text's own can undo one of these),
// HTML special characters, the cell separator, the strikethrough mark, the
// code-span and link marks, white space folded into spaces, the other C0
// control characters and DEL shown as their Unicode control pictures
// (ESC as "␛", U+241B), and '@' followed by a zero-width space.
var mdEscaper = func() *escaper {
	e := newEscaper("\\", "\\\\", "&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "~", "\\~",
		"`", "\\`", "[", "\\[", "]", "\\]", "@", "@"+zwsp,
		"\n", " ", "\r", " ", "\t", " ")
	for c := 0; c < 0x20; c++ {
		if e[c] == "" {
			e[c] = string(rune(0x2400 + c))
		}
	}
	e[0x7f] = "\u2421"
	return e
}()

// mdEscape escapes user text (a title, a message, a name) for Markdown in a
// pull-request comment, where it must neither break the layout, nor make a
// link, nor notify anyone: mdEscaper's escapes; a '#' before a digit
// followed by a zero-width space (so "#123" is no issue reference, which
// would add a backlink to that issue); a zero-width space after the ':' of
// "://" and the "www" of "www." (any case), so that no bare URL is made a
// link (GitHub's extended autolinks); and the C1 control characters and the bidirectional
// overrides and isolates (U+202A to U+202E, U+2066 to U+2069, which can make
// text read other than it is) replaced by U+FFFD.
func mdEscape(s string) string {
	s = noAutolink(mdEscaper.escape(s))
	if !strings.Contains(s, "#") && !hasHiddenRune(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i, r := range s {
		switch {
		case r == '#' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' && !afterAmp(s, i):
			b.WriteString("#" + zwsp)
		case hiddenRune(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// afterAmp reports whether the '#' at s[i] opens a numeric character
// reference ("&#38;"), which must stay whole.
func afterAmp(s string, i int) bool { return i > 0 && s[i-1] == '&' }

// hiddenRune reports the runes mdEscape replaces: C1 controls and the
// bidirectional formatting characters.
func hiddenRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

func hasHiddenRune(s string) bool { return strings.IndexFunc(s, hiddenRune) >= 0 }

// noAutolink puts a zero-width space into every "://" and "www." (any
// case) of s, the openings of GitHub's extended autolinks.
func noAutolink(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(strings.ToLower(s), "www.") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "://"):
			b.WriteString(":" + zwsp)
			continue
		case i+4 <= len(s) && strings.EqualFold(s[i:i+4], "www."):
			b.WriteString(s[i:i+3] + zwsp)
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
