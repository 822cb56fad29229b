#!/usr/bin/env python3
"""cadence benchmarks: the driver behind bench/run.sh (see bench/README.md).

    python3 bench/bench.py [STEP ...]

STEPs: verify dags tmpfs sched gap startup memory handoff gitfloor gitprofile mergequeue summary
(default: all, in that order; tmpfs is the dags step again, N = 1000, with
the inputs on /dev/shm; gitfloor is cadence in a git repository next to the
same git work by hand, bench/gitfloor.py; gitprofile, not run by default,
is where cadence's time goes in that wave). Raw results go to bench/out/<step>.json, the tables to
bench/out/summary.md. Environment:

    CADENCE      cadence binary (default bench/out/cadence)
    CADENCE_BEFORE  an older cadence binary: the tool "before" in TOOLS, and the
                 gitfloor step's third side
                 (cadence-supervisor is looked for beside each cadence binary,
                 so build each into a folder of its own: docs/running.md)
    GAP_N, GAP_RUNS  the gap step's chain length (200) and runs per tool (5)
    TASK         go-task binary (default bench/.tools/bin/task)
    SIZES        DAG sizes, e.g. "100 1000 5000" (default)
    SHAPES       DAG shapes (default "wide chain layered"; also layers10, gen.py)
    TOOLS        tools (default "cadence make ninja task"); also "before" (CADENCE_BEFORE)
                 and "cadence-nosandbox", "before-nosandbox": the same binary on
                 wave-nosandbox.hcl, whose lots say `sandbox = false`
    SCHED_N, SCHED_RUNS, SCHED_JOBS   the sched step's lots (200), runs per tool (3)
                 and -jobs (2)
    RUNS_100, RUNS_1000, RUNS_5000   timed runs per size (default 5, 5, 3)
    TASK_RUNS_5000  go-task runs at 5000 lots (default 1: ~20 s a run)
    TMPFS_SIZES, TMPFS_RUNS, TMPFS_TOOLS   the tmpfs step's sizes, runs and tools
                 (default "1000", 3, "cadence make ninja")
    TASK_TIMEOUT seconds before a go-task run is abandoned (default 120)
    STARTUP_RUNS runs per command of the start-time step (default 200)
    GITFLOOR_LOTS, GITFLOOR_RUNS, GITFLOOR_SLEEP   the gitfloor step's lots
                 (20), runs per side (5) and each lot's sleep (0.3 s)
    QUICK=1      the gitfloor step as a smoke: one run of 4 lots, no sleep
"""
import atexit
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gitfloor  # noqa: E402
import mergequeue  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
OUT = os.path.join(BENCH, "out")
GEN = os.path.join(BENCH, "gen.py")

CADENCE = os.environ.get("CADENCE", os.path.join(OUT, "cadence"))
# An older cadence binary, run as the tool "before" next to "cadence" when
# named (TOOLS="before cadence ninja" ...): same inputs, same checks.
CADENCE_BEFORE = os.environ.get("CADENCE_BEFORE", "")
TASK = os.environ.get("TASK", os.path.join(BENCH, ".tools", "bin", "task"))
JOBS = 2


def is_cadence(tool):
    """cadence, before, and their -nosandbox variants: cadence binaries."""
    return tool.split("-")[0] in ("cadence", "before")


def wave_file(tool):
    return "wave-nosandbox.hcl" if tool.endswith("-nosandbox") else "wave.hcl"


def env_list(name, default):
    return os.environ.get(name, default).split()


def runs_for(n, tool=None):
    if tool == "task" and os.environ.get(f"TASK_RUNS_{n}", {5000: "1"}.get(n)):
        return int(os.environ.get(f"TASK_RUNS_{n}", {5000: "1"}.get(n)))
    return int(os.environ.get(f"RUNS_{n}", {100: 5, 1000: 5}.get(n, 3)))


def base_env():
    env = dict(os.environ)
    if not env.get("CADENCE_HOME"):
        home = tempfile.mkdtemp(prefix="cadence-bench-home-")
        atexit.register(shutil.rmtree, home, True)
        env["CADENCE_HOME"] = home
    # cadence version/apply look for the agent CLI; never spawn a real one.
    env["CADENCE_CLAUDE_BIN"] = "/nonexistent/cadence-bench/claude"
    env["NO_COLOR"] = "1"
    return env


ENV = base_env()


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- running


def spawn(argv, cwd, logpath=None, timeout=None, env=None):
    """Run argv in cwd; return wall seconds, exit code, max RSS (KiB) and the
    user+system CPU seconds of the process tree (from wait4's rusage)."""
    out = open(logpath, "wb") if logpath else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT, env=env or ENV,
                             start_new_session=timeout is not None)
        timer = None
        if timeout is not None:  # kill on timeout; wait4 blocks, for exact wall times
            timer = threading.Timer(timeout, os.killpg, (p.pid, signal.SIGKILL))
            timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        if timer is not None:
            timer.cancel()
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        rc = "timeout" if timeout is not None and wall >= timeout and p.returncode < 0 else p.returncode
        return {"wall": wall, "rc": rc, "rss_kib": ru.ru_maxrss,
                "cpu": ru.ru_utime + ru.ru_stime}
    finally:
        if logpath:
            out.close()


