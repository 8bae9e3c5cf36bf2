#!/usr/bin/env python3
"""Summarise the rounds `scripts/triton/tma_bimodal.py` timed (issue 11): per file of a
folder and per config, the median, minimum and maximum time over the rounds, their ratio,
and the SM clocks NVML read after the timings.

Usage: python3 scripts/triton/tma_bimodal_summary.py DIR   (DIR holds fresh.csv, fresh2.csv,
keep.csv, refill.csv, square.csv; a file that is missing is skipped)
Standard library only.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

FILES = [
    ("fresh.csv", "fresh buffers and values every round"),
    ("fresh2.csv", "the same, again"),
    ("keep.csv", "the same buffers and values"),
    ("refill.csv", "the same buffers, new values every round"),
    ("square.csv", "4096^3, fresh buffers"),
]


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("tma_bimodal_summary: usage: tma_bimodal_summary.py DIR", file=sys.stderr)
        sys.exit(2)
    found = 0
    for name, what in FILES:
        path = os.path.join(argv[1], name)
        if not os.path.exists(path):
            continue
        found += 1
        rows = list(csv.DictReader(open(path, newline="")))
        by = defaultdict(list)
        for r in rows:
            by[r["config"]].append(float(r["us"]))
        rounds = len({r["round"] for r in rows})
        mhz = sorted({r["sm_mhz"] for r in rows if r["sm_mhz"]}, key=float)
        print(f"{name}: {what} ({rounds} rounds); SM clock read after each timing: "
              f"{', '.join(mhz) or 'not read'} MHz")
        for c, us in by.items():
            print(f"  {c:<22s} median {statistics.median(us):6.1f}  min {min(us):6.1f}  "
                  f"max {max(us):6.1f}  max/min {max(us) / min(us):.2f}")
    if not found:
        print(f"tma_bimodal_summary: {argv[1]}: none of the round files", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
