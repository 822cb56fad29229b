#!/bin/sh
# Run every benchmark (about 9 minutes on 2 cores), then print the summary.
#   bench/run.sh                 all steps
#   bench/run.sh startup memory  some steps (verify dags tmpfs sched startup memory handoff gitfloor mergequeue summary)
#   QUICK=1 bench/run.sh gitfloor mergequeue  the git floor and the merge queue as smokes
# Raw results: bench/out/*.json; tables: bench/out/summary.md.
set -eu
bench=$(cd "$(dirname "$0")" && pwd)
# go-task is installed only for the steps that run it.
NEED_TASK=0
[ $# -eq 0 ] && NEED_TASK=1
# ninja, make and /usr/bin/time (apt) only for the steps that run them: the
# git floor needs git and python3 only (the CI smoke runs it).
NEED_APT=0
[ $# -eq 0 ] && NEED_APT=1
for s in "$@"; do
	case $s in verify | dags | tmpfs | sched | startup) NEED_TASK=1 ;; esac
	case $s in gitfloor | gitprofile | mergequeue | summary) ;; *) NEED_APT=1 ;; esac
done
export NEED_TASK NEED_APT
"$bench/setup.sh"
CADENCE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/cadence-bench-home.XXXXXX")
export CADENCE_HOME
trap 'rm -rf "$CADENCE_HOME"' EXIT
if [ $# -eq 0 ]; then
	python3 "$bench/bench.py"
else
	python3 "$bench/bench.py" "$@" summary
fi