def clean(tool, d):
    """Remove what a previous run left, so that the next run does all the work."""
    state = wave_file(tool).replace(".hcl", ".state.json")
    names = {
        "cadence": [state, state + ".journal", state + ".lock", ".cadence"],
        "ninja": [".ninja_log", ".ninja_deps"],
        "task": [".task"],
        "make": [],
    }["cadence" if is_cadence(tool) else tool]
    for n in names + ["ran.txt"]:
        p = os.path.join(d, n)
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.lexists(p):
            os.remove(p)


def argv_for(tool, jobs=JOBS):
    if is_cadence(tool):
        b = CADENCE_BEFORE if tool.startswith("before") else CADENCE
        return [b, "apply", "-auto-approve", "-jobs", str(jobs), wave_file(tool)]
    return {
        "make": ["make", f"-j{jobs}"],
        "ninja": ["ninja", f"-j{jobs}"],
        "task": [TASK, "--concurrency", str(jobs)],
    }[tool]


def run_tool(tool, d, logname, timeout=None, jobs=JOBS):
    clean(tool, d)
    # wait4's ru_maxrss of a child forked by python starts at python's own
    # size; /usr/bin/time is small, so its %M is the tool's (largest process).
    rssf = os.path.join(d, f".{tool}.rss")
    r = spawn(["/usr/bin/time", "-f", "%M", "-o", rssf] + argv_for(tool, jobs), d,
              os.path.join(d, logname), timeout=timeout if tool == "task" else None)
    try:
        r["rss_kib"] = int(open(rssf).read().split()[-1])
    except (OSError, ValueError, IndexError):
        r["rss_kib"] = 0
    if is_cadence(tool) and r["rc"] == 0:
        n = json.load(open(os.path.join(d, "dag.json")))["n"]
        with open(os.path.join(d, logname), errors="replace") as f:
            text = f.read()
        if f"{n} of {n} lots done" not in text:
            r["rc"] = "incomplete"
    return r


def gen(shape, n, d, cmd="true"):
    if not os.path.exists(os.path.join(d, "dag.json")) or \
            not os.path.exists(os.path.join(d, "wave-nosandbox.hcl")) or \
            json.load(open(os.path.join(d, "dag.json"))).get("cmd") != cmd:
        subprocess.run([sys.executable, GEN, shape, str(n), d, "--cmd", cmd], check=True)
    return json.load(open(os.path.join(d, "dag.json")))


def save(step, data):
    os.makedirs(OUT, exist_ok=True)
    data["host"] = host_info()
    with open(os.path.join(OUT, f"{step}.json"), "w") as f:
        json.dump(data, f, indent=1)


def load(step):
    p = os.path.join(OUT, f"{step}.json")
    return json.load(open(p)) if os.path.exists(p) else None


def host_info():
    def cmd(*a):
        try:
            return subprocess.run(a, capture_output=True, text=True, cwd=ROOT).stdout.strip()
        except OSError:
            return ""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cpus": os.cpu_count(),
        "loadavg": open("/proc/loadavg").read().split()[:3],
        "kernel": platform.release(),
        "commit": open(os.path.join(OUT, "cadence.commit")).read().strip()
        if os.path.exists(os.path.join(OUT, "cadence.commit")) else "?",
        "go": cmd("go", "env", "GOVERSION"),
        "make": cmd("make", "--version").splitlines()[0] if shutil.which("make") else "",
        "ninja": cmd("ninja", "--version"),
        "task": cmd(TASK, "--version") if os.path.exists(TASK) else "",
    }


# ---------------------------------------------------------------- steps


def step_verify():
    """Every tool runs every lot exactly once, after its dependencies: each
    lot appends its name to ran.txt (with /bin/echo: go-task runs a builtin
    echo in-process in two writes, which interleave between concurrent lots)."""
    res = []
    for shape in env_list("SHAPES", "wide chain layered"):
        d = os.path.join(OUT, "verify", shape)
        dag = gen(shape, 100, d, cmd="/bin/echo {lot} >> ran.txt")
        pos_ok = lambda pos: all(pos[f"L{j}"] < pos[f"L{i}"] for i, ds in enumerate(dag["deps"]) for j in ds)
        for tool in env_list("TOOLS", "cadence make ninja task"):
            r = run_tool(tool, d, f"{tool}.log", timeout=60)
            p = os.path.join(d, "ran.txt")
            ran = open(p).read().split() if os.path.exists(p) else []
            pos = {x: k for k, x in enumerate(ran)}
            once = len(ran) == 100 and len(pos) == 100
            order = once and pos_ok(pos)
            ok = r["rc"] == 0 and once and order
            res.append({"shape": shape, "tool": tool, "rc": r["rc"], "ran": len(ran), "once": once,
                        "order": order, "ok": ok})
            log(f"verify {shape:8} {tool:8} rc={r['rc']} ran={len(ran)}/100 once={once} order={order} "
                f"{'ok' if ok else 'FAILED'}")
    save("verify", {"results": res})


