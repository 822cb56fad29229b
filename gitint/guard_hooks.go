package gitint

import (
	"os"
	"path/filepath"
	"strings"
)

// GuardMarker marks every file of cadence's guard folder (hooks, the push
// helper, config files): a hook or file without it is not cadence's.
const GuardMarker = "# cadence guard"

// hookNames are the hooks git knows (githooks(5), git 2.39). The guard
// folder has one for each: pre-push and reference-transaction are
// cadence's own, every other one only chains to the hook the repository
// would have run itself.
var hookNames = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
	"pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive",
	"update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc",
	"post-rewrite", "sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
	"p4-pre-submit", "post-index-change",
}

// noPushScheme is the transport every push of a lot is sent to (push URLs,
// pushInsteadOf): git runs git-remote-<scheme>, cadence's helper, which
// refuses with a message naming the wave and the lot.
const noPushScheme = "cadence-no-push"

// shQuote quotes s for a POSIX shell, in single quotes.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// hookPrelude is the start of every script of the guard folder: where the
// guard is, and three functions. They start as few processes as they can
// (a hook runs for nearly every git command of a lot): where and lot_info
// none, chain one (git config).
//
// where sets gitdir to the git dir git runs the hook for (GIT_DIR, else
// the .git of the folder git runs hooks in, the worktree's top), absolute,
// links resolved.
//
// lot_info sets wave, lot and branch from cadence's entry of the lot
// worktree git runs in (<guard>/worktrees/<id>.config, written by
// GuardWorktree), read as a file: never from the environment or from
// `git -c`, which a step can set. Outside a lot worktree of this
// repository (the lead's checkout reached with `git -C` from a step that
// has the guard environment, another repository) they stay empty.
//
// chain runs the hook the repository would have run without cadence, with
// the same arguments and standard input: in ownHooks, the last
// core.hooksPath that is not cadence's as git reported it when the guard
// was installed (read once then, so that a hook costs no git process; a
// change of the user's global core.hooksPath during a wave is not seen)
// (absolute, `~/`, or relative to where git runs hooks:
// the worktree's top, so `.githooks` and husky's `.husky/_` are the lot's
// own copies), else in the hooks folder of the repository's git common
// dir; nothing when there is no such executable hook, as git does.
func hookPrelude(guard, common, ownHooks, name string) string {
	return `#!/bin/sh
` + GuardMarker + ` ` + name + ` (removed when the wave ends; see cadence clean)
guard=` + shQuote(guard) + `
common=` + shQuote(common) + `
hooks="$guard/hooks"
ownhooks=` + shQuote(ownHooks) + `
wave= lot= branch= gitdir=
where() {
	d=${GIT_DIR:-}
	if [ -z "$d" ]; then
		if [ -f .git ]; then
			IFS= read -r d < .git
			d=${d#gitdir: }
		elif [ -d .git ]; then
			d=.git
		else
			d=$(git rev-parse --absolute-git-dir 2>/dev/null) || return 0
		fi
	fi
	case $d in /*) ;; *) d=$PWD/$d ;; esac
	gitdir=$(cd "$d" 2>/dev/null && pwd -P)
}
lot_info() {
	where
	[ "${gitdir%/*}" = "$common/worktrees" ] || return 0
	f="$guard/worktrees/${gitdir##*/}.config"
	[ -f "$f" ] || return 0
	while IFS= read -r line; do
		case $line in
		"# wave="*) wave=${line#"# wave="} ;;
		"# lot="*) lot=${line#"# lot="} ;;
		"# branch="*) branch=${line#"# branch="} ;;
		esac
	done < "$f"
}
chain() {
	own=$ownhooks
	if [ -z "$own" ]; then
		[ -n "$gitdir" ] || where
		[ -n "$gitdir" ] || exit 0
		c=$gitdir
		if [ -f "$gitdir/commondir" ]; then
			IFS= read -r c < "$gitdir/commondir"
			case $c in /*) ;; *) c=$gitdir/$c ;; esac
		fi
		own=$c/hooks
	fi
	h="$own/` + name + `"
	[ -f "$h" ] && [ -x "$h" ] || exit 0
	if [ "$(cd "$own" 2>/dev/null && pwd -P)" = "$(cd "$hooks" && pwd -P)" ]; then
		exit 0
	fi
	exec "$h" "$@"
}
`
}

// refusal is the message of a refused push, naming the wave and the lot
// (from the lot worktree's entry, else the step's environment).
const refusal = `cadence: no push during wave ${wave:-${CADENCE_WAVE:-?}} (lot ${lot:-${CADENCE_LOT:-?}}): pushes from a lot's steps are refused; integration is local, pushing is the lead's call`

