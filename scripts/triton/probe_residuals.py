#!/usr/bin/env python3
"""The spread of a model's errors over one sweep, per shape: the root mean square of each
launch's log(measured / predicted) less its shape's median (an error common to every launch
of a shape does not change a ranking). Reads `origami-bench refit --predictions FILE`'s CSV
(set, m, n, k, dtype, config, predicted_us, measured_us, picked); prints `rms R`.

Usage: probe_residuals.py PREDICTIONS.csv
"""
import csv
import math
import statistics
import sys
from collections import defaultdict


def residual_rms(rows):
    """RMS of log(measured / predicted) less the median of its shape; None without rows."""
    by_shape = defaultdict(list)
    for r in rows:
        p, m = float(r["predicted_us"]), float(r["measured_us"])
        if p > 0 and m > 0:
            by_shape[(r["m"], r["n"], r["k"], r["dtype"])].append(math.log(m / p))
    res = []
    for logs in by_shape.values():
        med = statistics.median(logs)
        res.extend(x - med for x in logs)
    if not res:
        return None
    return math.sqrt(sum(x * x for x in res) / len(res))


def main(argv):
    if len(argv) != 2:
        print("usage: probe_residuals.py PREDICTIONS.csv", file=sys.stderr)
        return 2
    try:
        with open(argv[1], newline="") as f:
            rows = list(csv.DictReader(f))
        rms = residual_rms(rows)
    except (OSError, KeyError, ValueError) as e:
        print(f"probe_residuals.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    if rms is None:
        print(f"probe_residuals.py: {argv[1]}: no launch with positive times", file=sys.stderr)
        return 2
    print(f"rms {rms:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