def step_dags(name="dags", where=None):
    """The DAGs through every tool. `where` holds the generated inputs
    (default bench/out/dags); the results go to bench/out/<name>.json."""
    where = where or os.path.join(OUT, "dags")
    tools = env_list("TOOLS", "cadence make ninja task")
    timeout = float(os.environ.get("TASK_TIMEOUT", "120"))
    res = []
    given_up = set()
    for n in [int(x) for x in env_list("SIZES", "100 1000 5000")]:
        for shape in env_list("SHAPES", "wide chain layered"):
            gen(shape, n, os.path.join(where, f"{shape}-{n}"))
        for i in range(max(runs_for(n, t) for t in tools)):
            # Round-robin over shapes and tools, so that a noisy moment of
            # the machine does not fall on one tool only.
            for shape in env_list("SHAPES", "wide chain layered"):
                d = os.path.join(where, f"{shape}-{n}")
                for tool in tools:
                    if (tool, shape, n) in given_up or i >= runs_for(n, tool):
                        continue
                    r = run_tool(tool, d, f"{tool}.log", timeout=timeout)
                    r.update(tool=tool, shape=shape, n=n, run=i)
                    res.append(r)
                    log(f"dags n={n:<5} {shape:8} run {i} {tool:8} {r['wall']:7.3f}s "
                        f"cpu {r['cpu']:6.2f}s rss {r['rss_kib']:7d}KiB rc={r['rc']}")
                    if r["rc"] == "timeout":
                        given_up.add((tool, shape, n))
                        log(f"  {tool} gave up after {timeout:.0f}s on {shape} n={n}; no more runs")
                    save(name, {"results": res, "jobs": JOBS, "where": where})
    save(name, {"results": res, "jobs": JOBS, "where": where})


def step_tmpfs():
    """The DAG step again with the inputs (so cadence's .cadence/ and state)
    on tmpfs (/dev/shm): cadence creates a folder and a log file per lot,
    which the other tools do not, and on a busy ext4 that costs."""
    base = os.environ.get("TMPFS", "/dev/shm")
    if not os.path.isdir(base):
        log(f"tmpfs: no {base}; step skipped")
        return
    saved = {k: os.environ.get(k) for k in ("SIZES", "RUNS_100", "RUNS_1000", "RUNS_5000", "TOOLS")}
    os.environ["SIZES"] = os.environ.get("TMPFS_SIZES", "1000")
    # go-task creates no file per lot either, and is the slowest to run.
    os.environ["TOOLS"] = os.environ.get("TMPFS_TOOLS", "cadence make ninja")
    for n in (100, 1000, 5000):
        os.environ[f"RUNS_{n}"] = os.environ.get("TMPFS_RUNS", "3")
    where = tempfile.mkdtemp(prefix="cadence-bench-", dir=base)
    try:
        step_dags("dags-tmpfs", where)
    finally:
        shutil.rmtree(where, ignore_errors=True)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def lot_times(tool, d):
    """Each lot's (start, end) seconds, by name, from cadence's state file or
    ninja's log (1 ms resolution, from ninja's start)."""
    times = {}
    if is_cadence(tool):
        from datetime import datetime
        st = json.load(open(os.path.join(d, wave_file(tool).replace(".hcl", ".state.json"))))
        ts = lambda x: datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()
        for name, lot in st["lots"].items():
            step = lot["steps"][-1]
            times[name] = (ts(step["started"]), ts(step["ended"]))
    elif tool == "ninja":
        for line in open(os.path.join(d, ".ninja_log")):
            if not line.startswith("#"):
                f = line.rstrip("\n").split("\t")
                times[f[3]] = (int(f[0]) / 1000, int(f[1]) / 1000)
    return times


def timeline(tool, d):
    """Per-lot (start, end) seconds from cadence's state file or ninja's log."""
    return sorted(lot_times(tool, d).values())


def dep_gaps(tool, d):
    """For each lot with dependencies: its start minus its last dependency's
    end, in ms (the dispatch latency on a chain, where nothing else waits)."""
    times = lot_times(tool, d)
    if not times:
        return []
    deps = json.load(open(os.path.join(d, "dag.json")))["deps"]
    gaps = []
    for i, ds in enumerate(deps):
        if ds and f"L{i}" in times:
            gaps.append(1000 * (times[f"L{i}"][0] - max(times[f"L{j}"][1] for j in ds)))
    return sorted(gaps)


def analyse(iv, jobs):
    """Mean lot duration, time with fewer than `jobs` lots running between the
    first start and the last end, and the gap from a lot's end to the next start."""
    if not iv:
        return None
    ev = sorted([(b, 1) for b, _ in iv] + [(e, -1) for _, e in iv])
    under, c, last = 0.0, 0, ev[0][0]
    for x, delta in ev:
        if c < jobs:
            under += x - last
        c, last = c + delta, x
    starts = [b for b, _ in iv]
    gaps = []
    for _, e in iv:
        k = next((k for k in range(len(starts)) if starts[k] >= e), None)
        if k is not None:
            gaps.append(starts[k] - e)
    gaps.sort()
    return {"mean_lot_ms": 1000 * statistics.mean(e - b for b, e in iv),
            "span_s": max(e for _, e in iv) - iv[0][0], "under_jobs_s": under,
            "gap_median_ms": 1000 * statistics.median(gaps) if gaps else 0}


