package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
)

// TranscriptPath is where Claude Code keeps a session's transcript:
// $HOME/.claude/projects/<cwd with / and . replaced by ->/<session>.jsonl.
func TranscriptPath(home, cwd, session string) string {
	slug := strings.NewReplacer("/", "-", ".", "-").Replace(cwd)
	return filepath.Join(home, ".claude", "projects", slug, session+".jsonl")
}

// transcriptUsage sums the usage of the assistant turns in a transcript,
// each message counted once: the tokens of a session killed before it
// printed its result.
func transcriptUsage(path string) (state.Usage, bool) {
	f, err := os.Open(path)
	if err != nil {
		return state.Usage{}, false
	}
	defer f.Close()
	seen := map[string]state.Usage{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var l struct {
			Type    string `json:"type"`
			Message *struct {
				ID    string     `json:"id"`
				Model string     `json:"model"`
				Usage *usageJSON `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "assistant" || l.Message == nil || l.Message.Usage == nil || l.Message.Model == "<synthetic>" {
			continue
		}
		if _, ok := seen[l.Message.ID]; !ok {
			order = append(order, l.Message.ID)
		}
		seen[l.Message.ID] = l.Message.Usage.usage()
	}
	var u state.Usage
	for _, id := range order {
		u = u.Add(seen[id])
	}
	return u, len(order) > 0
}

// transcriptOf is the transcript of session s run with env (the one place
// that computes it for quota.go).
func transcriptOf(env []string, s agent.Session) string {
	return TranscriptPath(envValue(env, "HOME"), s.Dir, s.SessionID)
}
