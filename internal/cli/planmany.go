package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/internal/safefile"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/planner/render"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// waveBlocks are the top-level block types that make a file a wave file
// (see isWaveFile): the wave block every wave file needs, and lot, cadence's
// unit of work. variable and locals are not among them: Terraform, Packer
// and Nomad files have those too.
var waveBlocks = map[string]bool{"wave": true, "lot": true}

// isWaveFile reports whether src, the content of the file named name, is a
// wave file, and why not when it is not. The rule: a file is a wave file
// when its top level holds a wave or a lot block (in HCL's JSON syntax, a
// "wave" or "lot" property of the top-level object). A file that is not
// valid HCL (or JSON) counts as a wave file, so that a broken wave file is
// an error, never skipped; a Terraform lock file, a Packer template or a
// Nomad job is valid HCL without those blocks, and is not a wave file.
func isWaveFile(name string, src []byte) (bool, string) {
	if spec.IsJSON(name) {
		return isWaveJSON(src)
	}
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	return isWaveParsed(f, diags)
}

// isWaveJSON is isWaveFile for HCL's JSON syntax: it reads the top-level
// object's property names only (their values stay raw).
func isWaveJSON(src []byte) (bool, string) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(src, &top); err != nil {
		return true, ""
	}
	for k := range top {
		if waveBlocks[k] {
			return true, ""
		}
	}
	return false, "not a wave file (no top-level \"wave\" or \"lot\" property)"
}

// isWaveParsed is isWaveFile for a native-syntax file already parsed (f
// and its parse's diags).
func isWaveParsed(f *hcl.File, diags hcl.Diagnostics) (bool, string) {
	if diags.HasErrors() || f == nil {
		return true, ""
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return true, ""
	}
	for _, b := range body.Blocks {
		if waveBlocks[b.Type] {
			return true, ""
		}
	}
	return false, "not a wave file (no top-level wave or lot block)"
}

// parsedWave is a wave file as waveArgs read it: its source and, for
// native syntax, the parse that told it is a wave file, which plan decodes
// (loadWaveFrom) so that each file is parsed once.
type parsedWave struct {
	src    []byte
	loader *spec.Loader
	// file and diags are loader.Parse's; file is nil for HCL's JSON syntax
	// (isWaveJSON reads only the top-level names: plan parses it).
	file  *hcl.File
	diags hcl.Diagnostics
}

// keepParsedBytes bounds the sources whose parses waveArgs keeps for plan
// (a syntax tree takes some hundred times its source's bytes): past it, a
// file is parsed again when it is planned. One wave file of the largest
// size (spec.MaxWaveBytes) is always kept.
const keepParsedBytes = spec.MaxWaveBytes

// waveArg is one wave file to plan: its name, and what waveArgs read of
// it (nil: plan reads it, as for a missing or refused file).
type waveArg struct {
	file string
	read *parsedWave
}

// argFiles are the names of args.
func argFiles(args []waveArg) []string {
	files := make([]string, len(args))
	for i, a := range args {
		files[i] = a.file
	}
	return files
}

// skipped is a file plan left out, and why.
type skipped struct{ file, why string }

