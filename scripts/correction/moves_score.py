#!/usr/bin/env python3
"""Score a correction's moved picks timed again on the device: JOBS has one line per moved
pick, "DTYPE M N K MODEL_PICK CORRECTED_PICK SWEEP_FASTEST"; RUN is the configs.csv of a
run that timed every config of JOBS on every shape (scripts/triton/tma_sweep.py --passes 4
--shape ...). Prints each pick against the fastest launch of the run (A/BF), per type the
means and how many moves gained or lost more than half a percent.

Usage: moves_score.py JOBS RUN/configs.csv"""
import csv
import statistics
import sys
from collections import defaultdict


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    times = defaultdict(dict)
    with open(argv[2]) as f:
        reader = csv.DictReader(f)
        needed = {"m", "n", "k", "dtype", "config", "measured_ms", "passed"}
        missing = needed - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{argv[2]}: no column {', '.join(sorted(missing))}")
        for r in reader:
            if r.get("passed") == "1" and r.get("measured_ms"):
                times[(r["dtype"], r["m"], r["n"], r["k"])][r["config"]] = float(r["measured_ms"])
    per = defaultdict(list)
    with open(argv[1]) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 6:
                continue
            dt, m, n, k, model, corrected = parts[:6]
            t = times.get((dt, m, n, k), {})
            if model not in t or corrected not in t:
                print(f"{m}x{n}x{k} {dt}: a pick was not timed", file=sys.stderr)
                return 1
            best = min(t.values())
            a, b = best / t[model], best / t[corrected]
            per[dt].append((a, b))
            print(f"{m}x{n}x{k} {dt}: model {100 * a:.1f} % -> corrected {100 * b:.1f} %  ({model} -> {corrected})")
    for dt, v in per.items():
        better = sum(b > a + 0.005 for a, b in v)
        worse = sum(b < a - 0.005 for a, b in v)
        print(f"{dt}: {len(v)} moves, mean A/BF model {100 * statistics.mean(a for a, _ in v):.1f} % -> "
              f"corrected {100 * statistics.mean(b for _, b in v):.1f} %; better {better}, worse {worse}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, KeyError, ValueError, csv.Error) as e:
        print(f"moves_score.py: {e}", file=sys.stderr)
        sys.exit(2)
