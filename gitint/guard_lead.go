package gitint

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cadence-run/cadence/spec"
)

// The lead's side of the guard: every git process of the repository that
// does not work in a lot worktree (the lead's checkout, the lead's own
// linked worktrees) reads lead.config, which points core.hooksPath at
// <guard>/lead-hooks. There every hook only chains to the repository's own
// hook, but for two:
//
//   - reference-transaction tells a step's process from the lead's
//     (stepCheck): a step's update of a ref it may not move is refused as
//     in a lot worktree; an update of a guarded ref (refs/heads/*,
//     refs/tags/*) by anyone else is committed and, once git has made it,
//     reported to the witness of the apply (witness.go), which checks
//     itself who sent it and records it (OutsideMoves);
//   - pre-push refuses a step's push and chains for the lead's.
//
// lead.config is included by the repository's config for its main
// worktree (includeIf gitdir:<common>) and by lots.config for every linked
// worktree, before the lot worktrees' own entries (which set cadence's lot
// hooks instead).

// ownerFile, in the guard folder, names the cadence process that owns the
// wave, three lines: its pid, its name as /proc/<pid>/status says
// ("Name:"), and the inode of its PID namespace (/proc/self/ns/pid).
const ownerFile = "owner"

// stepCheck is the shell function is_step of the lead-side hooks: it
// succeeds when the hook runs for a process of a step of the wave. That is
// a process that carries a step's mark (CADENCE_WAVE_ID or CADENCE_LOT in
// its environment), or that descends from the cadence process of the
// owner file (every step runs below it: under its supervisor, a child
// subreaper that keeps double-forked processes below it, or as its direct
// child; cadence's own git runs no hook), found by walking the PPid chain
// in /proc (at most 64 steps, no process started). When that process
// cannot be seen, the hook runs either after cadence ended (same PID
// namespace: not a step) or inside a sandbox's own PID namespace (a step);
// `stat` tells which.
const stepCheck = `is_step() {
	[ -n "${CADENCE_WAVE_ID:-}${CADENCE_LOT:-}" ] && return 0
	[ -f "$guard/owner" ] || return 1
	{ IFS= read -r opid; IFS= read -r oname; IFS= read -r ons; } < "$guard/owner"
	if [ -e "/proc/$opid/status" ] && [ /proc/self/ns/pid -ef "/proc/$opid/ns/pid" ]; then
		p=$PPID n=0
		while [ "$n" -lt 64 ] && [ -n "$p" ] && [ "$p" -gt 1 ]; do
			name= pp=
			while IFS= read -r line; do
				case $line in
				Name:*) name=${line#Name:}; name=${name#"${name%%[![:space:]]*}"} ;;
				PPid:*) pp=${line#PPid:}; pp=${pp#"${pp%%[![:space:]]*}"}; break ;;
				esac
			done < "/proc/$p/status" 2>/dev/null
			[ "$p" = "$opid" ] && [ "$name" = "$oname" ] && return 0
			p=$pp n=$((n+1))
		done
		return 1
	fi
	[ "$(stat -Lc %i /proc/self/ns/pid 2>/dev/null)" = "$ons" ] && return 1
	return 0
}
`

// leadRefTxHook is the lead-side reference-transaction hook (see above):
// client is the witness client ("" reports nothing), sock the witness's
// socket (reported to only while it exists: a hook that runs after
// cadence ended returns at once).
func leadRefTxHook(guard, common, ownHooks, client string) string {
	return hookPrelude(guard, common, ownHooks, "reference-transaction") + stepCheck + `client=` + shQuote(client) + `
sock=` + shQuote(witnessPath(common)) + `
input=$(cat; echo .)
input=${input%.}
case $1 in
prepared)
	if is_step; then
		refused=
		while read -r old new ref; do
			case "$ref" in
			"") continue ;;
			refs/stash|refs/rewritten/*|refs/bisect/*|refs/worktree/*) continue ;;
			refs/*|*/*) ;;
			*) continue ;;
			esac
			refused="$refused $ref"
		done <<EOF
$input
EOF
		if [ -n "$refused" ]; then
			echo "cadence: wave ${CADENCE_WAVE:-?} (lot ${CADENCE_LOT:-?}) may not update$refused: a lot moves no branch outside its own worktree; the base moves only by cadence's integration" >&2
			exit 1
		fi
	fi
	;;
committed)
	lines=
	while read -r old new ref; do
		case "$ref" in
		refs/heads/*|refs/tags/*) lines="$lines$old $new $ref
" ;;
		esac
	done <<EOF
$input
EOF
	if [ -n "$lines" ] && [ -S "$sock" ] && [ -x "$client" ] && ! is_step; then
		printf '%s' "$lines" | "$client" ` + WitnessCommand + ` "$sock" || :
	fi
	;;
esac
printf '%s' "$input" | chain "$@"
`
}

