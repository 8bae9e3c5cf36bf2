#!/usr/bin/env python3
"""The family's ceiling against cuBLAS in a brute-force sweep (tma_sweep.py's layout): per
input type, cuBLAS's time (shapes.csv: the mean of its timings before and after the
configs) over the fastest verified config's, as median, minimum and maximum over the shapes
with M >= each given bound. Standard library only.

Usage: python3 scripts/triton/tma_best_vs_cublas.py RUN_DIR [--min-m 1 --min-m 1024]
"""
import argparse
import collections
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_layout import open_csv  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run")
    ap.add_argument("--min-m", type=int, action="append", default=[])
    a = ap.parse_args()
    cublas = {}
    with open(os.path.join(a.run, "shapes.csv")) as f:
        for r in csv.DictReader(f):
            cublas[(int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])] = float(r["cublas_ms"])
    best = collections.defaultdict(lambda: float("inf"))
    with open_csv(os.path.join(a.run, "configs.csv")) as f:
        for r in csv.DictReader(f):
            if r["passed"] == "1":
                k = (int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])
                best[k] = min(best[k], float(r["measured_ms"]))
    for dt in sorted({k[3] for k in best}):
        for lo in a.min_m or [1]:
            v = [cublas[k] / best[k] for k in best if k[3] == dt and k[0] >= lo]
            if v:
                print(f"{dt} M>={lo}: {len(v)} shapes, best/cuBLAS median {statistics.median(v):.3f} "
                      f"min {min(v):.3f} max {max(v):.3f}, at or above cuBLAS {sum(x >= 1 for x in v)}")


if __name__ == "__main__":
    main()
