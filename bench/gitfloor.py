"""The git floor (issue 13, "Fewer git processes per lot"): what cadence
costs per command lot in a git repository, next to the same git work done
by hand, and how many git processes it starts per lot.

Side by side, alternating which goes first, each run on a fresh repository:

  cadence  `cadence apply -auto-approve -jobs 4 wave.hcl`: LOTS command lots
           `sleep S; echo i > fi; git add fi; git commit -qm li` in one repo,
           `parallel = 4`.
  hand     one `sh` script doing the same git work one lot after another:
           `git worktree add -b`, `git add`, `git commit` (in the worktree),
           `git rebase`, `git merge --ff-only` (in the checkout of the base),
           `git worktree remove`; no sleep.

Per lot: cadence (wall - LOTS*S/4) / LOTS (the sleeps at 4 in parallel taken
out, as the issue measures), hand wall / LOTS; and their ratio. One more run
of each side with a `git` wrapper first on PATH (it logs its argv and execs
the real git) counts the git processes each starts (git's own children,
which git starts from its exec path, are not counted, on either side), by
subcommand. Environment: GITFLOOR_LOTS (20), GITFLOOR_RUNS (5), GITFLOOR_SLEEP
(0.3), GITFLOOR_PARALLEL (4: the repository's `parallel` and `-jobs`; 1
makes every lot fast-forward), GITFLOOR_TEST (the repository's test gate,
none by default), QUICK=1 (one run of 4 lots, no sleep: the
smoke), CADENCE_BEFORE (a second cadence binary, e.g. built from an older
commit: a third side, "before", in the same rotation, for a before/after
comparison in one run). Each run also measures the CPU time (user + sys)
of the side's whole process tree (its waited-for children), per lot.
"""
import collections
import os
import resource
import shutil
import statistics
import subprocess
import time

PARALLEL = int(os.environ.get("GITFLOOR_PARALLEL", "4"))
# The subcommands whose first option is worth a column of its own.
SPLIT = {"rev-parse", "worktree", "config", "merge-base", "for-each-ref", "remote", "status", "log", "diff"}


def settings():
    quick = os.environ.get("QUICK") == "1"
    return {
        "lots": int(os.environ.get("GITFLOOR_LOTS", "4" if quick else "20")),
        "runs": int(os.environ.get("GITFLOOR_RUNS", "1" if quick else "5")),
        "sleep": float(os.environ.get("GITFLOOR_SLEEP", "0" if quick else "0.3")),
        "quick": quick,
        "test": os.environ.get("GITFLOOR_TEST", ""),
    }


def make_repo(d, git):
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    repo = os.path.join(d, "repo")
    for argv in (["init", "-q", "-b", "main", repo], ["-C", repo, "config", "user.email", "bench@cadence.invalid"],
                 ["-C", repo, "config", "user.name", "bench"]):
        subprocess.run([git] + argv, check=True)
    with open(os.path.join(repo, "README"), "w") as f:
        f.write("bench\n")
    subprocess.run([git, "-C", repo, "add", "README"], check=True)
    subprocess.run([git, "-C", repo, "commit", "-qm", "init"], check=True)
    return repo


def lot_cmd(i, sleep):
    pre = f"sleep {sleep}; " if sleep else ""
    return f"{pre}echo {i} > f{i}; git add f{i}; git commit -qm l{i}"


def write_wave(d, lots, sleep, test=""):
    with open(os.path.join(d, "wave.hcl"), "w") as f:
        gate = f'  test     = "{test}"\n' if test else ""
        f.write('wave "gitfloor" {}\n\nrepo "r" {\n  path     = "repo"\n  base     = "main"\n'
                f'  parallel = {PARALLEL}\n{gate}}}\n')
        for i in range(1, lots + 1):
            f.write(f'\nlot "l{i}" {{\n  repo = repo.r\n  run  = "{lot_cmd(i, sleep)}"\n}}\n')


def write_hand(d, lots):
    """The hand-written loop: the same git work, one lot after another."""
    p = os.path.join(d, "hand.sh")
    with open(p, "w") as f:
        f.write(f"""set -e
cd "$(dirname "$0")/repo"
i=1
while [ $i -le {lots} ]; do
  wt=../wt-$i
  git worktree add -q -b lot/$i $wt main
  (cd $wt && echo $i > f$i && git add f$i && git commit -qm l$i && git rebase -q main)
  git merge --ff-only -q lot/$i
  git worktree remove $wt
  i=$((i + 1))
done
""")
    return p