// waveArgs expands plan's positional arguments into the wave files to plan,
// in order. No argument is wave.hcl, planned whatever it holds (as every
// command's default). Each argument is a file, or a folder standing for its
// *.hcl and *.hcl.json files (not its subfolders), in name order. A file
// that is not a wave file (isWaveFile) is skipped, with its reason; an
// unreadable file or folder is an error. Each wave file is read and
// parsed here once; plan decodes that parse (keepParsedBytes bounds what
// is kept).
func waveArgs(pos []string) ([]waveArg, []skipped, error) {
	if len(pos) == 0 {
		return []waveArg{{file: "wave.hcl"}}, nil, nil
	}
	var files []waveArg
	var skips []skipped
	kept := 0
	add := func(file string) error {
		src, err := spec.ReadWaveFile(file) // bounded: the file may be a pull request's
		if err != nil {
			if os.IsNotExist(err) || errors.Is(err, safefile.ErrRefused) {
				// loadWave says so, as for a single file.
				files = append(files, waveArg{file: file})
				return nil
			}
			return err
		}
		read := &parsedWave{src: src}
		var ok bool
		var why string
		if spec.IsJSON(file) {
			ok, why = isWaveJSON(src)
		} else {
			read.loader = spec.NewLoader()
			read.file, read.diags = read.loader.Parse(src, file)
			ok, why = isWaveParsed(read.file, read.diags)
		}
		if !ok {
			skips = append(skips, skipped{file, why})
			return nil
		}
		if kept > 0 && kept+len(src) > keepParsedBytes {
			read = nil // parsed again when planned
		} else {
			kept += len(src)
		}
		files = append(files, waveArg{file: file, read: read})
		return nil
	}
	for _, a := range pos {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			if err := add(a); err != nil {
				return nil, nil, err
			}
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, nil, err
		}
		var names []string
		for _, en := range entries {
			n := en.Name()
			if en.Type().IsRegular() && (strings.HasSuffix(n, ".hcl") || strings.HasSuffix(n, ".hcl.json")) {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if err := add(filepath.Join(a, n)); err != nil {
				return nil, nil, err
			}
		}
	}
	return files, skips, nil
}

// planArgs resolves plan's arguments (waveArgs) and checks them against the
// flags: -out, and every -format but text and markdown, take one wave
// file. It prints a one-line note on stderr for each skipped file. It
// returns an exit code >= 0 when plan should stop: ExitUsage for a usage
// error, ExitError for an unreadable argument, ExitOK when no file is left
// to plan (nothing is printed on stdout then, so a CI job can test for an
// empty document).
func planArgs(e *env, pos []string, format, out string) ([]waveArg, []skipped, ExitCode) {
	files, skips, err := waveArgs(pos)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence plan: %v\n", err)
		return nil, nil, ExitError
	}
	for _, s := range skips {
		fmt.Fprintf(e.stderr, "cadence plan: skipped %s: %s\n", s.file, s.why)
	}
	if len(files) == 0 {
		fmt.Fprintf(e.stderr, "cadence plan: nothing to plan: none of the files given is a wave file\n")
		return nil, nil, ExitOK
	}
	if len(files) > 1 {
		if out != "" {
			fmt.Fprintf(e.stderr, "cadence plan: -out saves the plan of one wave file; got %d: %s\n", len(files), strings.Join(argFiles(files), " "))
			return nil, nil, ExitUsage
		}
		if format != "text" && format != "markdown" {
			fmt.Fprintf(e.stderr, "cadence plan: -format %s renders one wave file; got %d (text and markdown render several)\n", format, len(files))
			return nil, nil, ExitUsage
		}
	}
	return files, skips, goOn
}

// planMany plans files one after the other into one document, for -format
// text and markdown, and for one file with -format markdown (its skip
// notes and diagnostics go into the document). Plans are separated by a
// blank line (text) or a rule (markdown). An invalid wave file does not
// stop the others: its diagnostics go to stderr and, in Markdown, into the
// document in a code fence. The exit code is ExitError when a file is
// invalid, else with detailed the first of ExitPending, ExitNeedsLead that
// some file's plan has (detailedCode), else ExitOK.
func (f *planFlags) planMany(e *env, files []waveArg, skips []skipped, format string, rend func(io.Writer, *planner.Plan) error, detailed bool, out string) ExitCode {
	md := format == "markdown"
	code := ExitOK
	for i, arg := range files {
		file := arg.file
		files[i].read = nil // its syntax tree is garbage once planned
		if i > 0 {
			if md {
				io.WriteString(e.stdout, "\n---\n\n")
			} else {
				io.WriteString(e.stdout, "\n")
			}
		}
		var diags bytes.Buffer
		diagOut := io.Writer(e.stderr)
		if md {
			diagOut = io.MultiWriter(e.stderr, &diags)
		}
		w, p := f.makePlan(e, file, arg.read, diagOut)
		if p == nil {
			code = ExitError
			if md {
				writeInvalidMarkdown(e.stdout, file, diags.String())
			}
			continue
		}
		if err := rend(e.stdout, p); err != nil {
			fmt.Fprintf(e.stderr, "cadence plan: %v\n", err)
			return ExitError
		}
		if out != "" {
			if err := f.save(out, w, p); err != nil {
				fmt.Fprintf(e.stderr, "cadence plan: %v\n", err)
				return ExitError
			}
		}
		if detailed && code != ExitError {
			code = worseDetailed(code, detailedCode(p))
		}
	}
	if md && len(skips) > 0 {
		io.WriteString(e.stdout, "\n"+mdSkipNotes(skips))
	}
	return code
}