def step_sched():
    n, dur = int(os.environ.get("SCHED_N", "200")), 0.05
    jobs = int(os.environ.get("SCHED_JOBS", str(JOBS)))
    d = os.path.join(OUT, "sched", f"layered-{n}")
    dag = gen("layered", n, d, cmd=f"sleep {dur}")
    bound = max(dag["critical_path"] * dur, n * dur / jobs)
    # What one lot really costs on this machine, outside any scheduler.
    lone = time_cmd(["sh", "-c", f"sleep {dur}"], 30, d)["median_ms"] / 1000
    real_bound = max(dag["critical_path"] * lone, n * lone / jobs)
    log(f"sched: bound {bound:.3f}s; a lone `sh -c 'sleep {dur}'` takes {lone * 1000:.1f}ms, "
        f"so the bound with that cost is {real_bound:.3f}s")
    res = []
    for i in range(int(os.environ.get("SCHED_RUNS", "3"))):
        for tool in env_list("TOOLS", "cadence make ninja task"):
            r = run_tool(tool, d, f"{tool}.log", timeout=120, jobs=jobs)
            r.update(tool=tool, run=i)
            if r["rc"] == 0:
                r["timeline"] = analyse(timeline(tool, d), jobs)
            res.append(r)
            tl = r.get("timeline")
            log(f"sched {tool:8} run {i} {r['wall']:.3f}s (bound {bound:.2f}s, x{r['wall'] / bound:.3f}) rc={r['rc']}"
                + (f"; lots {tl['mean_lot_ms']:.1f}ms, under {jobs} running {tl['under_jobs_s']:.3f}s, "
                   f"end->next start {tl['gap_median_ms']:.2f}ms" if tl else ""))
    save("sched", {"results": res, "n": n, "dur": dur, "critical_path": dag["critical_path"],
                   "bound": bound, "lone_s": lone, "real_bound": real_bound, "jobs": jobs})


def step_gap():
    """Dispatch latency: a chain of GAP_N (200) `true` lots, GAP_RUNS (5) runs
    of each tool, alternating; per run the p50 and p90 of a lot's start minus
    its dependency's end (cadence: the state file's step times; ninja: its
    log, 1 ms resolution)."""
    n = int(os.environ.get("GAP_N", "200"))
    d = os.path.join(OUT, "gap", f"chain-{n}")
    gen("chain", n, d)
    res = []
    for i in range(int(os.environ.get("GAP_RUNS", "5"))):
        for tool in env_list("TOOLS", "cadence ninja"):
            if tool not in ("cadence", "before", "ninja"):
                continue
            r = run_tool(tool, d, f"{tool}.log", timeout=120)
            r.update(tool=tool, run=i)
            if r["rc"] == 0:
                g = dep_gaps(tool, d)
                r["gap_p50_ms"], r["gap_p90_ms"] = statistics.median(g), g[int(0.9 * (len(g) - 1))]
                log(f"gap {tool:8} run {i} {r['wall']:.3f}s: dependency end -> dependent start "
                    f"p50 {r['gap_p50_ms']:.3f}ms p90 {r['gap_p90_ms']:.3f}ms")
            res.append(r)
    save("gap", {"results": res, "n": n, "jobs": JOBS})


def time_cmd(argv, runs, cwd):
    walls = []
    for _ in range(5):  # warm-up: page cache, dynamic loader
        spawn(argv, cwd)
    for _ in range(runs):
        r = spawn(argv, cwd)
        if r["rc"] != 0:
            raise SystemExit(f"{argv}: exit {r['rc']}")
        walls.append(r["wall"] * 1000)
    walls.sort()
    return {"argv": argv, "runs": runs, "median_ms": statistics.median(walls), "min_ms": walls[0],
            "p90_ms": walls[int(0.9 * (len(walls) - 1))], "max_ms": walls[-1]}


def step_startup():
    runs = int(os.environ.get("STARTUP_RUNS", "200"))
    cwd = tempfile.mkdtemp(prefix="cadence-bench-startup-")
    cmds = {
        "baseline /bin/true": ["/bin/true"],
        "cadence version": [CADENCE, "version"],
        "cadence help": [CADENCE, "help"],
        "task --version": [TASK, "--version"],
    }
    res = {}
    for name, argv in cmds.items():
        res[name] = time_cmd(argv, runs, cwd)
        r = res[name]
        log(f"startup {name:20} median {r['median_ms']:.2f}ms min {r['min_ms']:.2f}ms p90 {r['p90_ms']:.2f}ms")
    # Where a start goes: the package initialisers (GODEBUG=inittrace=1).
    inits = {}
    for _ in range(20):
        e = dict(ENV, GODEBUG="inittrace=1")
        p = subprocess.run([CADENCE, "help"], cwd=cwd, env=e, capture_output=True, text=True)
        for line in p.stderr.splitlines():
            f = line.split()
            if len(f) > 6 and f[0] == "init" and f[6] == "clock,":  # init PKG @T ms, D ms clock, ...
                inits.setdefault(f[1], []).append(float(f[4]))
    init = {k: statistics.median(v) for k, v in inits.items()}
    total = sum(init.values())
    top = sorted(init.items(), key=lambda kv: -kv[1])[:5]
    log(f"startup: package init {total:.2f}ms in all; " + ", ".join(f"{k} {v:.2f}ms" for k, v in top))
    shutil.rmtree(cwd)
    save("startup", {"results": res, "init_total_ms": total, "init_top": top})


