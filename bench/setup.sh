#!/bin/sh
# Install what the benchmarks need, when missing: ninja (Debian ninja-build),
# go-task (go install, into bench/.tools/bin), and build cadence and
# cadence-supervisor into bench/out.
set -eu
bench=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$bench")
mkdir -p "$bench/out" "$bench/.tools/bin"

need_apt=""
# NEED_APT=0 (run.sh, for steps that run none of them): skip them.
if [ "${NEED_APT:-1}" = 1 ]; then
	command -v ninja >/dev/null 2>&1 || need_apt="$need_apt ninja-build"
	[ -x /usr/bin/time ] || need_apt="$need_apt time"
	command -v make >/dev/null 2>&1 || need_apt="$need_apt make"
fi
if [ -n "$need_apt" ]; then
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "setup: apt-get install$need_apt" >&2
	$sudo apt-get update >/dev/null
	# shellcheck disable=SC2086
	$sudo apt-get install -y $need_apt >/dev/null
fi

# NEED_TASK=0 (run.sh, for steps that do not run go-task): skip it.
if [ "${NEED_TASK:-1}" = 1 ] && [ ! -x "$bench/.tools/bin/task" ]; then
	echo "setup: go install github.com/go-task/task/v3/cmd/task@latest (a few minutes)" >&2
	# Outside the module, so that go.mod/go.sum are not involved.
	(cd "$bench/.tools" && GOBIN="$bench/.tools/bin" GOFLAGS= go install github.com/go-task/task/v3/cmd/task@latest)
fi

# The documented build: static, with the step supervisor beside cadence.
echo "setup: CGO_ENABLED=0 go build -o bench/out/ ./cmd/cadence ./cmd/cadence-supervisor" >&2
(cd "$root" && CGO_ENABLED=0 go build -o "$bench/out/" ./cmd/cadence ./cmd/cadence-supervisor)
# The commit the binary was built from (the summary names it).
(cd "$root" && c=$(git rev-parse --short HEAD) &&
	if [ -n "$(git status --porcelain --untracked-files=no -- . ':!bench')" ]; then c="$c (uncommitted changes outside bench/)"; fi &&
	echo "$c" >"$bench/out/cadence.commit") || true
