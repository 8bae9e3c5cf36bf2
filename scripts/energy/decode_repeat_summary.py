#!/usr/bin/env python3
"""Summary of scripts/energy/decode_repeat.sh's run (CPU only): per shape (every
MxNxK-1.json and -2.json pair in the folder), the energy per GEMM of each config in the two
repeated runs and in the committed spread sweep, and the Kendall tau-b between the runs,
against the sweep, and of the model's predicted energy (the sweep's energy.csv, default
results/h100/energy/spread2s-llm/energy.csv) against each; and where the sweep's energy.json lies beside its energy.csv, the least energy over its
energy pick's in each run and in the sweep (the issue's energy-pick score).
Usage: decode_repeat_summary.py RUN_FOLDER [ENERGY_CSV]"""
import csv
import itertools
import json
import os
import sys


def taub(a, b):
    c = d = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        s = (a[i] - a[j]) * (b[i] - b[j])
        c += s > 0
        d += s < 0
    return (c - d) / max(1, c + d)


def main():
    if len(sys.argv) not in (2, 3) or not os.path.isdir(sys.argv[1]):
        print("usage: decode_repeat_summary.py RUN_FOLDER [ENERGY_CSV]", file=sys.stderr)
        sys.exit(2)
    folder = sys.argv[1]
    path = sys.argv[2] if len(sys.argv) == 3 else "results/h100/energy/spread2s-llm/energy.csv"
    shapes = sorted(f[:-len("-1.json")] for f in os.listdir(folder) if f.endswith("-1.json"))
    if not shapes:
        print(f"decode_repeat_summary.py: no MxNxK-1.json in {folder}", file=sys.stderr)
        sys.exit(2)
    missing = [f for f in [path] + [os.path.join(folder, f"{s}-{i}.json") for s in shapes
                                    for i in (1, 2)] if not os.path.isfile(f)]
    if missing:
        print(f"decode_repeat_summary.py: no {missing[0]}", file=sys.stderr)
        sys.exit(2)
    rows = {(r["m"], r["n"], r["k"], r["config"]): r for r in csv.DictReader(open(path))}
    picks = {}
    summary = os.path.join(os.path.dirname(path), "energy.json")
    if os.path.isfile(summary):
        for sh in json.load(open(summary))["shapes"]:
            picks[f"{sh['m']}x{sh['n']}x{sh['k']}"] = sh["energy_pick_config"]
    for s in shapes:
        reps = [json.load(open(os.path.join(folder, f"{s}-{i}.json"))) for i in (1, 2)]
        cs = [c["config"] for c in reps[0]["configs"]]
        e = [[c["sustained"]["mj_per_launch"] for c in r["configs"]] for r in reps]
        m, n, k = s.split("x")
        sweep = [float(rows[(m, n, k, c)]["measured_mj"]) for c in cs]
        pred = [float(rows[(m, n, k, c)]["predicted_mj"]) for c in cs]
        print(f"{s}: tau run 1 vs run 2 {taub(e[0], e[1]):.3f}, against the sweep "
              f"{taub(e[0], sweep):.3f} / {taub(e[1], sweep):.3f}; the model against run 1, "
              f"run 2, the sweep {taub(pred, e[0]):.3f} / {taub(pred, e[1]):.3f} / "
              f"{taub(pred, sweep):.3f}")
        if s in picks and picks[s] in cs:
            i = cs.index(picks[s])
            score = [min(run) / run[i] for run in (e[0], e[1], sweep)]
            print(f"   energy pick {picks[s]}: the least energy over its own {score[0]:.3f} / "
                  f"{score[1]:.3f} / {score[2]:.3f} (run 1 / run 2 / the sweep)")
        print(f"   {'config':26s} {'run 1':>7s} {'run 2':>7s} {'sweep':>7s} {'model':>7s}  (mJ)")
        for c, a, b, w, p in zip(cs, e[0], e[1], sweep, pred):
            print(f"   {c:26s} {a:7.2f} {b:7.2f} {w:7.2f} {p:7.2f}")


if __name__ == "__main__":
    main()