// writeInvalidMarkdown writes an invalid wave file's section: a line that
// names it and its diagnostics (as plan prints them, without colour) in a
// code fence, control characters made visible, cut at a line so that the
// section stays under render.MarkdownLimit bytes.
func writeInvalidMarkdown(w io.Writer, file, diags string) {
	head := fmt.Sprintf("**cadence plan** for <code>%s</code>: **invalid wave file**, apply refuses it.\n\n", mdText(file))
	io.WriteString(w, head)
	// Control characters made visible first (a picture takes 3 bytes for
	// 1), then cut so that the fence, the text and the note fit.
	text := visibleControls(strings.TrimRight(diags, "\n"), true)
	if most := render.MarkdownLimit - len(head) - 200; len(codeFence(text)) > most {
		room := max(0, most-2*max(4, longestRun(text, '`')+2))
		cut := strings.LastIndexByte(text[:min(room, len(text))], '\n')
		if cut < 0 {
			cut = 0
		}
		text = text[:cut] + "\n… cut here, " + strconv.Itoa(len(text)-cut) + " bytes not shown: cadence plan shows every diagnostic (-json lists them all)"
	}
	io.WriteString(w, codeFence(text))
}

// mdSkipNotes lists the skipped files, one line each.
func mdSkipNotes(skips []skipped) string {
	var b strings.Builder
	for _, s := range skips {
		b.WriteString("- Skipped <code>" + mdText(s.file) + "</code>: " + mdText(s.why) + ".\n")
	}
	return b.String()
}

// mdText escapes a file name or a note for Markdown text: the backslash,
// HTML special characters and the table, code and mention marks, and
// control characters made visible.
func mdText(s string) string {
	s = strings.NewReplacer("\\", "\\\\", "&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "`", "\\`", "@", "@&#8203;").Replace(s)
	return visibleControls(s, false)
}

// codeFence wraps text in a fenced code block whose fence is longer than
// any run of backticks in text (CommonMark: a fence closes only on a run
// at least as long), with control characters but newlines and tabs made
// visible (visibleControls).
func codeFence(text string) string {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	return fence + "text\n" + visibleControls(text, true) + "\n" + fence + "\n"
}

// visibleControls is render.Visible: the C0 control characters and DEL in
// s shown as their Unicode control pictures (ESC becomes "␛", so a
// terminal escape sequence shows as text), the C1 ones replaced by U+FFFD;
// newlines and tabs kept when keepLines is set, else shown too. Every
// user text (a title, a cause, a question, a step's output) printed as
// text goes through it.
func visibleControls(s string, keepLines bool) string { return render.Visible(s, keepLines) }

// worseDetailed is the exit code of several plans' detailed codes a and
// b: ExitPending over ExitNeedsLead over ExitOK.
func worseDetailed(a, b ExitCode) ExitCode {
	rank := map[ExitCode]int{ExitOK: 0, ExitNeedsLead: 1, ExitPending: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
