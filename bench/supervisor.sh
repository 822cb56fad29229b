#!/bin/sh
# The step supervisor's options side by side in one run (bench/README.md,
# "Supervisor"): ROUNDS rounds (default 5), each running N supervised
# `true` steps (default 200) under each option in turn; medians of the
# rounds per option.
#   bench/supervisor.sh [BASE]   BASE: the commit of "today" (default: main)
# Options: a) BASE's cadence binary as its own supervisor, built as BASE
# documents (cgo: dynamic); b) this commit's cadence binary, static, as its
# own supervisor (the fallback without cadence-supervisor); c) this
# commit's cadence-supervisor, static; none) the step run directly, no
# supervisor (the floor). The checkouts are `git archive`s in a temporary
# folder, removed at the end; the driver is bench/supervisor/driver.go.txt.
set -eu
bench=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$bench")
base=${1:-main}
rounds=${ROUNDS:-5}
n=${N:-200}
work=$(mktemp -d "${TMPDIR:-/tmp}/cadence-supbench.XXXXXX")
trap 'rm -rf "$work"' EXIT
for t in base head; do
	mkdir -p "$work/$t"
	rev=$base
	[ $t = head ] && rev=HEAD
	git -C "$root" archive "$rev" | tar -x -C "$work/$t"
	mkdir -p "$work/$t/cmd/supbench"
	cp "$bench/supervisor/driver.go.txt" "$work/$t/cmd/supbench/main.go"
done
echo "supervisor: building $base (a) and $(git -C "$root" rev-parse --short HEAD) (b, c)" >&2
(cd "$work/base" && go build -o "$work/a/" ./cmd/cadence ./cmd/supbench)
(cd "$work/head" && CGO_ENABLED=0 go build -o "$work/b/" ./cmd/cadence ./cmd/cadence-supervisor ./cmd/supbench)
file "$work/a/cadence" "$work/b/cadence" "$work/b/cadence-supervisor" 2>/dev/null | sed 's/, Go BuildID.*//' >&2 || true
ls -l "$work/a/cadence" "$work/b/cadence" "$work/b/cadence-supervisor" | awk '{print $5, $NF}' >&2
out="$work/results"
: >"$out"
i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	echo "a $("$work/a/supbench" -n "$n" -exe "$work/a/cadence" -argv0 cadence)" >>"$out"
	echo "b $("$work/b/supbench" -n "$n" -exe "$work/b/cadence" -argv0 cadence)" >>"$out"
	echo "c $("$work/b/supbench" -n "$n" -exe "$work/b/cadence-supervisor" -argv0 cadence-supervisor)" >>"$out"
	echo "none $("$work/b/supbench" -n "$n")" >>"$out"
done
python3 - "$out" "$rounds" "$n" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    k, *v = line.split()
    rows.setdefault(k, []).append([float(x) for x in v])
names = {"a": "a) today: cadence re-executed (dynamic)",
         "b": "b) cadence re-executed, static",
         "c": "c) cadence-supervisor, static",
         "none": "no supervisor (direct)"}
print(f"medians of {sys.argv[2]} rounds of {sys.argv[3]} supervised `true` steps")
print("| option | wall ms/step | CPU ms/step (supervisor + step) | cadence's CPU ms/step | page faults/step |")
print("|---|---:|---:|---:|---:|")
for k in ["a", "b", "c", "none"]:
    med = [statistics.median(c) for c in zip(*rows[k])]
    print(f"| {names[k]} | {med[0]:.2f} | {med[1]:.2f} | {med[2]:.2f} | {med[3]:.0f} |")
PY
