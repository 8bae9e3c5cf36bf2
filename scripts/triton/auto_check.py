#!/usr/bin/env python3
"""Score `--family triton-auto` where it picks the classic kernel: one device session times
the classic family's whole feasible listing (scripts/triton_sweep.py) and the
tensor-descriptor family's validation configs (scripts/triton/tma_sweep.py) on the same
shapes, each beside cuBLAS. Per shape it prints the classic pick, the classic family's
best, the tensor-descriptor pick and best (microseconds, as measured: the two runs are
minutes apart on one GPU; each run's cuBLAS time is printed beside them, and the classic
pick's timing mode, since triton_sweep.py times a launch it probes above its graph
threshold with events, which on a kernel of a few microseconds measure the host) and
auto's A/BF: the best of both families over auto's pick.

Usage: auto_check.py CLASSIC_DIR TMA_DIR TMA_PICKS.txt
(TMA_PICKS.txt: `origami-select --shapes ... --family triton-tma` text output.)
"""

import csv
import gzip
import os
import statistics
import sys



def open_csv(path):
    """A CSV file, or its gzipped copy (PATH.gz: the result folders gzip files over 100 kB)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rt", newline="")
    return open(path, newline="")


def rows(path):
    with open_csv(path) as f:
        return list(csv.DictReader(f))


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    cdir, tdir, picks_path = argv[1:]
    classic = {}
    for r in rows(os.path.join(cdir, "configs.csv")):
        key = (int(r["m"]), int(r["n"]), int(r["k"]))
        if r["passed"] != "1" or not r["measured_ms"]:
            continue
        e = classic.setdefault(key, {"best": float("inf"), "pick": None})
        us = float(r["measured_ms"]) * 1e3
        e["best"] = min(e["best"], us)
        if r["is_pick"] == "1":
            mode = "graph" if int(r["reps"] or 1) > 1 else "events"
            e["pick"] = (r["config"], us, mode)
    c_cublas = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["cublas_ms"]) * 1e3
                for r in rows(os.path.join(cdir, "shapes.csv"))}
    tma, t_cublas = {}, {}
    for r in rows(os.path.join(tdir, "measurements.csv")):
        if r["status"] != "ok" or r["dtype"] != "fp16":
            continue
        key = (int(r["m"]), int(r["n"]), int(r["k"]))
        if r["config"] in ("cublas_before", "cublas_after"):
            t_cublas.setdefault(key, []).append(float(r["us"]))
            continue
        tma.setdefault(key, {})[r["config"]] = float(r["us"])
    tpick = {}
    with open(picks_path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 5 and p[0].isdigit() and p[3] == "fp16":
                tpick[(int(p[0]), int(p[1]), int(p[2]))] = p[4]
    print(f"{'shape':>16} {'classic pick':>24} {'us':>8} {'timed':>6} {'classic best':>12} "
          f"{'tma pick':>9} {'tma best':>9} {'cuBLAS c/t':>13} {'auto A/BF':>9}")
    scores = []
    for key in sorted(classic):
        c = classic[key]
        if c["pick"] is None or key not in tma:
            continue
        t = tma[key]
        tc = statistics.mean(t_cublas[key])
        tp = t.get(tpick.get(key, ""), float("nan"))
        best = min(c["best"], min(t.values()))
        score = best / c["pick"][1]
        scores.append(score)
        cub = f"{c_cublas[key]:.1f}/{tc:.1f}"
        print(f"{'x'.join(map(str, key)):>16} {c['pick'][0]:>24} {c['pick'][1]:8.2f} "
              f"{c['pick'][2]:>6} {c['best']:12.2f} {tp:9.2f} {min(t.values()):9.2f} "
              f"{cub:>13} {score:9.3f}")
    if scores:
        print(f"auto A/BF over {len(scores)} shapes: median {statistics.median(scores):.3f}, "
              f"min {min(scores):.3f}, mean {statistics.mean(scores):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
