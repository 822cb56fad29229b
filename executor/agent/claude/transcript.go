package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/cadence-run/cadence/executor/agent"
)

// TranscriptPath is where Claude Code keeps the transcript of session when
// it runs in folder cwd with environment env:
//
//	<config dir>/projects/<project dir>/<session>.jsonl
//
// The rule is the CLI's own (Claude Code 2.1.328, read from its bundle):
//
//   - the config dir is $CLAUDE_CONFIG_DIR when it is set (even empty),
//     else $HOME/.claude (the CLI normalises it to NFC, which cadence does
//     not: a config dir whose name is not in NFC is not found);
//   - the project dir is $CLAUDE_CODE_PROJECT_DIR_NAME when
//     CLAUDE_CONFIG_DIR is set and not empty and the name matches
//     ^[A-Za-z0-9_-]{1,64}$ (and is no Windows device name), else
//     ProjectDirName(cwd);
//   - cwd is the CLI's working directory as the kernel reports it, so
//     with every symbolic link resolved (filepath.EvalSymlinks; cwd is kept
//     as given when it cannot be resolved).
//
// A relative config dir (an empty CLAUDE_CONFIG_DIR) is taken from cwd, as
// the CLI, which runs there, takes it.
func TranscriptPath(env []string, cwd, session string) string {
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	config, set := envLookup(env, "CLAUDE_CONFIG_DIR")
	if !set {
		config = filepath.Join(envValue(env, "HOME"), ".claude")
	}
	if !filepath.IsAbs(config) {
		config = filepath.Join(cwd, config)
	}
	project := ProjectDirName(cwd)
	if name := envValue(env, "CLAUDE_CODE_PROJECT_DIR_NAME"); envValue(env, "CLAUDE_CONFIG_DIR") != "" &&
		projectNameRE.MatchString(name) && !deviceNameRE.MatchString(name) {
		project = name
	}
	return filepath.Join(config, "projects", project, session+".jsonl")
}

var (
	projectNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	deviceNameRE  = regexp.MustCompile(`(?i)^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])$`)
)

// maxProjectDirName is the CLI's cap on a project dir name before its hash
// suffix.
const maxProjectDirName = 200

// ProjectDirName is the name of the folder under <config dir>/projects
// that Claude Code 2.1.328 gives a working directory, by the CLI's own
// function (its bundle: `e.replace(/[^a-zA-Z0-9]/g,"-")`, then, when longer
// than 200, `${t.slice(0,200)}-${Math.abs(h(e)).toString(36)}`, h being
// the Java-style string hash `e=(e<<5)-e+charCodeAt(n)|0`). JavaScript
// strings are UTF-16: every code unit that is not an ASCII letter or digit
// becomes "-" (a character outside the Basic Multilingual Plane gives two),
// and the hash runs over the code units of the unchanged path.
func ProjectDirName(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	var b strings.Builder
	for _, u := range units {
		if u < 128 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			b.WriteByte(byte(u))
		} else {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) <= maxProjectDirName {
		return name
	}
	var h int32
	for _, u := range units {
		h = (h << 5) - h + int32(u)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return name[:maxProjectDirName] + "-" + strconv.FormatInt(abs, 36)
}

// transcriptTurns reads the assistant turns of a transcript, by message
// id: the tokens of a session killed before it printed its result. It
// reports false when the file cannot be read or holds no turn.
func transcriptTurns(path string) (*turns, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	t := newTurns()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var l struct {
			Type    string    `json:"type"`
			Message *turnJSON `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "assistant" || l.Message == nil || l.Message.Usage == nil || l.Message.Model == "<synthetic>" {
			continue
		}
		t.see(l.Message.ID, l.Message.Model, l.Message.Usage.usage())
	}
	return t, len(t.order) > 0
}

// envLookup returns the last value of key in env and whether it is there.
func envLookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// transcriptOf is the transcript of session s run with env (the one place
// that computes it for quota.go), kept by the CLI under its working
// folder's name (workDir).
func transcriptOf(env []string, s agent.Session) string {
	return TranscriptPath(env, workDir(s), s.SessionID)
}
