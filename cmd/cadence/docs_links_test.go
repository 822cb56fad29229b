package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Tests of the references between the README and the documents of docs/:
// a reference to another document is a link, a link lands on the section
// it names, every anchor exists, and no document ships a placeholder.

// docsProse are the README's and docs/*.md's texts with fenced code blocks
// blanked (their line count kept), by path from the clone's root.
func docsProse(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range append([]string{filepath.Join("..", "..", "README.md")}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		fence := false
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fence = !fence
				lines[i] = ""
			} else if fence {
				lines[i] = ""
			}
		}
		rel, _ := filepath.Rel(filepath.Join("..", ".."), f)
		out[filepath.ToSlash(rel)] = strings.Join(lines, "\n")
	}
	return out
}

var (
	headingLine = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	boldLead    = regexp.MustCompile(`(?m)^(?:[-*] |\d+\. |<a id="[^"]+"></a>)?\*\*([^*]+?)[.:]?\*\*`)
	explicitID  = regexp.MustCompile(`<a id="([^"]+)"></a>`)
	mdLink      = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)
	plainRef    = regexp.MustCompile(`(?:\bsee|§) +([A-Z][A-Za-z' ,-]*?[a-z])\b(?:[);.|]| *\|)`)
)

// sectionTitles are the titles a document's sections go by: its headings
// (and their part before a colon) and the bold words that open a
// paragraph or an item (**Locks.**).
func sectionTitles(text string) map[string]bool {
	titles := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(strings.ReplaceAll(s, "`", ""))
		titles[strings.ToLower(s)] = true
		if i := strings.Index(s, ":"); i > 0 {
			titles[strings.ToLower(s[:i])] = true
		}
	}
	for _, m := range headingLine.FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	for _, m := range boldLead.FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	return titles
}

// githubSlug is the anchor GitHub gives a heading.
func githubSlug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsPlainRefsToOtherDocs: a "see Locks" or "§ Exit codes"
// written when every section was in one README names, after the move, a
// section of another document without saying which: a reader of
// docs/commands.md finds no Locks in it. Every such plain reference must
// name a section of its own document (or be a link).
func TestDocsPlainRefsToOtherDocs(t *testing.T) {
	docs := docsProse(t)
	titles := map[string]map[string]bool{}
	for f, s := range docs {
		titles[f] = sectionTitles(mdLink.ReplaceAllString(s, "$1"))
	}
	var bad []string
	for f, s := range docs {
		prose := mdLink.ReplaceAllString(s, "LINK") // a link says where it goes
		for _, m := range plainRef.FindAllStringSubmatchIndex(prose, -1) {
			name := strings.ToLower(prose[m[2]:m[3]])
			if titles[f][name] {
				continue
			}
			var in []string
			for g, ts := range titles {
				if g != f && ts[name] {
					in = append(in, g)
				}
			}
			if len(in) > 0 {
				sort.Strings(in)
				line := strings.Count(prose[:m[0]], "\n") + 1
				bad = append(bad, f+":"+itoa(line)+": "+strings.TrimSpace(prose[m[0]:m[1]])+" names a section of "+strings.Join(in, ", ")+", not of this document: link it")
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestDocsLinksLandOnTheirSection: a link whose text names a
// section of the target document ([State and resume](running.md#…)) must
// take the reader there, not to the document's top heading: in the README
// every one of them led to its parent heading, which was a screen away;
// in docs/ the parent heading is the top of a 400-line document.
func TestDocsLinksLandOnTheirSection(t *testing.T) {
	docs := docsProse(t)
	var bad []string
	for f, s := range docs {
		for _, m := range mdLink.FindAllStringSubmatchIndex(s, -1) {
			text := strings.Join(strings.Fields(s[m[2]:m[3]]), " ")
			target := s[m[4]:m[5]]
			file, anchor, ok := strings.Cut(target, "#")
			if !ok || file == "" || strings.Contains(file, "/") && !strings.HasPrefix(file, "docs/") {
				continue
			}
			tf := filepath.ToSlash(filepath.Join(filepath.Dir(f), file))
			doc, ok := docs[tf]
			if !ok {
				continue
			}
			top := headingLine.FindStringSubmatch(doc)
			if top == nil || anchor != githubSlug(top[1]) {
				continue // lands on a section, not on the document's top
			}
			if strings.EqualFold(text, top[1]) || strings.HasSuffix(text, ".md") {
				continue // names the document itself
			}
			if sectionTitles(doc)[strings.ToLower(strings.ReplaceAll(text, "`", ""))] {
				line := strings.Count(s[:m[0]], "\n") + 1
				bad = append(bad, f+":"+itoa(line)+": ["+text+"]("+target+") lands on the top of "+tf+", not on its section "+text)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestDocsAnchorsExist: every link to a section of the README or a
// document of docs/ names a heading or an <a id> there.
func TestDocsAnchorsExist(t *testing.T) {
	docs := docsProse(t)
	anchors := map[string]map[string]bool{}
	for f, s := range docs {
		a := map[string]bool{}
		for _, m := range headingLine.FindAllStringSubmatch(s, -1) {
			a[githubSlug(mdLink.ReplaceAllString(strings.ReplaceAll(m[1], "`", ""), "$1"))] = true
		}
		for _, m := range explicitID.FindAllStringSubmatch(s, -1) {
			a[m[1]] = true
		}
		anchors[f] = a
	}
	for f, s := range docs {
		for _, m := range mdLink.FindAllStringSubmatch(s, -1) {
			file, anchor, ok := strings.Cut(m[2], "#")
			if !ok || strings.HasPrefix(file, "http") {
				continue
			}
			tf := f
			if file != "" {
				tf = filepath.ToSlash(filepath.Join(filepath.Dir(f), file))
			}
			if a, known := anchors[tf]; known && !a[anchor] {
				t.Errorf("%s: [%s](%s): %s has no heading or <a id> %q", f, m[1], m[2], tf, anchor)
			}
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestDocsNoPlaceholders: the documents ship without the
// placeholders of their drafts (docs/architecture.md, "Adding an agent
// kind, a step kind, a step runner", has TODO(lead) where a contributor
// looks for the file that decodes an agent kind's settings and for the
// files each addition touches).
func TestDocsNoPlaceholders(t *testing.T) {
	for f, s := range docsProse(t) {
		for i, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "TODO") {
				t.Errorf("%s:%d: %s", f, i+1, strings.TrimSpace(l))
			}
		}
	}
}
