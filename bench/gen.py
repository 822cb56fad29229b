#!/usr/bin/env python3
"""Generate one DAG as equivalent inputs for cadence, GNU make, ninja and go-task.

    python3 bench/gen.py SHAPE N DIR [--cmd CMD] [--seed S]

SHAPE is wide (N independent lots), chain (L_i depends on L_{i-1}), layered
(layers of ceil(sqrt(N)) lots; every lot of a layer after the first depends on
2 distinct random lots of the previous layer; random.Random(seed)) or layers10
(the same with 10 layers of ceil(N/10) lots).

Writes into DIR: wave.hcl, wave-nosandbox.hcl (the same lots with
`sandbox = false`: their command steps outside cadence's step sandbox),
Makefile, build.ninja, Taskfile.yml and dag.json
(the edges, the critical path length in lots and the sinks). In --cmd,
{lot} stands for the lot's name. Every tool gets
the same lots, the same edges and the same command; the root target of
make/ninja/task is the set of sinks (lots nothing depends on).
"""
import argparse
import json
import math
import os
import random


def build(shape, n, seed):
    deps = [[] for _ in range(n)]
    if shape == "wide":
        pass
    elif shape == "chain":
        for i in range(1, n):
            deps[i] = [i - 1]
    elif shape in ("layered", "layers10"):
        rng = random.Random(seed)
        w = math.ceil(math.sqrt(n)) if shape == "layered" else math.ceil(n / 10)
        layers = [list(range(s, min(s + w, n))) for s in range(0, n, w)]
        for prev, cur in zip(layers, layers[1:]):
            for i in cur:
                deps[i] = sorted(rng.sample(prev, min(2, len(prev))))
    else:
        raise SystemExit(f"unknown shape {shape!r}")
    return deps


def critical_path(deps):
    depth = []
    for d in deps:  # deps always point to lower indices
        depth.append(1 + max((depth[j] for j in d), default=0))
    return max(depth, default=0)


def sinks(deps):
    used = set(j for d in deps for j in d)
    return [i for i in range(len(deps)) if i not in used]


def name(i):
    return f"L{i}"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape")
    ap.add_argument("n", type=int)
    ap.add_argument("dir")
    ap.add_argument("--cmd", default="true")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    deps = build(a.shape, a.n, a.seed)
    os.makedirs(a.dir, exist_ok=True)
    roots = sinks(deps)
    cmds = [a.cmd.replace("{lot}", name(i)) for i in range(a.n)]

    # cadence: command lots (no repo) run with sh -c in the wave file's folder;
    # wave-nosandbox.hcl runs them outside the step sandbox (docs/wave-file.md).
    for fname, extra in (("wave.hcl", ""), ("wave-nosandbox.hcl", "  sandbox = false\n")):
        out = ['wave "bench" {}\n']
        for i, d in enumerate(deps):
            out.append(f'lot "{name(i)}" {{\n  run = "{cmds[i]}"\n' + extra)
            if d:
                out.append("  depends_on = [" + ", ".join(f"lot.{name(j)}" for j in d) + "]\n")
            out.append("}\n")
        write(os.path.join(a.dir, fname), "".join(out))

    # GNU make: phony targets, silent recipes.
    out = [".PHONY: all " + " ".join(name(i) for i in range(a.n)) + "\n"]
    out.append("all: " + " ".join(name(i) for i in roots) + "\n")
    for i, d in enumerate(deps):
        out.append(f"{name(i)}: " + " ".join(name(j) for j in d) + f"\n\t@{cmds[i]}\n")
    write(os.path.join(a.dir, "Makefile"), "".join(out))

    # ninja: the command creates no file, so every edge is dirty on every run
    # (the runner also removes .ninja_log/.ninja_deps between runs).
    out = ["rule r\n  command = $cmd\n"]
    for i, d in enumerate(deps):
        out.append(f"build {name(i)}: r" + ("".join(" " + name(j) for j in d)) +
                   f"\n  cmd = {cmds[i]}\n")
    out.append("build all: phony " + " ".join(name(i) for i in roots) + "\ndefault all\n")
    write(os.path.join(a.dir, "build.ninja"), "".join(out))

    # go-task: run: once so that a task several others depend on runs once.
    out = ["version: '3'\nrun: once\nsilent: true\ntasks:\n"]
    out.append("  default:\n    deps: [" + ", ".join(name(i) for i in roots) + "]\n")
    for i, d in enumerate(deps):
        out.append(f"  {name(i)}:\n")
        if d:
            out.append("    deps: [" + ", ".join(name(j) for j in d) + "]\n")
        out.append(f"    cmds: ['{cmds[i]}']\n")
    write(os.path.join(a.dir, "Taskfile.yml"), "".join(out))

    with open(os.path.join(a.dir, "dag.json"), "w") as f:
        json.dump({"shape": a.shape, "n": a.n, "seed": a.seed, "cmd": a.cmd, "deps": deps,
                   "critical_path": critical_path(deps), "sinks": len(roots),
                   "edges": sum(len(d) for d in deps)}, f)


if __name__ == "__main__":
    main()
