package spec

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// MaxArgBytes is the most bytes one argument of a program may have on
// Linux, its terminating NUL included: MAX_ARG_STRLEN, 32 pages of 4 KiB
// (include/uapi/linux/binfmts.h). cadence runs a lot's run and a repo's
// test as one argument, /bin/sh -c COMMAND, so a command of MaxArgBytes
// bytes or more fails to start with "argument list too long". (macOS has
// no limit per argument, only ARG_MAX, 1 MiB, for all of them and the
// environment together.)
const MaxArgBytes = 131072

// CommandTooLong reports whether a shell command is too long to be one
// argument of /bin/sh -c (see MaxArgBytes).
func CommandTooLong(cmd string) bool { return len(cmd)+1 > MaxArgBytes }

// commandLineEnds returns a shell command with every "\r\n" turned into
// "\n": sh reads a CR before a newline as part of the last word of the line
// (`ls: cannot access 'x'$'\r'`), and no command means one there. A run or
// test read with file() from a CRLF file thus runs like the LF one (see
// normalizeLineEnds for the wave file's own line ends).
func commandLineEnds(cmd string) string {
	return strings.ReplaceAll(cmd, "\r\n", "\n")
}

// warnLongCommand warns when the command what ("lot \"gen\"'s run",
// "repo \"api\"'s test") is too long to run; attr is its attribute.
func (d *decoder) warnLongCommand(attr *hcl.Attribute, what, cmd string) {
	if attr == nil || !CommandTooLong(cmd) {
		return
	}
	rng := attr.Expr.Range()
	d.values.diags = append(d.values.diags, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  "Command too long to run",
		Detail: fmt.Sprintf("%s command is %d bytes. cadence runs it as one argument of /bin/sh -c, and Linux takes at most %d bytes in one argument (MAX_ARG_STRLEN), so it would fail with \"argument list too long\". Put the command in a script file and run that: %s = \"sh script.sh\".",
			what, len(cmd), MaxArgBytes-1, attr.Name),
		Subject: &rng,
	})
}