// leadPrePushHook refuses a step's push (is_step) and chains to the
// repository's own pre-push hook for the lead's.
func leadPrePushHook(guard, common, ownHooks string) string {
	return hookPrelude(guard, common, ownHooks, "pre-push") + stepCheck + `if is_step; then
	echo "` + refusal + `" >&2
	exit 1
fi
chain "$@"
`
}

// leadHookScript returns the script of the named hook in lead-hooks
// (client: the witness client, leadRefTxHook).
func leadHookScript(guard, common, ownHooks, client, name string) string {
	switch name {
	case "pre-push":
		return leadPrePushHook(guard, common, ownHooks)
	case "reference-transaction":
		return leadRefTxHook(guard, common, ownHooks, client)
	}
	return shimHook(guard, common, ownHooks, name)
}

// leadConfig is lead.config: core.hooksPath = <guard>/lead-hooks.
func leadConfig(guard string) string {
	return fmt.Sprintf("%s: the config of the lead's worktrees (removed when the wave ends; see cadence clean)\n[core]\n\thooksPath = %s\n",
		GuardMarker, cfgQuote(filepath.Join(guard, "lead-hooks")))
}

// leadIncludeKey is the config key of cadence's entry for the main
// worktree: includeIf.gitdir:<common>.path (the main worktree's git dir is
// the common dir; linked worktrees' are below it and do not match).
func leadIncludeKey(common string) string {
	return "includeIf.gitdir:" + globEscape(common) + ".path"
}

// writeLeadSide writes lead-hooks, lead.config and the owner file (this
// process) into dir, for the guard folder's final place guard; the hooks
// run client as the witness client (Git.WitnessClient).
func writeLeadSide(dir, guard, common, ownHooks, client string) error {
	if err := os.MkdirAll(filepath.Join(dir, "lead-hooks"), 0o755); err != nil {
		return err
	}
	for _, name := range hookNames {
		if err := os.WriteFile(filepath.Join(dir, "lead-hooks", name), []byte(leadHookScript(guard, common, ownHooks, client, name)), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "lead.config"), []byte(leadConfig(guard)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(ownerLines()), 0o644)
}

// guardOwner is the pid the owner file names: this process, whose
// descendants are the wave's steps.
var guardOwner = os.Getpid

// ownerLines are the owner file's lines for this process.
func ownerLines() string {
	name := ""
	if f, err := os.Open("/proc/self/status"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "Name:"); ok {
				name = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	ns := ""
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &st); err == nil {
		ns = strconv.FormatUint(st.Ino, 10)
	}
	return fmt.Sprintf("%d\n%s\n%s\n", guardOwner(), name, ns)
}

// zeroOID is git's object name for "no object" in a ref transaction.
func zeroOID(s string) bool { return strings.Trim(s, "0") == "" }

// OutsideMove is a guarded ref update the witness saw made outside the
// wave (by the lead): when it was received, and the move (Old "" for a
// created ref, New "" for a deleted one).
type OutsideMove struct {
	When time.Time
	RefMove
}

// OutsideMoves are the updates of guarded refs that the witness of the
// repository whose git common dir is common (run by this process)
// recorded as the lead's, oldest first, those received at since or later.
// No witness is no move.
func OutsideMoves(common string, since time.Time) []OutsideMove {
	moves, _ := witnessed(common, since, false)
	return moves
}

// Refusals takes the reports the witness of the repository whose git
// common dir is common refused (a step posing as the lead), each handed
// out once, oldest first.
func Refusals(common string) []Refusal {
	_, refused := witnessed(common, time.Time{}, true)
	return refused
}

// LeadValue follows the outside moves of m.Ref from m.Old, in order, and
// returns where they leave it: m.New when the lead made the whole move, m.Old
// when none of it, a value between when the lead moved the ref and
// something else moved it again.
func LeadValue(m RefMove, outside []OutsideMove) string {
	v := m.Old
	for _, o := range outside {
		if o.Ref == m.Ref && o.Old == v {
			v = o.New
		}
	}
	return v
}

// OutsideMoves implements the executor's view (OutsideMoves), the common
// dir asked of git once per repository.
func (g *Repos) OutsideMoves(ctx context.Context, repo *spec.Repo, since time.Time) []OutsideMove {
	common, err := g.commonDir(ctx, repo.Path)
	if err != nil {
		return nil
	}
	return OutsideMoves(common, since)
}

// Refusals implements the executor's view (Refusals).
func (g *Repos) Refusals(ctx context.Context, repo *spec.Repo) []Refusal {
	common, err := g.commonDir(ctx, repo.Path)
	if err != nil {
		return nil
	}
	return Refusals(common)
}