def wrapper(d, real_git):
    """A `git` that logs its argv (one line, fields ended by \\037, written
    at once so that concurrent gits do not interleave) to $GITFLOOR_LOG and
    execs the real one."""
    b = os.path.join(d, "bin")
    os.makedirs(b, exist_ok=True)
    p = os.path.join(b, "git")
    with open(p, "w") as f:
        f.write(f"""#!/bin/sh
us=$(printf '\\037'); line=
for a in "$@"; do line="$line$a$us"; done
printf '%s\\n' "$line" >> "$GITFLOOR_LOG"
exec {real_git} "$@"
""")
    os.chmod(p, 0o755)
    return b


def subcommand(args):
    """The subcommand of a git argv (after -c k=v, -C dir and other options),
    with its first option for the subcommands in SPLIT."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-c", "-C") else 1
    if i >= len(args):
        return "?"
    sub = args[i]
    nxt = args[i + 1] if i + 1 < len(args) else ""
    if sub in SPLIT and nxt:
        if sub in ("worktree", "remote"):
            return f"{sub} {nxt}"
        if nxt.startswith("-"):
            return f"{sub} {nxt.split('=')[0]}"
    return sub


def tabulate(logpath):
    c = collections.Counter()
    if os.path.exists(logpath):
        for line in open(logpath, errors="replace"):
            c[subcommand(line.rstrip("\n").split("\x1f")[:-1])] += 1
    return c


def run_side(side, d, cadence, env, lots, sleep, git, test=""):
    repo = make_repo(d, git)
    if side == "before":
        cadence = os.environ["CADENCE_BEFORE"]
    if side in ("cadence", "before"):
        write_wave(d, lots, sleep, test)
        argv = [cadence, "apply", "-auto-approve", "-jobs", str(PARALLEL), "wave.hcl"]
    else:
        argv = ["sh", write_hand(d, lots)]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=d, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    commits = subprocess.run([git, "-C", repo, "rev-list", "--count", "main"], capture_output=True, text=True).stdout.strip()
    ok = p.returncode == 0 and commits == str(lots + 1)
    if not ok:
        with open(os.path.join(d, f"{side}.log"), "w") as f:
            f.write(p.stdout + p.stderr)
    return {"side": side, "wall": wall, "cpu": cpu, "rc": p.returncode, "commits": commits, "ok": ok}


def per_lot_ms(r, s):
    if r["side"] in ("cadence", "before"):
        return 1000 * (r["wall"] - s["lots"] * s["sleep"] / PARALLEL) / s["lots"]
    return 1000 * r["wall"] / s["lots"]


def step(out, cadence, base_env, log, save):
    s = settings()
    real_git = shutil.which("git")
    where = os.path.join(out, "gitfloor")
    os.makedirs(where, exist_ok=True)
    env = dict(base_env)
    res = []
    sides = ["cadence", "hand"] + (["before"] if os.environ.get("CADENCE_BEFORE") else [])
    for i in range(s["runs"]):
        order = sides[i % len(sides):] + sides[:i % len(sides)]
        if i % 2:
            order.reverse()
        for side in order:
            r = run_side(side, os.path.join(where, side), cadence, env, s["lots"], s["sleep"], real_git, s["test"])
            r.update(run=i, per_lot_ms=per_lot_ms(r, s), cpu_per_lot_ms=1000 * r["cpu"] / s["lots"])
            res.append(r)
            log(f"gitfloor run {i} {side:8} {r['wall']:.3f}s {r['per_lot_ms']:.1f} ms/lot "
                f"CPU {r['cpu_per_lot_ms']:.1f} ms/lot "
                f"{'ok' if r['ok'] else 'FAILED rc=' + str(r['rc']) + ' commits=' + r['commits']}")
    counts = {}
    cenv = dict(env, PATH=wrapper(where, real_git) + os.pathsep + env.get("PATH", ""))

    def count(side, lots):
        d = os.path.join(where, f"{side}-count")
        logpath = os.path.join(where, f"{side}-{lots}-git.log")
        if os.path.exists(logpath):
            os.remove(logpath)
        # The repository is made with the real git: its calls are not the side's.
        r = run_side(side, d, cadence, dict(cenv, GITFLOOR_LOG=logpath), lots, s["sleep"], real_git, s["test"])
        return r, tabulate(logpath)

    for side in sides:
        r, c = count(side, s["lots"])
        total = sum(c.values())
        counts[side] = {"ok": r["ok"], "total": total, "per_lot": total / s["lots"],
                        "by_subcommand": dict(c.most_common())}
        if side in ("cadence", "before") and s["lots"] > 1:
            # What one lot adds: the wave's own git calls (preflight, the
            # guard, the remotes) once, not per lot.
            r1, c1 = count(side, 1)
            counts[side]["one_lot"] = sum(c1.values())
            counts[side]["marginal"] = (total - sum(c1.values())) / (s["lots"] - 1)
            counts[side]["ok"] = counts[side]["ok"] and r1["ok"]
        log(f"gitfloor count {side:8} {total} git processes for {s['lots']} lots "
            f"({total / s['lots']:.2f} per lot" +
            (f"; {counts[side]['marginal']:.2f} per lot more than a wave of one lot ({counts[side]['one_lot']})"
             if "marginal" in counts[side] else "") + f"){'' if r['ok'] else ' FAILED'}")
    summary = {}
    for side in sides:
        ok = [r["per_lot_ms"] for r in res if r["side"] == side and r["ok"]]
        summary[side] = statistics.median(ok) if ok else None
        cpu = [r["cpu_per_lot_ms"] for r in res if r["side"] == side and r["ok"]]
        summary[f"cpu_{side}"] = statistics.median(cpu) if cpu else None
    for side in ("cadence", "before"):
        if summary.get(f"cpu_{side}") and summary.get("cpu_hand"):
            summary[f"cpu_ratio_{side}"] = summary[f"cpu_{side}"] / summary["cpu_hand"]
            log(f"gitfloor: {side} CPU {summary[f'cpu_{side}']:.1f} ms/lot, by hand {summary['cpu_hand']:.1f} ms/lot: "
                f"{summary[f'cpu_ratio_{side}']:.2f}x (medians)")
    if summary["cadence"] and summary["hand"]:
        summary["ratio"] = summary["cadence"] / summary["hand"]
        log(f"gitfloor: cadence {summary['cadence']:.1f} ms/lot, by hand {summary['hand']:.1f} ms/lot: "
            f"{summary['ratio']:.2f}x; cadence {counts['cadence']['per_lot']:.2f} git processes per lot")
    # The ratio of each run's two sides (run one after the other), then
    # the median: a machine whose load drifts during the step moves both.
    for side in ("cadence", "before"):
        pr = []
        for i in range(s["runs"]):
            a = [r for r in res if r["run"] == i and r["side"] == side and r["ok"]]
            h = [r for r in res if r["run"] == i and r["side"] == "hand" and r["ok"]]
            if a and h:
                pr.append(a[0]["per_lot_ms"] / h[0]["per_lot_ms"])
        if pr:
            summary[f"run_ratios_{side}"] = pr
            summary[f"ratio_by_run_{side}"] = statistics.median(pr)
            log(f"gitfloor: {side} ÷ hand run by run: " + " ".join(f"{x:.2f}" for x in pr) +
                f"; median {statistics.median(pr):.2f}")
    if summary.get("before") and summary["hand"]:
        summary["ratio_before"] = summary["before"] / summary["hand"]
        log(f"gitfloor: before {summary['before']:.1f} ms/lot: {summary['ratio_before']:.2f}x the hand loop; "
            f"{counts['before']['per_lot']:.2f} git processes per lot")
    save("gitfloor", {"settings": s, "results": res, "counts": counts, "summary": summary,
                      "parallel": PARALLEL})
    bad = [r for r in res if not r["ok"]] + [c for c in counts.values() if not c["ok"]]
    if bad:
        raise SystemExit(f"gitfloor: {len(bad)} run(s) failed; logs in {where}")


def summary_lines(data):
    """The summary's section for the gitfloor step (bench/out/gitfloor.json)."""
    s, sm, counts = data["settings"], data["summary"], data["counts"]
    w = []
    w.append(f"### Git floor ({s['lots']} command lots in one repository, `parallel = {data['parallel']}`, "
             f"`-jobs {data['parallel']}`, {s['runs']} runs per side, alternating)\n")
    w.append(f"Lot: `{lot_cmd('i', s['sleep'])}`. Per lot: cadence (wall − {s['lots']} × {s['sleep']} s / "
             f"{data['parallel']}) / {s['lots']}; by hand wall / {s['lots']} (no sleep).\n")
    sides = [k for k in ("cadence", "before", "hand") if k in counts]
    w.append("| side | runs | per-lot ms (median) | min–max ms | ÷ hand | git processes per lot |")
    w.append("|---|---:|---:|---:|---:|---:|")
    for side in sides:
        ok = sorted(r["per_lot_ms"] for r in data["results"] if r["side"] == side and r["ok"])
        if not ok:
            w.append(f"| {side} | 0 | — | | |")
            continue
        ratio = f"{statistics.median(ok) / sm['hand']:.2f}×" if sm.get("hand") else ""
        if sm.get(f"ratio_by_run_{side}"):
            ratio += f" (run by run: median {sm[f'ratio_by_run_{side}']:.2f}×, " + \
                " ".join(f"{x:.2f}" for x in sm[f"run_ratios_{side}"]) + ")"
        w.append(f"| {side} | {len(ok)} | {statistics.median(ok):.1f} | {ok[0]:.1f}–{ok[-1]:.1f} | {ratio} | "
                 f"{counts[side]['per_lot']:.2f} |")
    c = counts["cadence"]
    if sm.get("ratio"):
        w.append(f"\ncadence ÷ hand: **{sm['ratio']:.2f}×** (target ≤ 1.25×, goal 1.1×); "
                 f"cadence's git processes per lot: **{c['per_lot']:.2f}** (target ≤ 12)" +
                 (f"; each lot beyond the first adds {c['marginal']:.2f} (a wave of one lot: {c['one_lot']})"
                  if "marginal" in c else "") + ".\n")
    before = "before" in counts
    w.append("| git subcommand | " + ("before, all lots | " if before else "") +
             "cadence, all lots | per lot | by hand, all lots |")
    w.append("|---|" + ("---:|" if before else "") + "---:|---:|---:|")
    subs = sorted(set().union(*(counts[k]["by_subcommand"] for k in sides)),
                  key=lambda k: (-counts["cadence"]["by_subcommand"].get(k, 0),
                                 -counts.get("before", {"by_subcommand": {}})["by_subcommand"].get(k, 0), k))
    for k in subs:
        c = counts["cadence"]["by_subcommand"].get(k, 0)
        b = f"{counts['before']['by_subcommand'].get(k, 0)} | " if before else ""
        w.append(f"| `{k}` | {b}{c} | {c / s['lots']:.2f} | {counts['hand']['by_subcommand'].get(k, 0)} |")
    b = f"{counts['before']['total']} | " if before else ""
    w.append(f"| all | {b}{counts['cadence']['total']} | {counts['cadence']['per_lot']:.2f} | {counts['hand']['total']} |\n")
    return w


