#!/bin/sh
# Creates the throwaway repository repos/site for this example.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# A fresh start: the state and worktrees of an earlier run go too.
rm -rf "$here/.cadence" "$here"/*.state.json "$here"/*.state.json.journal "$here"/*.state.json.lock
rm -rf "$here/repos/site"
mkdir -p "$here/repos/site/docs"
cd "$here/repos/site"
git init -q -b main .
git config user.name "cadence example"
git config user.email "example@cadence.invalid"
printf '# Home\n\nSee [the guide](guide.md).\n' > docs/index.md
printf '#!/bin/sh\ntest -d docs\n' > check.sh
git add -A
git commit -qm "initial commit"
echo "created $here/repos/site"
