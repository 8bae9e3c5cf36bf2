#!/usr/bin/env python3
"""Summarize scripts/hopper/swap_picks.sh's folder: per shape, the `auto` pick before and
after a model change (the list's two picks), each as A/cuBLAS (its own process's cuBLAS),
every config checked against cuBLAS.
Usage: swap_summary.py FOLDER [LIST]   (LIST: scripts/hopper/swap_changed_picks.txt)"""
import glob
import json
import os
import statistics
import sys


def configs(path):
    d = json.load(open(path))
    return {c["config"]: c for c in d["configs"]}


def main():
    folder = sys.argv[1]
    listed = sys.argv[2] if len(sys.argv) > 2 else "scripts/hopper/swap_changed_picks.txt"
    picks = {}
    for line in open(listed):
        if line.startswith("#") or not line.strip():
            continue
        m, n, k, f0, p0, f1, p1 = line.split()
        picks[f"{m}x{n}x{k}"] = (f0, p0, f1, p1)
    print(f"{'shape':18} {'before':34} {'A/cuBLAS':>8}  {'after':34} {'A/cuBLAS':>8}  after/before")
    ratios, befores, afters = [], [], []
    for shape, (f0, p0, f1, p1) in picks.items():
        both = os.path.join(folder, f"both-{shape}.json")
        if os.path.exists(both):
            c = configs(both)
            c0, c1 = c.get(p0), c.get(p1)
        else:
            b, a = (os.path.join(folder, f"{w}-{shape}.json") for w in ("before", "after"))
            c0 = configs(b).get(p0) if os.path.exists(b) else None
            c1 = configs(a).get(p1) if os.path.exists(a) else None
        if not c0 or not c1:
            print(f"{shape:18} missing")
            continue
        bad = [x["config"] for x in (c0, c1) if not x["passed"]]
        v0, v1 = c0["vs_cublas"], c1["vs_cublas"]
        befores.append(v0)
        afters.append(v1)
        ratios.append(v1 / v0)
        flag = f"  FAILED CHECK {bad}" if bad else ""
        print(f"{shape:18} {f0 + ' ' + p0:34} {v0:8.3f}  {f1 + ' ' + p1:34} {v1:8.3f}  {v1 / v0:8.3f}{flag}")
    if ratios:
        print(
            f"shapes {len(ratios)}: before median {statistics.median(befores):.3f} min {min(befores):.3f}; "
            f"after median {statistics.median(afters):.3f} min {min(afters):.3f}; "
            f"after/before median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}"
        )


if __name__ == "__main__":
    main()