def profile(out, cadence, base_env, log, save):
    """Where cadence's time goes in the git floor's wave (one apply of the
    same LOTS lots): the debug log's duration of every git process and of
    every step, by subcommand; each lot's steps from the state file (the
    integrate step includes its wait for the repository's integration
    lock); and `strace -f -c` of a second apply (every process start,
    git's own children included, and the syscalls' time)."""
    s = settings()
    real_git = shutil.which("git")
    d = os.path.join(out, "gitfloor", "profile")
    make_repo(d, real_git)
    write_wave(d, s["lots"], s["sleep"])
    t0 = time.perf_counter()
    p = subprocess.run([cadence, "apply", "-auto-approve", "-jobs", str(PARALLEL), "wave.hcl"], cwd=d,
                       env=dict(base_env, CADENCE_LOG="debug"), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    git_ms, step_ms = collections.defaultdict(list), []
    for line in p.stderr.splitlines():
        if ": end: argv=" not in line or " duration=" not in line:
            continue
        argv = line.split('argv="', 1)[1].split('" dir=', 1)[0]
        dur = parse_duration(line.rsplit(" duration=", 1)[1].split()[0])
        if ".gitint:" in line:
            git_ms[subcommand(argv.split()[1:])].append(dur)
        elif argv.startswith("/bin/sh"):
            step_ms.append(dur)
    import json
    from datetime import datetime
    ts = lambda x: datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()
    st = json.load(open(os.path.join(d, "wave.state.json")))
    integ = []
    for lot in st["lots"].values():
        for step in lot["steps"]:
            if step["kind"] == "integrate" and step.get("ended"):
                integ.append(1000 * (ts(step["ended"]) - ts(step["started"])))
    rows = sorted(((k, len(v), sum(v)) for k, v in git_ms.items()), key=lambda r: -r[2])
    res = {"wall": wall, "rc": p.returncode, "lots": s["lots"],
           "git": [{"sub": k, "n": n, "ms": ms} for k, n, ms in rows],
           "git_ms_per_lot": sum(r[2] for r in rows) / s["lots"],
           "steps_ms_median": statistics.median(step_ms) if step_ms else None,
           "integrate_ms_median": statistics.median(integ) if integ else None,
           "integrate_ms_sum": sum(integ)}
    if shutil.which("strace"):
        make_repo(d, real_git)
        write_wave(d, s["lots"], s["sleep"])
        sf = os.path.join(d, "strace.txt")
        subprocess.run(["strace", "-f", "-c", "-o", sf, cadence, "apply", "-auto-approve", "-jobs", str(PARALLEL),
                        "wave.hcl"], cwd=d, env=base_env, capture_output=True)
        sys_rows = []
        for line in open(sf):
            f = line.split()
            if len(f) >= 5 and f[0].replace(".", "").isdigit() and f[-1].isidentifier() and f[-1] != "total":
                calls = int(f[3])
                sys_rows.append({"name": f[-1], "pct": float(f[0]), "seconds": float(f[1]), "calls": calls})
        res["strace"] = sorted(sys_rows, key=lambda r: -r["seconds"])[:10]
        res["execve_per_lot"] = next((r["calls"] for r in sys_rows if r["name"] == "execve"), 0) / s["lots"]
    log(f"gitprofile: wall {wall:.2f}s; git {res['git_ms_per_lot']:.1f} ms of processes per lot; "
        f"step median {res['steps_ms_median']} ms; integrate step median {res['integrate_ms_median']} ms")
    for r in res["git"]:
        log(f"  {r['sub']:32} {r['n']:4d} calls {r['ms']:8.1f} ms ({r['ms'] / r['n']:.1f} ms each)")
    save("gitprofile", res)


def parse_duration(v):
    """A Go duration ("12.3ms", "1.2s", "850µs") in milliseconds."""
    for unit, f in (("ms", 1), ("µs", 1e-3), ("us", 1e-3), ("ns", 1e-6), ("s", 1000)):
        if v.endswith(unit):
            try:
                return float(v[: -len(unit)]) * f
            except ValueError:
                break
    if "m" in v and v.endswith("s"):  # 1m2.5s
        m, sec = v[:-1].split("m", 1)
        return (float(m) * 60 + float(sec)) * 1000
    return 0.0


def profile_lines(data):
    w = [f"### Git floor: where cadence's time goes ({data['lots']} lots, one apply, `CADENCE_LOG=debug`)\n",
         f"Wall {data['wall']:.2f} s. Summed durations of cadence's git processes: "
         f"**{data['git_ms_per_lot']:.1f} ms per lot**; a lot's command (`sh -c`, its own `git add`/`commit` "
         f"included) {data['steps_ms_median'] or 0:.0f} ms (median); the integrate step "
         f"{data['integrate_ms_median'] or 0:.0f} ms (median, its wait for the integration lock included; "
         f"{data['integrate_ms_sum'] / 1000:.2f} s summed over the lots).\n",
         "| git subcommand (cadence's) | calls | ms in all | ms each |", "|---|---:|---:|---:|"]
    for r in data["git"]:
        w.append(f"| `{r['sub']}` | {r['n']} | {r['ms']:.1f} | {r['ms'] / r['n']:.1f} |")
    if data.get("strace"):
        w.append(f"\n`strace -f -c` of the same apply: {data['execve_per_lot']:.1f} process starts (execve) per lot, "
                 "git's own children and the steps' shells included. The syscalls with the most time:\n")
        w.append("| syscall | % time | seconds | calls |")
        w.append("|---|---:|---:|---:|")
        for r in data["strace"]:
            w.append(f"| {r['name']} | {r['pct']:.1f} | {r['seconds']:.3f} | {r['calls']} |")
    w.append("")
    return w
