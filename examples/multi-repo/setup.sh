#!/bin/sh
# Creates the throwaway repositories repos/api and repos/web for this example.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# A fresh start: the state and worktrees of an earlier run go too.
rm -rf "$here/.cadence" "$here"/*.state.json "$here"/*.state.json.journal "$here"/*.state.json.lock
for r in api web; do
  rm -rf "$here/repos/$r"
  mkdir -p "$here/repos/$r"
  cd "$here/repos/$r"
  git init -q -b main .
  git config user.name "cadence example"
  git config user.email "example@cadence.invalid"
  printf '# %s\n' "$r" > README.md
  if [ "$r" = api ]; then
    printf 'module example.com/api\n\ngo 1.22\n' > go.mod
    printf '# Changelog\n\n## [Unreleased]\n' > CHANGELOG.md
  else
    printf '{"name":"web","private":true,"scripts":{"test":"node --test"}}\n' > package.json
  fi
  git add -A
  git commit -qm "initial commit"
done
echo "created $here/repos/api and $here/repos/web"
