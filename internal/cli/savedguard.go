package cli

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/safefile"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// planOptions are the apply flags that change what is planned: Terraform
// refuses them with a saved plan too, since the plan was the review. -var
// and -var-file may be given again, and must then match the saved ones.
var planOptions = []string{"target", "replace", "budget", "budget-usd", "max-sessions", "jobs", "offline"}

// refuseSavedOptions refuses apply PLANFILE when a flag that changes the
// plan was given (exit 2). It returns goOn to go on.
func refuseSavedOptions(e *env, fs *flag.FlagSet) ExitCode {
	var given []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(planOptions, f.Name) {
			given = append(given, "-"+f.Name)
		}
	})
	if len(given) > 0 {
		fmt.Fprintf(e.stderr, "cadence apply: %s cannot be given with a saved plan, which runs exactly as it was planned: run cadence plan -out again with them\n", strings.Join(given, ", "))
		return ExitApplyRefused
	}
	return goOn
}

// refuseOffline refuses apply of a plan saved with -offline when the
// offline plan skipped something that the plan p, made now, has: a
// repository (whose base commit the saved plan did not record, so nothing
// says it is where it was) or an agent lot to run (the agent CLI was not
// checked). A wave of command lots in no repository skipped nothing.
func refuseOffline(e *env, s *planner.SavedPlan, p *planner.Plan) ExitCode {
	if !s.Offline || (len(p.Repos) == 0 && p.Totals.PendingAgent == 0) {
		return goOn
	}
	fmt.Fprintf(e.stderr, "cadence apply: the plan was saved with -offline: it skipped the machine checks and recorded no base commits, so it cannot be applied; run cadence plan -out without -offline\n")
	return ExitApplyRefused
}

// isWaveFileName reports whether name is named as a wave file is: *.hcl,
// or *.json (HCL's JSON syntax, spec.IsJSON).
func isWaveFileName(name string) bool {
	return strings.HasSuffix(name, ".hcl") || spec.IsJSON(name)
}

// refuseOverwrite refuses plan -out PATH when a file is at path that is
// not a saved plan: the wave file, a var file, a file() input or anything
// else a mistyped -out would destroy. A missing file or a saved plan this
// cadence reads is replaced (a saved plan of another format is not: remove
// it first).
func refuseOverwrite(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("-out %s: it is not a regular file", path)
	}
	if _, err := planner.ReadSaved(path); err != nil {
		return fmt.Errorf("-out %s would overwrite a file that is not a saved plan (%v); name a new file", path, err)
	}
	return nil
}

// planKeyFile is the key of secretDigest, in the cadence home.
const planKeyFile = "plan.key"

// planKey returns the key that secretDigest uses: 32 random bytes kept in
// $CADENCE_HOME/plan.key (mode 0600), made on first use. A saved plan
// records what env() returned as a keyed digest, not a plain SHA-256: a
// plan file may travel (a CI artifact), and a short secret's plain digest
// can be found by trying every value. The price: a plan saved on one
// machine (or under another CADENCE_HOME) cannot be applied on another
// when the wave calls env(), since the digests differ there (apply calls
// it stale and says why).
func planKey() ([]byte, error) {
	home := os.Getenv("CADENCE_HOME")
	userHome, _ := os.UserHomeDir()
	path := filepath.Join(layout.Home(home, userHome), planKeyFile)
	if b, err := safefile.Read(path, 1024); err == nil && len(b) >= 32 {
		return b, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("plan key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // made by another cadence meanwhile
		if b, err := safefile.Read(path, 1024); err == nil && len(b) >= 32 {
			return b, nil
		}
		return nil, fmt.Errorf("plan key %s is unreadable or too short: remove it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("plan key: %w", err)
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		return nil, fmt.Errorf("plan key: %w", err)
	}
	return key, f.Close()
}

// secretDigest is the digest a saved plan records for a value that may be
// a secret: "hmac-sha256:" and the hex HMAC-SHA256 of v under planKey.
// Without a key it is "unkeyed", which matches no recorded digest: apply
// then calls the plan stale rather than guess (plan -out checks the key
// first and fails without one).
func secretDigest(v string) string {
	key, err := planKey()
	if err != nil {
		return "unkeyed"
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(v))
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}
