"""The merge queue (issue 13, "Integration that does not queue"): how long
lots that finish together take to integrate when a repository's test gate is
slow, with batches (the default) and without (`merge_queue = false`).

Side by side, alternating which goes first, each run on a fresh repository:

  queue   `cadence apply -auto-approve -jobs 4 wave.hcl`: MQ_LOTS command lots
          `echo i > fi; git add fi; git commit -qm li` in one repo with
          `parallel = 4` and the test gate `sleep MQ_GATE` (it also appends
          a line to a log, to count its runs).
  alone   the same wave with `merge_queue = false`: every lot rebased, gated
          and integrated alone, one after the other (cadence before batches).
  before  optional, CADENCE_BEFORE: another cadence binary (e.g. built from
          an older commit) on the wave without the attribute.

Measured per run, from the state file: the window from the first lot ready to
integrate (the earliest start of an integrate step) to the last lot
integrated (the latest end of an ok integrate step); the wall time of the
apply; the gate's runs (own test steps and integration gates). The figure is
the ratio of the medians of the window, queue / alone. Environment: MQ_LOTS
(8), MQ_GATE (2 s), MQ_RUNS (3), MQ_PARALLEL (4: the repository's
`parallel` and `-jobs`; 1 makes every lot fast-forward), QUICK=1 (one run of 4 lots, gate 0.2 s: the
smoke).
"""
import datetime
import json
import os
import statistics
import subprocess
import time

import gitfloor

PARALLEL = int(os.environ.get("MQ_PARALLEL", "4"))


def settings():
    quick = os.environ.get("QUICK") == "1"
    return {
        "lots": int(os.environ.get("MQ_LOTS", "4" if quick else "8")),
        "gate": float(os.environ.get("MQ_GATE", "0.2" if quick else "2")),
        "runs": int(os.environ.get("MQ_RUNS", "1" if quick else "3")),
        "quick": quick,
    }


def write_wave(d, side, s):
    # The gate's log is in a folder the step sandbox may write
    # (sandbox_writable): the wave's folder is read-only in the box.
    gates = os.path.join(d, "gates")
    os.makedirs(gates, exist_ok=True)
    gate_log = os.path.join(gates, "gate.log")
    attr = "  merge_queue = false\n" if side == "alone" else ""
    with open(os.path.join(d, "wave.hcl"), "w") as f:
        f.write(f'wave "mq" {{}}\n\nrepo "r" {{\n  path     = "repo"\n  parallel = {PARALLEL}\n'
                f'  sandbox_writable = ["{gates}"]\n'
                f'  test     = "sleep {s["gate"]}; echo run >> {gate_log}"\n{attr}}}\n')
        for i in range(1, s["lots"] + 1):
            f.write(f'\nlot "l{i}" {{\n  repo = repo.r\n  run  = "echo {i} > f{i}; git add f{i}; git commit -qm l{i}"\n}}\n')
    return gate_log


def parse_time(t):
    # RFC 3339 with up to nanoseconds: Python's fromisoformat wants at most 6 digits.
    t = t.replace("Z", "+00:00")
    if "." in t:
        head, rest = t.split(".", 1)
        digits = "".join(c for c in rest if c.isdigit())
        t = head + "." + digits[:6].ljust(6, "0") + rest[len(digits):]
    return datetime.datetime.fromisoformat(t).timestamp()


def window(state_path):
    st = json.load(open(state_path))
    starts, ends = [], []
    for lot in st["lots"].values():
        ints = [s for s in lot.get("steps", []) if s["kind"] == "integrate"]
        if ints:
            starts.append(parse_time(ints[0]["started"]))
        ok = [s for s in ints if s["status"] == "ok" and s.get("ended")]
        if ok:
            ends.append(parse_time(ok[-1]["ended"]))
    if not starts or not ends:
        return None
    return max(ends) - min(starts)


def run_side(side, d, cadence, env, s):
    repo = gitfloor.make_repo(d, "git")
    gate_log = write_wave(d, side, s)
    if side == "before":
        cadence = os.environ["CADENCE_BEFORE"]
    argv = [cadence, "apply", "-auto-approve", "-no-color", "-jobs", str(PARALLEL), "wave.hcl"]
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=d, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    commits = subprocess.run(["git", "-C", repo, "rev-list", "--count", "main"], capture_output=True, text=True).stdout.strip()
    gates = sum(1 for _ in open(gate_log)) if os.path.exists(gate_log) else 0
    ok = p.returncode == 0 and commits == str(s["lots"] + 1)
    with open(os.path.join(d, f"{side}.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    return {"side": side, "wall": wall, "rc": p.returncode, "commits": commits, "ok": ok, "gates": gates,
            "integration_gates": gates - s["lots"], "window": window(os.path.join(d, "wave.state.json"))}


def step(out, cadence, base_env, log, save):
    s = settings()
    where = os.path.join(out, "mergequeue")
    os.makedirs(where, exist_ok=True)
    sides = ["queue", "alone"] + (["before"] if os.environ.get("CADENCE_BEFORE") else [])
    res = []
    for i in range(s["runs"]):
        order = sides[i % len(sides):] + sides[:i % len(sides)]
        for side in order:
            r = run_side(side, os.path.join(where, side), cadence, dict(base_env), s)
            r["run"] = i
            res.append(r)
            w = f"{r['window']:.2f}s" if r["window"] is not None else "?"
            log(f"mergequeue run {i} {side:6} window {w} wall {r['wall']:.2f}s gate runs {r['gates']} "
                f"({r['integration_gates']} at integration) {'ok' if r['ok'] else 'FAILED rc=' + str(r['rc'])}")
    summary = {}
    for side in sides:
        rs = [r for r in res if r["side"] == side and r["ok"] and r["window"] is not None]
        if rs:
            summary[side] = {"window": statistics.median(r["window"] for r in rs),
                             "wall": statistics.median(r["wall"] for r in rs),
                             "gates": statistics.median(r["gates"] for r in rs),
                             "integration_gates": statistics.median(r["integration_gates"] for r in rs),
                             "runs": len(rs)}
    if "queue" in summary and "alone" in summary and summary["alone"]["window"] > 0:
        summary["ratio"] = summary["queue"]["window"] / summary["alone"]["window"]
    save("mergequeue", {"settings": s, "results": res, "summary": summary})
    ok = all(r["ok"] for r in res)
    log(f"mergequeue: ratio {summary.get('ratio', float('nan')):.2f} ({'all runs ok' if ok else 'SOME RUNS FAILED'})")
    if not ok:
        raise SystemExit("mergequeue: a run failed; see bench/out/mergequeue/*/*.log")


def summary_lines(mq):
    s, sm = mq["settings"], mq["summary"]
    lines = [f"### Merge queue ({s['lots']} command lots finishing together, `parallel = {PARALLEL}`, "
             f"`-jobs {PARALLEL}`, test gate `sleep {s['gate']:g}`)\n",
             "Window = first lot ready to integrate → last lot integrated (from the state file); medians of "
             f"{s['runs']} runs per side, alternating. `bench/run.sh mergequeue`.\n",
             "| side | window s | apply wall s | gate runs (at integration) |",
             "|---|---:|---:|---:|"]
    for side in ("alone", "before", "queue"):
        if side in sm:
            r = sm[side]
            lines.append(f"| {side} | {r['window']:.2f} | {r['wall']:.2f} | {r['gates']:g} ({r['integration_gates']:g}) |")
    if "ratio" in sm:
        lines.append(f"\nqueue ÷ alone (window): **{sm['ratio']:.2f}** (target ≤ 0.40).\n")
    return lines
