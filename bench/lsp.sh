#!/bin/sh
# cadence lsp on a 1,000-lot wave, before and after: the three benchmarks of
# internal/lsp (bench_test.go) at commit BEFORE (its tree from git archive, with
# this tree's bench_test.go and client_test.go dropped in) and in this tree,
# alternating ROUNDS times (-benchtime 20x each), then the medians in ms.
#   bench/lsp.sh BEFORE [ROUNDS]
set -eu
[ $# -ge 1 ] || { echo "usage: bench/lsp.sh BEFORE-COMMIT [ROUNDS]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${2:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cadence-bench-lsp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/before"
git -C "$root" archive "$1" | tar -x -C "$tmp/before"
cp "$root/internal/lsp/bench_test.go" "$root/internal/lsp/client_test.go" "$tmp/before/internal/lsp/"
(cd "$tmp/before" && go test -c -o "$tmp/before.test" ./internal/lsp)
(cd "$root" && go test -c -o "$tmp/after.test" ./internal/lsp)
echo "load before: $(uptime)"
i=0
while [ "$i" -lt "$rounds" ]; do
	for side in before after; do
		(cd "$root/internal/lsp" && "$tmp/$side.test" -test.run '^$' -test.bench Lots -test.benchtime 20x) |
			awk -v side="$side" '/^Benchmark/ { sub(/-[0-9]+$/, "", $1); print side, $1, $3 }' >>"$tmp/results"
	done
	i=$((i + 1))
done
echo "load after: $(uptime)"
python3 - "$tmp/results" <<'PY'
import sys, statistics
runs = {}
for line in open(sys.argv[1]):
    side, name, ns = line.split()
    runs.setdefault(name.removeprefix("Benchmark"), {}).setdefault(side, []).append(int(ns) / 1e6)
print("| benchmark | before (median; runs) ms | after (median; runs) ms | after ÷ before |")
print("|---|---:|---:|---:|")
for name, sides in runs.items():
    b, a = statistics.median(sides["before"]), statistics.median(sides["after"])
    fmt = lambda xs: ", ".join(f"{x:.1f}" for x in xs)
    print(f"| {name} | **{b:.1f}** ({fmt(sides['before'])}) | **{a:.1f}** ({fmt(sides['after'])}) | {a / b:.2f} |")
PY