def gnu_time_rss(argv, cwd):
    clean("cadence", cwd)
    f = os.path.join(cwd, "time.out")
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f] + argv, cwd=cwd, env=ENV,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        raise SystemExit(f"{argv} in {cwd}: exit {p.returncode}")
    return int(open(f).read().split()[-1])


def step_memory():
    big = int(os.environ.get("MEM_N", "5000"))
    res = []
    for shape in ("wide", "chain"):
        row = {"shape": shape, "n": big}
        for n, key in ((10, "base_kib"), (big, "big_kib")):
            d = os.path.join(OUT, "memory", f"{shape}-{n}")
            gen(shape, n, d)
            row[key] = gnu_time_rss(argv_for("cadence"), d)
        row["per_lot_total_kib"] = row["big_kib"] / big
        row["per_lot_marginal_kib"] = (row["big_kib"] - row["base_kib"]) / (big - 10)
        res.append(row)
        log(f"memory {shape:6} 10 lots {row['base_kib']} KiB, {big} lots {row['big_kib']} KiB: "
            f"{row['per_lot_marginal_kib']:.2f} KiB/lot marginal, {row['per_lot_total_kib']:.2f} KiB/lot total")
    save("memory", {"results": res})


def step_handoff():
    argv = ["go", "test", "./executor/slots", "-run", "^$", "-bench", "Handoff", "-benchtime", "500x"]
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    text = p.stdout + p.stderr
    with open(os.path.join(OUT, "handoff.txt"), "w") as f:
        f.write(text)
    res = {"argv": argv, "rc": p.returncode}
    for line in text.splitlines():
        if line.startswith("BenchmarkHandoff"):
            f = line.split()
            for v, unit in zip(f[2::2], f[3::2]):
                res[unit] = float(v)
    log(f"handoff rc={p.returncode} p50 {res.get('p50-ms')} ms p99 {res.get('p99-ms')} ms")
    save("handoff", {"results": res})


def step_gitfloor():
    gitfloor.step(OUT, CADENCE, ENV, log, save)


def step_gitprofile():
    gitfloor.profile(OUT, CADENCE, ENV, log, save)


def step_mergequeue():
    mergequeue.step(OUT, CADENCE, ENV, log, save)


# ---------------------------------------------------------------- summary


def fmt_s(x):
    return f"{x:.3f}" if x < 10 else f"{x:.2f}"


def load_note(data):
    return f"(1-minute load average when the step ended: {data['host']['loadavg'][0]})\n"


