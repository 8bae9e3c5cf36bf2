#!/usr/bin/env python3
"""Two sets of triton-tma picks against one validation run (issue 11): for every shape and
type the run timed, each pick's A/BF (the fastest config of the run over the pick's time),
the shapes where the two differ by more than 2 %, and per list and type the median,
minimum and mean of each. A pick the run did not time is listed and left out of both.

Usage: python3 scripts/triton/picks_compare.py OLD_PICKS.txt NEW_PICKS.txt RUN_DIR [RUN_DIR ...]
  PICKS.txt: origami-select's text batch output (columns M N K dtype pick predicted_us);
  RUN_DIR: a `tma_sweep.py` output folder (measurements.csv or .csv.gz).
The seed list is data/seed_shapes.csv; every other shape counts as held out.
Standard library only.
"""
import csv
import gzip
import os
import statistics
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def bad_input(why):
    """One line on stderr and exit 2, the project's code for bad input."""
    name = os.path.splitext(os.path.basename(sys.argv[0]))[0] or "picks_compare"
    print(f"{name}: {why}", file=sys.stderr)
    sys.exit(2)


def measurements(run_dir):
    path = os.path.join(run_dir, "measurements.csv")
    if os.path.exists(path):
        return list(csv.DictReader(open(path, newline="")))
    if os.path.exists(path + ".gz"):
        return list(csv.DictReader(gzip.open(path + ".gz", "rt", newline="")))
    bad_input(f"{run_dir}: no measurements.csv(.gz)")


def picks(path):
    out = {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        bad_input(f"{path}: {e.strerror}")
    for line in lines:
        x = line.split()
        if len(x) >= 5 and x[0].isdigit():
            out[(int(x[0]), int(x[1]), int(x[2]), x[3])] = x[4]
    if not out:
        bad_input(f"{path}: no picks")
    return out


def main(argv):
    if len(argv) < 4:
        bad_input("usage: picks_compare.py OLD_PICKS.txt NEW_PICKS.txt RUN_DIR [RUN_DIR ...]")
    old, new = picks(argv[1]), picks(argv[2])
    seed = set()
    for line in open(os.path.join(ROOT, "data", "seed_shapes.csv")):
        f = line.strip().split(",")
        if f[0].isdigit():
            seed.add(tuple(int(v) for v in f[:3]))
    timed = defaultdict(dict)
    for d in argv[3:]:
        for r in measurements(d):
            if r.get("status") != "ok" or not r.get("block_m"):
                continue
            key = (int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])
            timed[key][r["config"]] = float(r["us"])
    scores = defaultdict(list)
    for key in sorted(timed):
        if key not in old or key not in new:
            continue
        ms = timed[key]
        shape = "x".join(map(str, key[:3]))
        if old[key] not in ms or new[key] not in ms:
            print(f"not timed: {shape} {key[3]} old {old[key]} new {new[key]}")
            continue
        best = min(ms.values())
        a, b = best / ms[old[key]], best / ms[new[key]]
        scores[("seed" if key[:3] in seed else "held out", key[3])].append((a, b))
        if abs(a - b) > 0.02:
            print(f"{shape:>18s} {key[3]}  old {old[key]:<28s} {a:.3f}  new {new[key]:<28s} {b:.3f}")
    print()
    print("list      dtype shapes   old median    min   mean   new median    min   mean")
    for (lst, dt), v in sorted(scores.items()):
        a = [x for x, _ in v]
        b = [y for _, y in v]
        print(f"{lst:<9s} {dt:<5s} {len(v):6d}   {statistics.median(a):10.3f} {min(a):6.3f} "
              f"{statistics.mean(a):6.3f}   {statistics.median(b):10.3f} {min(b):6.3f} "
              f"{statistics.mean(b):6.3f}")


if __name__ == "__main__":
    main(sys.argv)
