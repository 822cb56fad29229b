package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/planner"
)

// mdTags are the HTML tags the Markdown renderer writes itself; any other
// '<' in its output would be user text that opens a tag.
var mdTags = []string{"<code>", "</code>", "<details>", "</details>", "<summary>", "</summary>"}

// mdInlineProblem returns what in md (the renderer's output) a reader of
// GitHub-flavoured Markdown would take as markup that user text made: an
// unescaped '[', ']', '`' outside the renderer's action symbols, a '<'
// that opens no tag of mdTags, a bare URL or www. autolink, or a table row
// with another count of cell separators than its header. "" when none.
func mdInlineProblem(md string) string {
	low := strings.ToLower(md)
	if strings.Contains(low, "://") || strings.Contains(low, "www.") {
		return "an autolink"
	}
	header := -1
	for _, line := range strings.Split(md, "\n") {
		pipes := 0
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case c == '\\' && i+1 < len(line) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", line[i+1]) >= 0:
				i++ // an escaped punctuation character
			case c == '[' || c == ']':
				return "an unescaped " + string(c) + " in " + line
			case c == '<':
				ok := false
				for _, t := range mdTags {
					ok = ok || strings.HasPrefix(line[i:], t)
				}
				if !ok {
					return "an HTML tag in " + line
				}
			case c == '|':
				pipes++
			}
		}
		switch {
		case !strings.HasPrefix(line, "|"):
			header = -1
		case header < 0:
			header = pipes
		case pipes != header:
			return "a row of another width than its table's header: " + line
		}
	}
	return ""
}

func TestMarkdownEscapesBackslashFirst(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`\[x\](https://evil)`, `\\\[x\\\](https:&#8203;//evil)`},
		{`a \| b`, `a \\\| b`},
		{`C:\path\`, `C:\\path\\`},
		{"see www.example.com", "see www&#8203;.example.com"},
	} {
		if got := mdEscape(c.in); got != c.want {
			t.Errorf("mdEscape(%q): got %q, want %q", c.in, got, c.want)
		}
	}
}

// escapePlan is a plan of two lots whose title and reason are user text.
func escapePlan(title, reason string) *planner.Plan {
	return &planner.Plan{Lots: []planner.LotPlan{
		{ID: "a", Title: title, Action: planner.ActionRun, Repo: "app"},
		{ID: "b", Title: reason, Action: planner.ActionRefused, Reason: reason, Repo: "app"},
	}, Warnings: []planner.Warning{{Message: reason}}}
}

func TestMarkdownUserTextMakesNoLinkNorColumn(t *testing.T) {
	for _, s := range []string{`\[x\](https://evil)`, `\|`, `a\\|b`, "`\\`x`", `\<img src=x>`, "www.evil.example"} {
		var b bytes.Buffer
		if err := Markdown(&b, escapePlan(s, s)); err != nil {
			t.Fatal(err)
		}
		if p := mdInlineProblem(b.String()); p != "" {
			t.Errorf("%q: %s", s, p)
		}
	}
}

// FuzzMarkdownUserText: no lot title or reason makes a link, an autolink,
// an HTML tag or a table column in the Markdown comment.
func FuzzMarkdownUserText(f *testing.F) {
	for _, s := range []string{`\[x\](https://evil)`, `\|`, "a`b`", "<b>", "@a #1", "x\\\\|y", "WWW.x"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, title, reason string) {
		var b bytes.Buffer
		if err := Markdown(&b, escapePlan(title, reason)); err != nil {
			t.Fatal(err)
		}
		if p := mdInlineProblem(b.String()); p != "" {
			t.Fatalf("title %q, reason %q: %s", title, reason, p)
		}
	})
}

// TestTextShowsNoControlCharacters: the text plan shows the control
// characters of lot titles, reasons and warnings as their pictures (C0,
// DEL) or U+FFFD (C1): none reaches the terminal.
func TestTextShowsNoControlCharacters(t *testing.T) {
	var b bytes.Buffer
	p := escapePlan("red \x1b[31mtext\x07 csi \u009b2J", "cause \x1b]0;title\x07 and \r back")
	if err := Text(&b, p, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range b.String() {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) {
			t.Fatalf("control character %U in:\n%s", r, b.String())
		}
	}
	if !strings.Contains(b.String(), "␛[31mtext␇") {
		t.Errorf("ESC and BEL not shown as ␛ and ␇:\n%s", b.String())
	}
}
