#!/usr/bin/env bash
# The remote-executor benchmark (docs/remote.md): one command wave of N
# lots in one repository, each lot one commit and a test gate, run with
# `apply -executor local` and through an embedded engine (`cadence engine`)
# with 3 workers (`cadence worker -slots S`, each its own CADENCE_HOME, as
# three machines would be), R rounds in ABBA order (local first in odd
# rounds, remote first in even ones: a machine that slows down over a run
# of waves favours neither); prints each run's wall seconds, how many of
# its lot test gates ran on workers, and the medians' ratio. What leaves
# the machine is the lots' own test gates (remote = ["tests"]): a command
# lot's run step runs where the repositories are, and so does the
# integration with the merge queue's gate.
#
#   bash bench/remote.sh [N] [R]       (defaults 1000 lots, 3 rounds)
#   QUICK=1 bash bench/remote.sh       (100 lots, 1 round)
#   MERGE_QUEUE=false bash bench/remote.sh   (every lot runs its own gate:
#                                             on a worker, in the remote run)
#   TMPDIR=/mnt/tmpfs bash bench/remote.sh   (off the disk: ext4's inode
#                                             allocation after a wave's
#                                             worktrees were removed slows
#                                             the next wave, kernel time)
#
# Needs a cadence binary (CADENCE, default: built from this tree into the
# scratch folder). Everything it makes is under one mktemp folder, removed
# at the end (KEEP=1 keeps it); the engine and workers are stopped however
# it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
R=${2:-3}
if [ "${QUICK:-}" = 1 ]; then N=100; R=1; fi
JOBS=${JOBS:-4}
MERGE_QUEUE=${MERGE_QUEUE:-true}
SLOTS=${SLOTS:-2}
scratch=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "${KEEP:-}" ]; then echo "kept $scratch"; else rm -rf "$scratch"; fi
}
trap cleanup EXIT
if [ -z "${CADENCE:-}" ]; then
  CGO_ENABLED=0 go build -o "$scratch/bin/cadence" ./cmd/cadence
  CGO_ENABLED=0 go build -o "$scratch/bin/cadence-supervisor" ./cmd/cadence-supervisor
  CADENCE=$scratch/bin/cadence
fi
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@cadence.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@cadence.invalid

# The engine, on a free loopback port, queue bench with a cap of 3 × SLOTS.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=nats://127.0.0.1:$port
CADENCE_HOME=$scratch/engine-home "$CADENCE" engine -listen 127.0.0.1:$port -store "$scratch/store" \
  -queue "bench:$((3 * SLOTS))" > "$scratch/engine.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do grep -q 'engine ready' "$scratch/engine.log" && break; sleep 0.1; done
grep -q 'engine ready' "$scratch/engine.log" || { cat "$scratch/engine.log"; exit 1; }
for w in 1 2 3; do
  mkdir -p "$scratch/w$w"
  (cd "$scratch/w$w" && CADENCE_HOME=$scratch/w$w/home exec "$CADENCE" worker -engine "$url" -queue bench \
    -slots "$SLOTS" -id "w$w" -cache "$scratch/w$w/cache" > "$scratch/w$w/log" 2>&1) &
  pids+=($!)
done
for w in 1 2 3; do
  for _ in $(seq 1 300); do grep -q 'serving queue bench' "$scratch/w$w/log" && break; sleep 0.1; done
  grep -q 'serving queue bench' "$scratch/w$w/log" || { cat "$scratch/w$w/log"; exit 1; }
done

# wave DIR MODE: a fresh repository and wave file of N lots in DIR.
wave() {
  rm -rf "$1" && mkdir -p "$1"
  git init -q -b main "$1/app"
  git -C "$1/app" commit -q --allow-empty -m init
  {
    printf 'wave "remote-bench" {}\n'
    if [ "$2" = remote ]; then
      printf 'executor "nats" {\n  url    = "%s"\n  queue  = "bench"\n  remote = ["tests"]\n}\n' "$url"
    fi
    printf 'repo "app" {\n  path        = "app"\n  parallel    = 4\n  merge_queue = %s\n  test        = "test -n \\"$(git log -1 --format=%%s)\\""\n}\n' "$MERGE_QUEUE"
    for i in $(seq 1 "$N"); do
      printf 'lot "l%d" {\n  repo = repo.app\n  run  = "echo %d > f%d && git add f%d && git commit -qm l%d"\n}\n' "$i" "$i" "$i" "$i" "$i"
    done
  } > "$1/wave.hcl"
}

declare -A times
for r in $(seq 1 "$R"); do
  order="local remote"
  [ $((r % 2)) = 0 ] && order="remote local"
  for mode in $order; do
    d=$scratch/run-$mode-$r
    wave "$d" "$mode"
    flag=()
    [ "$mode" = local ] && flag=(-executor local)
    start=$(date +%s.%N)
    # In the background, so that the clean-up stops it too (SIGTERM: it
    # stops its lots cleanly) when this script is stopped.
    (cd "$d" && CADENCE_HOME=$scratch/lead-home exec "$CADENCE" apply -auto-approve -no-color -jobs "$JOBS" "${flag[@]}" > out 2>&1) &
    apply=$!
    pids+=($apply)
    wait "$apply" || { echo "$mode run $r failed:"; tail -20 "$d/out"; exit 1; }
    end=$(date +%s.%N)
    t=$(python3 -c "print(f'{$end-$start:.2f}')")
    n=$(git -C "$d/app" log --format=%s main | grep -c '^l')
    [ "$n" = "$N" ] || { echo "$mode run $r: $n of $N lots on main"; exit 1; }
    times[$mode]="${times[$mode]:-} $t"
    steps=$(python3 - "$d" <<'PY'
import glob, json, sys
st = json.load(open(glob.glob(sys.argv[1] + "/*.state.json")[0]))
steps = [s for l in st["lots"].values() for s in l["steps"]]
gates = sum(s["kind"] == "test" for s in steps)
away = sum("remote" in s for s in steps)
print(f"{gates} lot test gates, {away} of them on workers")
PY
)
    echo "run $r $mode: $t s ($N lots on main; $steps)"
    [ -n "${KEEP:-}" ] || rm -rf "$d"
  done
done
python3 - "${times[local]}" "${times[remote]}" <<'PY'
import statistics, sys
l = [float(x) for x in sys.argv[1].split()]
r = [float(x) for x in sys.argv[2].split()]
ml, mr = statistics.median(l), statistics.median(r)
print(f"median local {ml:.2f} s, remote (3 workers) {mr:.2f} s: remote / local = {mr/ml:.2f}")
PY
