package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hashicorp/hcl/v2"
)

// diagJSON is the JSON form of a diagnostic (validate -json, plan -json on
// error), close to Terraform's.
type diagJSON struct {
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Range    *rangeJSON `json:"range,omitempty"`
	Snippet  *snippet   `json:"snippet,omitempty"`
}

type posJSON struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

type rangeJSON struct {
	Filename string  `json:"filename"`
	Start    posJSON `json:"start"`
	End      posJSON `json:"end"`
}

type snippet struct {
	Context   string `json:"context,omitempty"`
	Code      string `json:"code"`
	StartLine int    `json:"start_line"`
}

// diagsJSON is the document validate -json prints.
type diagsJSON struct {
	FormatVersion int        `json:"format_version"`
	Valid         bool       `json:"valid"`
	ErrorCount    int        `json:"error_count"`
	WarningCount  int        `json:"warning_count"`
	Diagnostics   []diagJSON `json:"diagnostics"`
}

func toDiagsJSON(diags hcl.Diagnostics, files map[string]*hcl.File) diagsJSON {
	out := diagsJSON{FormatVersion: 1, Diagnostics: []diagJSON{}}
	for _, d := range diags {
		j := diagJSON{Severity: "warning", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagError {
			j.Severity = "error"
			out.ErrorCount++
		} else {
			out.WarningCount++
		}
		if d.Subject != nil {
			r := d.Subject
			j.Range = &rangeJSON{Filename: r.Filename,
				Start: posJSON{r.Start.Line, r.Start.Column, r.Start.Byte},
				End:   posJSON{r.End.Line, r.End.Column, r.End.Byte}}
			if f := files[r.Filename]; f != nil && r.End.Byte <= len(f.Bytes) {
				j.Snippet = snippetFor(f.Bytes, *r)
				if d.Context != nil {
					j.Snippet.Context = d.Context.String()
				}
			}
		}
		out.Diagnostics = append(out.Diagnostics, j)
	}
	out.Valid = out.ErrorCount == 0
	return out
}

// snippetFor returns the whole source lines the range covers.
func snippetFor(src []byte, r hcl.Range) *snippet {
	start := r.Start.Byte
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	end := r.End.Byte
	for end < len(src) && src[end] != '\n' {
		end++
	}
	if start > end {
		start = end
	}
	return &snippet{Code: string(src[start:end]), StartLine: r.Start.Line}
}

// writeDiags prints diagnostics: as text with snippets, or as JSON (always a
// document, even without diagnostics). files is called only when there are
// diagnostics to show.
func (e *env) writeDiags(w io.Writer, diags hcl.Diagnostics, files func() map[string]*hcl.File, asJSON bool) {
	var srcs map[string]*hcl.File
	if len(diags) > 0 {
		srcs = files()
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(toDiagsJSON(diags, srcs))
		return
	}
	if len(diags) == 0 {
		return
	}
	small := map[string]*hcl.File{}
	for name, f := range srcs {
		if len(f.Bytes) <= maxSnippetBytes {
			small[name] = f
		}
	}
	dw := hcl.NewDiagnosticTextWriter(w, small, 100, e.colorOn(w))
	shown := diags
	if len(shown) > maxTextDiags {
		shown = diags[:maxTextDiags]
	}
	_ = dw.WriteDiagnostics(shown)
	if rest := diags[len(shown):]; len(rest) > 0 {
		errs := 0
		for _, d := range rest {
			if d.Severity == hcl.DiagError {
				errs++
			}
		}
		fmt.Fprintf(w, "… and %d more diagnostics (%d errors, %d warnings) not shown: -json lists every one.\n\n", len(rest), errs, len(rest)-errs)
	}
}

// maxTextDiags is the most diagnostics printed as text. HCL's printer
// reads the whole file for each one (its "in lot …" context and its
// snippet), so printing costs errors × file size: a wave file of
// thousands of errors (a pull request's, planned in CI) would keep plan
// busy for minutes. The JSON form lists them all; it reads only the lines
// of each.
const maxTextDiags = 50

// maxSnippetBytes is the largest source whose text diagnostics show a
// snippet: 256 KiB, a wave of some thousand lots. HCL's printer scans the
// file from its start, by grapheme, for every diagnostic, which costs a
// third of a second per diagnostic in a file of 2 MB; a larger file's
// diagnostics name the file and line only (-json still has the lines).
const maxSnippetBytes = 256 << 10
