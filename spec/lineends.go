package spec

import "bytes"

// Line ends. A wave file saved with CRLF line ends (a Windows editor, a
// checkout with core.autocrlf) decodes exactly like the same file with LF
// ones. HCL reads CRLF as a newline everywhere but in heredocs, whose
// lines it keeps as written, "\r" included: `run = <<EOF` would hand sh a
// command ending in "\r". So the native-syntax source (wave file and -var
// files) is read with every "\r\n" turned into "\n" before it is parsed
// (normalizeLineEnds); a lone "\r" is kept.
//
// Diagnostics then point into the normalised source, which the Loader
// keeps and hands out (Loader.Files) for snippets: lines and columns are
// those of the file on disk (a CR is the last byte of its line, so it
// shifts no column), and only a range's byte offset is smaller than in
// the file on disk, by the number of CRLF line ends before it. That was
// chosen over mapping every range back, which would have to reach every
// range kept in a Config and every diagnostic the planner makes from them.
//
// HCL's JSON syntax needs nothing: a CRLF between tokens is white space,
// and a string holds a CR only escaped, "\r", which is then meant.
//
// Text that file() and templatefile() read is data and is kept as it is
// (a brief from a CRLF file reaches the agent byte for byte; models read
// CRLF as line ends), except in the two values that are shell commands: a
// lot's run and a repo's test have their "\r\n" turned into "\n"
// (commandLineEnds), since sh reads a CR before a newline as part of the
// last word of the line (`ls: cannot access 'x'$'\r'`) and no command
// means one there.

// normalizeLineEnds returns src with every "\r\n" turned into "\n"; src
// itself when it has none.
func normalizeLineEnds(src []byte) []byte {
	if !bytes.Contains(src, []byte("\r\n")) {
		return src
	}
	return bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
}
