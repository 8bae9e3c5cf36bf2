#!/usr/bin/env python3
"""Summarize scripts/hopper/ncu_misses.sh's Nsight Compute CSVs (issue 13): per profiled
launch, the kernel, its grid and block, and the Speed Of Light / memory / occupancy numbers
that say what bounds it. The CSVs carry origami-bench's own stdout before ncu's table: the
table starts at its "ID" header line.

Usage: python3 scripts/hopper/ncu_summary.py DIR > DIR/summary.txt
"""
import csv
import glob
import io
import sys

METRICS = [
    "Duration", "SM Frequency", "Compute (SM) Throughput", "Memory Throughput",
    "L2 Cache Throughput", "DRAM Throughput", "L2 Hit Rate", "Achieved Occupancy",
    "Waves Per SM",
]


def table(path):
    lines = open(path).read().splitlines()
    start = [i for i, line in enumerate(lines) if line.startswith('"ID"')]
    if not start:
        return None
    rows = list(csv.reader(io.StringIO("\n".join(lines[start[0]:]))))
    head = rows[0]
    col = {name: head.index(name) for name in
           ("Kernel Name", "Grid Size", "Block Size", "Metric Name", "Metric Unit", "Metric Value")}
    launches = {}
    for r in rows[1:]:
        if len(r) > col["Metric Value"]:
            launch = launches.setdefault(r[head.index("ID")], {
                "kernel": r[col["Kernel Name"]], "grid": r[col["Grid Size"]],
                "block": r[col["Block Size"]], "values": {}})
            launch["values"].setdefault(r[col["Metric Name"]],
                                        (r[col["Metric Value"]], r[col["Metric Unit"]]))
    return [(x["kernel"], x["grid"], x["block"], x["values"]) for x in launches.values()]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ncu_summary.py DIR")
    for path in sorted(glob.glob(sys.argv[1] + "/*.csv")):
        name = path.split("/")[-1][:-4]
        t = table(path)
        if t is None:
            print(f"{name}: no profiled launch")
            continue
        for kernel, grid, block, v in t:
            print(f"{name}: {kernel[:56]}, grid {grid}, block {block}")
            print("   " + "; ".join(f"{m} {v[m][0]} {v[m][1]}".rstrip() for m in METRICS if m in v))


if __name__ == "__main__":
    main()