def step_summary():
    lines = []
    w = lines.append
    host = None
    targets = []  # (target, figure, met)
    def dags_section(dags, title, note, with_targets):
        nonlocal host
        host = host or dags["host"]
        groups = {}
        for r in dags["results"]:
            groups.setdefault((r["shape"], r["n"]), {}).setdefault(r["tool"], []).append(r)
        tools = [t for t in ("before", "before-nosandbox", "cadence", "cadence-nosandbox", "make", "ninja", "task")
                 if any(t in g for g in groups.values())]
        w(title + "\n")
        if note:
            w(note + "\n")
        w("Wall time is the median of the runs (n = runs); per-lot = wall / N; CPU = user+sys of the "
          "whole process tree per lot; ratio = cadence per-lot / tool per-lot.\n")
        w("| shape | N | tool | runs | wall s (median) | min–max s | per-lot ms | CPU ms/lot | max RSS MiB (largest process) | cadence ÷ tool |")
        w("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        verdicts = []
        for (shape, n), g in sorted(groups.items(), key=lambda kv: (kv[0][1], ["wide", "chain", "layered", "layers10"].index(kv[0][0]))):
            med = {}
            for t in tools:
                rs = g.get(t, [])
                ok = [r for r in rs if r["rc"] == 0]
                if not ok:
                    bad = ",".join(str(r["rc"]) for r in rs) or "not run"
                    w(f"| {shape} | {n} | {t} | {len(rs)} | — ({bad}) | | | | | |")
                    continue
                walls = sorted(r["wall"] for r in ok)
                med[t] = statistics.median(walls)
                cpu = statistics.median(r["cpu"] for r in ok)
                rss = max(r["rss_kib"] for r in ok) / 1024
                ratio = "" if t == "cadence" or "cadence" not in med else f"{med['cadence'] / med[t]:.2f}×"
                w(f"| {shape} | {n} | {t} | {len(ok)} | {fmt_s(med[t])} | {fmt_s(walls[0])}–{fmt_s(walls[-1])} | "
                  f"{med[t] / n * 1000:.3f} | {cpu / n * 1000:.3f} | {rss:.1f} | {ratio} |")
            if "cadence" in med:
                cpu_of = lambda t: statistics.median(r["cpu"] for r in g[t] if r["rc"] == 0)
                best_of = lambda t: min(r["wall"] for r in g[t] if r["rc"] == 0)
                verdicts.append((shape, n, med, {t: cpu_of(t) for t in med}, {t: best_of(t) for t in med}))
        w("")
        w("cadence against the targets. The verdicts use the median wall times; on a shared, noisy "
          "machine the best run of each tool and the CPU time per lot are shown too (ratios of "
          "per-lot figures are ratios of the totals, N being the same):\n")
        w("| shape | N | cadence ms/lot | ninja ms/lot | go-task ms/lot | ÷ ninja (median) | ÷ ninja (best run) | ÷ ninja (CPU) | ≤ 2× ninja? | ÷ go-task (median) | ÷ go-task (best run) | < go-task? |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
        met_n = met_t = cnt_n = cnt_t = 0
        for shape, n, med, cpu, best in verdicts:
            c = med["cadence"]
            cells = [shape, str(n), f"{c / n * 1000:.3f}"]
            cells += [f"{med[t] / n * 1000:.3f}" if t in med else "—" for t in ("ninja", "task")]
            if "ninja" in med:
                ok = c <= 2 * med["ninja"]
                met_n, cnt_n = met_n + ok, cnt_n + 1
                cells += [f"{c / med['ninja']:.2f}×", f"{best['cadence'] / best['ninja']:.2f}×",
                          f"{cpu['cadence'] / cpu['ninja']:.2f}×", "yes" if ok else "**no**"]
            else:
                cells += ["—", "—", "—", "—"]
            if "task" in med:
                ok = c < med["task"]
                met_t, cnt_t = met_t + ok, cnt_t + 1
                cells += [f"{c / med['task']:.2f}×", f"{best['cadence'] / best['task']:.2f}×", "yes" if ok else "**no**"]
            else:
                cells += ["—", "—", "—"]
            w("| " + " | ".join(cells) + " |")
        w("")
        if cnt_n and with_targets:
            targets.append(("per-lot overhead ≤ 2× ninja's", f"met in {met_n} of {cnt_n} shape × N cases", met_n == cnt_n))
        if cnt_t and with_targets:
            targets.append(("per-lot overhead below go-task's", f"met in {met_t} of {cnt_t} shape × N cases", met_t == cnt_t))
        w(load_note(dags))
    dags = load("dags")
    if dags:
        dags_section(dags, "### 1. Per-lot overhead (`true` lots, 2 jobs)", "", True)
    tmpfs = load("dags-tmpfs")
    if tmpfs:
        dags_section(tmpfs, "### 1b. The same on tmpfs",
                     f"`bench/run.sh tmpfs`: the DAG inputs, hence cadence's `.cadence/` and state file, in "
                     f"`{tmpfs.get('where', '/dev/shm')}` instead of the ext4 disk: what cadence costs without "
                     "the file system's inode allocation (it creates a folder and a log file per lot; the "
                     "other tools create none).", False)
    sched = load("sched")
    if sched:
        host = host or sched["host"]
        w(f"### 2. Scheduling quality (layered, {sched['n']} lots of `sleep {sched['dur']}`, {sched['jobs']} jobs)\n")
        w(f"Critical path {sched['critical_path']} lots = {sched['critical_path'] * sched['dur']:.2f} s; "
          f"total work / {sched['jobs']} = {sched['n'] * sched['dur'] / sched['jobs']:.2f} s; "
          f"lower bound {sched['bound']:.2f} s. Target: cadence within 10 % (≤ {1.1 * sched['bound']:.2f} s).\n")
        w(f"A lone `sh -c 'sleep {sched['dur']}'` takes {sched['lone_s'] * 1000:.1f} ms here (median of 30), "
          f"so even a perfect scheduler that spawns a shell per lot needs about {sched['real_bound']:.2f} s "
          f"({sched['real_bound'] / sched['bound']:.3f}× the bound).\n")
        w(f"| tool | runs | makespan s (median) | min–max s | ÷ bound | within 10 %? | mean lot ms | time < {sched['jobs']} running s | end → next start ms (median) |")
        w("|---|---:|---:|---:|---:|---|---:|---:|---:|")
        by = {}
        for r in sched["results"]:
            by.setdefault(r["tool"], []).append(r)
        for t, rs in by.items():
            okr = [r for r in rs if r["rc"] == 0]
            ok = sorted(r["wall"] for r in okr)
            if not ok:
                w(f"| {t} | {len(rs)} | — ({','.join(str(r['rc']) for r in rs)}) | | | | | | |")
                continue
            m = statistics.median(ok)
            tls = [r["timeline"] for r in okr if r.get("timeline")]
            tl = (f"{statistics.median(x['mean_lot_ms'] for x in tls):.1f} | "
                  f"{statistics.median(x['under_jobs_s'] for x in tls):.3f} | "
                  f"{statistics.median(x['gap_median_ms'] for x in tls):.2f}") if tls else "n/a | n/a | n/a"
            if t == "cadence":
                targets.append(("`sleep 0.05` DAG makespan within 10 % of the lower bound",
                                f"{m:.2f} s = {m / sched['bound']:.3f}× the {sched['bound']:.2f} s bound",
                                m <= 1.1 * sched["bound"]))
            w(f"| {t} | {len(ok)} | {m:.3f} | {ok[0]:.3f}–{ok[-1]:.3f} | {m / sched['bound']:.3f} | "
              f"{'yes' if m <= 1.1 * sched['bound'] else 'no'} | {tl} |")
        w("\nThe last three columns come from cadence's state file and ninja's `.ninja_log`, "
          "which record each lot's start and end; make and go-task record none.\n")
        w(load_note(sched))
    st = load("startup")
    if st:
        host = host or st["host"]
        w("### 3. Start time\n")
        w("| command | runs | median ms | min ms | p90 ms | median − /bin/true ms |")
        w("|---|---:|---:|---:|---:|---:|")
        base = st["results"].get("baseline /bin/true", {}).get("median_ms", 0)
        for name, r in st["results"].items():
            w(f"| `{name}` | {r['runs']} | {r['median_ms']:.2f} | {r['min_ms']:.2f} | {r['p90_ms']:.2f} | "
              f"{r['median_ms'] - base:.2f} |")
        if st.get("init_top"):
            w(f"\nPackage initialisers of the cadence binary (`GODEBUG=inittrace=1 cadence help`, median of 20): "
              f"{st['init_total_ms']:.2f} ms in all; the largest: " +
              ", ".join(f"`{k}` {v:.2f} ms" for k, v in st["init_top"][:3]) + ".")
        v = st["results"].get("cadence version")
        if v:
            targets.append(("`cadence version` start under 10 ms", f"{v['median_ms']:.2f} ms median", v["median_ms"] < 10))
            w(f"\nTarget `cadence version` < 10 ms: {'MET' if v['median_ms'] < 10 else 'NOT MET'} "
              f"({v['median_ms']:.2f} ms median, spawn included).\n")
        w(load_note(st))
    mem = load("memory")
    if mem:
        host = host or mem["host"]
        w("### 4. Memory (`/usr/bin/time -f %M`, cadence apply of `true` lots)\n")
        w("| shape | RSS 10 lots KiB | RSS N lots KiB | N | KiB/lot (total ÷ N) | KiB/lot (minus 10-lot baseline) | < 10 KiB/lot? |")
        w("|---|---:|---:|---:|---:|---:|---|")
        for r in mem["results"]:
            w(f"| {r['shape']} | {r['base_kib']} | {r['big_kib']} | {r['n']} | {r['per_lot_total_kib']:.2f} | "
              f"{r['per_lot_marginal_kib']:.2f} | {'yes' if r['per_lot_marginal_kib'] < 10 else 'no'} |")
        w("")
        w(load_note(mem))
        worst = max(mem["results"], key=lambda r: r["per_lot_marginal_kib"])
        targets.append((f"memory under 10 KiB per lot ({worst['n']:,}-lot apply)",
                        f"{worst['per_lot_marginal_kib']:.2f} KiB/lot over the 10-lot baseline "
                        f"({worst['per_lot_total_kib']:.2f} KiB/lot in all; {worst['shape']}, the worse shape)",
                        worst["per_lot_marginal_kib"] < 10))
    ho = load("handoff")
    if ho:
        host = host or ho["host"]
        r = ho["results"]
        w("### 5. Cross-process slot handoff\n")
        w("`go test ./executor/slots -run '^$' -bench Handoff -benchtime 500x`: "
          f"p50 {r.get('p50-ms', '?')} ms, p99 {r.get('p99-ms', '?')} ms (exit {r['rc']}; "
          "design: well under 100 ms).\n")
        if "p99-ms" in r:
            targets.append(("cross-process slot handoff well under 100 ms",
                            f"p50 {r['p50-ms']:.3f} ms, p99 {r['p99-ms']:.3f} ms", r["p99-ms"] < 100))
    gf = load("gitfloor")
    if gf:
        host = host or gf["host"]
        lines.extend(gitfloor.summary_lines(gf))
        if gf["summary"].get("ratio"):
            targets.append(("git floor: cadence per command lot ≤ 1.25× the hand-written git loop",
                            f"{gf['summary']['ratio']:.2f}×", gf["summary"]["ratio"] <= 1.25))
        targets.append(("git floor: at most 12 git processes per command lot",
                        f"{gf['counts']['cadence']['per_lot']:.2f} per lot", gf["counts"]["cadence"]["per_lot"] <= 12))
        w(load_note(gf))
    gp = load("gitprofile")
    if gp:
        lines.extend(gitfloor.profile_lines(gp))
    mq = load("mergequeue")
    if mq:
        lines.extend(mergequeue.summary_lines(mq))
        if mq["summary"].get("ratio") is not None:
            targets.append(("merge queue: lots finishing together integrate in ≤ 40 % of the time without batches",
                            f"{mq['summary']['ratio']:.2f}×", mq["summary"]["ratio"] <= 0.40))
    ver = load("verify")
    if ver:
        bad = [f"{r['tool']}/{r['shape']} ({r['ran']}/100, rc {r['rc']})" for r in ver["results"] if not r["ok"]]
        w("Check run (each lot appends its name to a file; 100 lots × 3 shapes × every tool): " +
          ("every tool ran every lot exactly once, after its dependencies.\n" if not bad else "FAILED: " + ", ".join(bad) + "\n"))
    if host:
        w(f"Machine: {host['cpus']} CPUs, kernel {host['kernel']}; {host['date']}; "
          f"cadence {host['commit']}, {host['go']}; "
          f"{host['make']}; ninja {host['ninja']}; go-task {host['task']}.")
    if targets:
        head = ["### Targets\n", "| target | this run | met? |", "|---|---|---|"]
        head += [f"| {t} | {f} | {'yes' if m else '**no**'} |" for t, f, m in targets]
        lines = head + [""] + lines
    text = "\n".join(lines) + "\n"
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "summary.md"), "w") as f:
        f.write(text)
    print(text)


