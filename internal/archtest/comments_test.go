package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module's root, from this package's folder.
const root = "../.."

// outsideDocs are names of documents that are not in the repository, a
// README section cited for a rule (the rules live in docs/), and history
// that belongs in commit messages: a comment states what holds and why,
// citing a document under docs/ (docs/architecture.md, "Contributing
// rules").
var outsideDocs = regexp.MustCompile(`DESIGN\.md|DECISIONS10|\bREADME "|(?i:\bissue #?[0-9]+)`)

// docRef is a document under docs/ named in a comment.
var docRef = regexp.MustCompile(`\bdocs/([a-z0-9-]+\.md)\b`)

// commentAllowed are the files whose comments may still name outsideDocs,
// as a path from the module's root or a folder ending in "/" (its whole
// tree) or in "/*.go" (its own files only). An entry that covers no
// offending comment fails the test: the list only shrinks.
var commentAllowed = []string{}

// allowed reports whether rel (slash-separated, from the module's root)
// is under the allow-list entry e.
func allowed(rel, e string) bool {
	switch {
	case strings.HasSuffix(e, "/*.go"):
		dir := strings.TrimSuffix(e, "*.go")
		return strings.HasPrefix(rel, dir) && !strings.Contains(rel[len(dir):], "/")
	case strings.HasSuffix(e, "/"):
		return strings.HasPrefix(rel, e)
	}
	return rel == e
}

// goFiles lists the module's Go files, slash-separated paths from its
// root; dot folders (the tool cache, .git) and testdata are left out.
func goFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			rel, _ := filepath.Rel(root, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d Go files under %s", len(files), root)
	}
	return files
}

// TestCommentsNameDocsInRepository checks every comment of every Go file:
// none names a document that is not in the repository or an issue number
// (outsideDocs), outside commentAllowed; every
// docs/NAME.md a comment names exists; and every commentAllowed entry
// still covers such a comment, so that a fixed area leaves the list.
func TestCommentsNameDocsInRepository(t *testing.T) {
	used := map[string]bool{}
	fset := token.NewFileSet()
	for _, rel := range goFiles(t) {
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(rel)), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				for _, m := range docRef.FindAllStringSubmatch(c.Text, -1) {
					if _, err := os.Stat(filepath.Join(root, "docs", m[1])); err != nil {
						t.Errorf("%s: a comment names docs/%s, which does not exist", fset.Position(c.Pos()), m[1])
					}
				}
				bad := outsideDocs.FindString(c.Text)
				if bad == "" {
					continue
				}
				ok := false
				for _, e := range commentAllowed {
					if allowed(rel, e) {
						used[e], ok = true, true
					}
				}
				if !ok {
					t.Errorf("%s: a comment names %q: cite the document under docs/ that holds the rule, and leave history to commit messages", fset.Position(c.Pos()), bad)
				}
			}
		}
	}
	for _, e := range commentAllowed {
		if !used[e] {
			t.Errorf("commentAllowed lists %s, whose comments no longer name an outside document or an issue: drop the entry", e)
		}
	}
}

// TestCommentAllowedMatching checks the allow-list's path forms.
func TestCommentAllowedMatching(t *testing.T) {
	for _, c := range []struct {
		rel, entry string
		want       bool
	}{
		{"executor/lot.go", "executor/*.go", true},
		{"executor/slots/holds.go", "executor/*.go", false},
		{"executor/agent/claude/readonly.go", "executor/agent/", true},
		{"executor/agentlot.go", "executor/agent/", false},
		{"internal/cli/main.go", "internal/cli/main.go", true},
		{"internal/cli/main_test.go", "internal/cli/main.go", false},
	} {
		if got := allowed(c.rel, c.entry); got != c.want {
			t.Errorf("allowed(%q, %q) = %v, want %v", c.rel, c.entry, got, c.want)
		}
	}
}