// prePushHook refuses every push. It runs only where cadence's hooks folder
// is the hooks path: in lot worktrees (the repository's include) and in the
// git processes of lot steps (the guard environment), never for the lead.
// The repository's own pre-push hook would run after the refusal, that is
// never.
func prePushHook(guard, common, ownHooks string) string {
	return hookPrelude(guard, common, ownHooks, "pre-push") + `lot_info
echo "` + refusal + `" >&2
exit 1
`
}

// referenceTransactionHook refuses, in the "prepared" state, an update of
// any ref of this repository that a lot may not move: a branch other than
// the lot's own (every branch outside a lot worktree), tags,
// remote-tracking refs, cadence's refs, and any other ref under refs/ or
// of another worktree (main-worktree/…, worktrees/…). It allows the
// worktree's own pseudo-refs (HEAD, ORIG_HEAD, FETCH_HEAD,
// CHERRY_PICK_HEAD, REBASE_HEAD, …) and refs/stash, refs/rewritten/*,
// refs/bisect/*, refs/worktree/* (what commit, rebase -i, cherry-pick,
// stash, bisect and fetch update besides the branch). In another
// repository (a submodule, a clone a step made) it refuses nothing. Then,
// in every state, it chains to the repository's own hook with the same
// input.
func referenceTransactionHook(guard, common, ownHooks string, chainOwn bool) string {
	// The transaction is read with the shell's own read, no cat: a hook
	// that must start another program would let a step whose PATH lacks
	// it through (an empty transaction refuses nothing).
	read := `input=
while IFS= read -r line; do
	input="$input$line
"
done
`
	tail := `printf '%s' "$input" | chain "$@"
`
	if !chainOwn {
		// No hook of the repository's own to hand the transaction to: the
		// states after "prepared" need nothing, not even their input
		// (git ignores a hook that does not read it).
		read = `[ "$1" = prepared ] || exit 0
` + read
		tail = `exit 0
`
	}
	return hookPrelude(guard, common, ownHooks, "reference-transaction") + read + `if [ "$1" = prepared ]; then
	lot_info
	if [ "$gitdir" = "$common" ] || [ "${gitdir%/*}" = "$common/worktrees" ]; then
		refused=
		while read -r old new ref; do
			case "$ref" in
			"") continue ;;
			refs/heads/*) [ -n "$branch" ] && [ "$ref" = "refs/heads/$branch" ] && continue ;;
			refs/stash|refs/rewritten/*|refs/bisect/*|refs/worktree/*) continue ;;
			refs/*|*/*) ;;
			*) continue ;;
			esac
			refused="$refused $ref"
		done <<EOF
$input
EOF
		if [ -n "$refused" ]; then
			if [ -n "$branch" ]; then
				mine="only its own branch $branch"
			else
				mine="no branch outside its own worktree"
			fi
			echo "cadence: wave ${wave:-${CADENCE_WAVE:-?}} (lot ${lot:-${CADENCE_LOT:-?}}) may not update$refused: a lot moves $mine; the base moves only by cadence's integration" >&2
			exit 1
		fi
	fi
fi
` + tail
}

// shimHook only chains to the repository's own hook.
func shimHook(guard, common, ownHooks, name string) string {
	return hookPrelude(guard, common, ownHooks, name) + `chain "$@"
`
}

// hookScript returns the script of the named hook in the guard folder;
// chainOwn says the repository may have a hook of that name of its own
// (ownHookNames).
func hookScript(guard, common, ownHooks, name string, chainOwn bool) string {
	switch name {
	case "pre-push":
		return prePushHook(guard, common, ownHooks)
	case "reference-transaction":
		return referenceTransactionHook(guard, common, ownHooks, chainOwn)
	}
	return shimHook(guard, common, ownHooks, name)
}

// ownHookNames are the hooks the repository would run itself, of
// hookNames: with a relative ownHooks (the lot's tracked files, each
// worktree its own) every name; else those that are executable files in
// ownHooks, or in <common>/hooks when it is "", when the guard is
// installed. The lot hooks folder holds a shim for these only (git starts
// nothing for an absent hook), so a hook added there while the wave runs
// runs for lots from the next apply on (docs/integration.md, Guards).
func ownHookNames(common, ownHooks string) map[string]bool {
	names := map[string]bool{}
	dir := ownHooks
	switch {
	case dir == "":
		dir = filepath.Join(common, "hooks")
	case !filepath.IsAbs(dir):
		for _, n := range hookNames {
			names[n] = true
		}
		return names
	}
	for _, n := range hookNames {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			names[n] = true
		}
	}
	return names
}

// pushHelper is git-remote-cadence-no-push, the remote helper git runs for
// a push that cadence's config sent to the cadence-no-push transport: it
// says why and fails. git passes the remote and the URL.
func pushHelper(guard, common string) string {
	return hookPrelude(guard, common, "", "git-remote-"+noPushScheme) + `lot_info
to=${2:-$1}
echo "` + refusal + ` (push to $to)" >&2
exit 1
`
}