def cpu_run(argv, cwd):
    """Runs argv in cwd; returns (wall s, user+sys CPU s, max RSS KiB) from wait4."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{argv} in {cwd}: wait status {status}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def step_planner():
    """validate and plan -offline of layered waves of 1k/10k/50k lots (and
    of CADENCE_BEFORE's binary when set), alternating; medians of RUNS."""
    runs = int(os.environ.get("PLANNER_RUNS", "5"))
    bins = [("cadence", CADENCE)] + ([("before", CADENCE_BEFORE)] if CADENCE_BEFORE else [])
    res = []
    for n in (1000, 10000, 50000):
        d = os.path.join(OUT, "planner", f"layered-{n}")
        gen("layered", n, d)
        for cmd in (["validate", "wave.hcl"], ["plan", "-offline", "wave.hcl"]):
            got = {name: [] for name, _ in bins}
            for _ in range(runs):
                for name, b in bins:
                    got[name].append(cpu_run([b] + cmd, d))
            for name, _ in bins:
                wall = statistics.median(x[0] for x in got[name])
                cpu = statistics.median(x[1] for x in got[name])
                rss = statistics.median(x[2] for x in got[name])
                row = {"binary": name, "n": n, "command": " ".join(cmd), "wall_s": wall, "cpu_s": cpu, "rss_kib": rss}
                res.append(row)
                log(f"planner {name:7} {n:6} {row['command']:22} wall {wall*1000:7.1f} ms  cpu {cpu*1000:7.1f} ms  rss {rss/1024:6.1f} MiB")
    save("planner", {"results": res})


def ctxt_switches(pid):
    """The voluntary and involuntary context switches of every thread of pid."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if "ctxt_switches" in line:
                    total += int(line.split()[-1])
        except FileNotFoundError:
            pass
    return total


def step_idle():
    """cadence's context switches and CPU over 10 s while a `sleep 45` lot
    runs (8 s after the start), for CADENCE and CADENCE_BEFORE."""
    bins = [("cadence", CADENCE)] + ([("before", CADENCE_BEFORE)] if CADENCE_BEFORE else [])
    res = []
    for name, b in bins:
        d = os.path.join(OUT, "idle", name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        with open(os.path.join(d, "wave.hcl"), "w") as f:
            f.write('wave "idle" {}\nlot "s" {\n  run = "sleep 45"\n}\n')
        p = subprocess.Popen([b, "apply", "-auto-approve", "wave.hcl"], cwd=d, env=ENV,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(8)
            tick = os.sysconf("SC_CLK_TCK")
            def cpu():
                f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
                return (int(f[11]) + int(f[12])) / tick
            cs0, cpu0 = ctxt_switches(p.pid), cpu()
            time.sleep(10)
            cs1, cpu1 = ctxt_switches(p.pid), cpu()
        finally:
            p.terminate()
            p.wait(timeout=120)
        row = {"binary": name, "ctxt_switches_per_s": (cs1 - cs0) / 10, "cpu_percent": (cpu1 - cpu0) * 10}
        res.append(row)
        log(f"idle {name:7} {row['ctxt_switches_per_s']:.1f} context switches/s, {row['cpu_percent']:.2f} % CPU while a sleep 45 lot runs")
    save("idle", {"results": res})


STEPS = {"verify": step_verify, "dags": step_dags, "tmpfs": step_tmpfs, "sched": step_sched, "gap": step_gap, "startup": step_startup,
         "memory": step_memory, "planner": step_planner, "idle": step_idle, "handoff": step_handoff, "gitfloor": step_gitfloor,
         "gitprofile": step_gitprofile, "mergequeue": step_mergequeue, "summary": step_summary}


def main():
    steps = sys.argv[1:] or [s for s in STEPS if s != "gitprofile"]
    for s in steps:
        if s not in STEPS:
            raise SystemExit(f"unknown step {s!r}; steps: {' '.join(STEPS)}")
    for s in steps:
        t0 = time.time()
        STEPS[s]()
        log(f"== {s} done in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
