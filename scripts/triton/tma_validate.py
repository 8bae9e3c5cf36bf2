#!/usr/bin/env python3
"""Score the model's picks for the `triton-tma` family against a validation run.

A validation run times, on every shape, one config list that holds every shape's pick and
every shape's brute-force best (`tma_sweep.py --configs`), with cuBLAS before and after. For
each shape and input type this script reads the pick (`origami-select --shapes ... --family
triton-tma`, the file given) and reports the pick's time against the fastest config timed
in the same run (A/BF), the fastest config against cuBLAS (mean of its two timings), and
the medians, minima and counts per shape list. Standard library only.

Usage: python3 scripts/triton/tma_validate.py PICKS.txt RUN_DIR [RUN_DIR ...]
  PICKS.txt: origami-select's text batch output (columns M N K dtype pick predicted_us)
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


def read_picks(path):
    picks = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 5 and p[0].isdigit():
                picks[(int(p[0]), int(p[1]), int(p[2]), p[3])] = p[4]
    return picks


def main(argv):
    if len(argv) < 3:
        print("usage: tma_validate.py PICKS.txt RUN_DIR [RUN_DIR ...]", file=sys.stderr)
        return 2
    picks = read_picks(argv[1])
    rows = []
    for run in argv[2:]:
        shapes = {}
        with open_csv(os.path.join(run, "shapes.csv")) as f:
            for r in csv.DictReader(f):
                shapes[(int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])] = (
                    r["set"], float(r["cublas_ms"]))
        times = {}
        with open_csv(os.path.join(run, "configs.csv")) as f:
            for r in csv.DictReader(f):
                if r["passed"] == "1":
                    key = (int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])
                    times.setdefault(key, {})[r["config"]] = float(r["measured_ms"])
        for key, t in times.items():
            pick = picks.get(key)
            if pick is None:
                print(f"no pick for {key}", file=sys.stderr)
                return 1
            best = min(t.values())
            set_name, cublas = shapes[key]
            abf = best / t[pick] if pick in t else 0.0
            rows.append((set_name, key, pick, abf, cublas / best, cublas / t.get(pick, float("inf"))))
    print("set          dtype  shapes  A/BF median    min   mean   best/cuBLAS median  pick/cuBLAS median  (>= 1024 tokens: best, pick)")
    for set_name in sorted({r[0] for r in rows}):
        for dt in ("fp16", "bf16"):
            v = [r for r in rows if r[0] == set_name and r[1][3] == dt]
            if not v:
                continue
            big = [r for r in v if r[1][0] >= 1024]
            abf = [r[3] for r in v]
            extra = ""
            if big and set_name == "llm_shapes":
                extra = "  %.3f, %.3f (%d shapes)" % (
                    statistics.median(r[4] for r in big), statistics.median(r[5] for r in big), len(big))
            print("%-12s %-5s %7d  %10.3f %6.3f %6.3f  %18.3f  %18.3f%s" % (
                set_name, dt, len(v), statistics.median(abf), min(abf), statistics.mean(abf),
                statistics.median(r[4] for r in v), statistics.median(r[5] for r in v), extra))
    print("\nshapes below 0.95 A/BF:")
    for r in sorted(rows, key=lambda r: r[3]):
        if r[3] < 0.95:
            print("  %-12s %s pick %s A/BF %.3f" % (r[0], "x".join(map(str, r[1][:3])) + " " + r[1][3], r[2], r[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
