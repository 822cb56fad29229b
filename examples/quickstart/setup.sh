#!/bin/sh
# Creates the quickstart's throwaway repository, repos/app, from scratch: a
# git repository on branch main with one commit and a test script. Safe to
# run again: it removes the old one first.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# A fresh start: the state and worktrees of an earlier run go too.
rm -rf "$here/.cadence" "$here"/*.state.json "$here"/*.state.json.journal "$here"/*.state.json.lock
rm -rf "$here/repos/app"
mkdir -p "$here/repos/app"
cd "$here/repos/app"
git init -q -b main .
git config user.name "cadence quickstart"
git config user.email "quickstart@cadence.invalid"
printf '#!/bin/sh\n# The test gate: every file under src must be non-empty.\nfor f in src/*; do [ -e "$f" ] || exit 0; [ -s "$f" ] || { echo "$f is empty"; exit 1; }; done\n' > test.sh
printf '# app\n\nA throwaway repository for the cadence quickstart.\n' > README.md
git add test.sh README.md
git commit -qm "initial commit"
echo "created $here/repos/app"
