#!/usr/bin/env python3
"""Sensitivity of the calibration-only tier's ranking to the K loop's issue cost counted
from the compiled kernel (issue 14, docs/calibration-only.md): each launch's prediction (a
dump of `origami-bench refit --rounds 0 --calibration-only --predictions FILE`, already
scaled by the refit's tp_time_scale) plus WEIGHT x the issue time of its busiest SM:
tiles on it x K iterations x warps x the loop's SASS instructions
(`scripts/triton/sass_loop_counts.py`) / 4 issue slots per SM cycle / the clock (1980
MHz). Prints the mean Kendall tau-b and the pick's A/BF (median, minimum) per weight.
A hand-set weight is a sensitivity, not a calibration. Usage:
loop_count_sensitivity.py PREDICTIONS.csv LOOP_COUNTS.csv [SMS (132)] [WEIGHT...]
"""
import collections
import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tau_analysis import taub  # noqa: E402

CLOCK_MHZ = 1980.0
ISSUE_SLOTS = 4


def main():
    a = sys.argv[1:]
    if len(a) < 2:
        sys.exit("usage: loop_count_sensitivity.py PREDICTIONS.csv LOOP_COUNTS.csv [SMS] [WEIGHT...]")
    sms = int(a[2]) if len(a) > 2 else 132
    weights = [float(w) for w in a[3:]] or [0.0, 0.25, 0.5, 1.0, 2.0]
    try:
        with open(a[1]) as f:
            counts = {(int(r["bm"]), int(r["bn"]), int(r["bk"]), int(r["w"]), int(r["s"])):
                      int(r["loop_instructions"])
                      for r in csv.DictReader(x for x in f if not x.startswith("#"))
                      if r["status"] == "ok"}
        with open(a[0]) as f:
            rows = list(csv.DictReader(f))
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"loop_count_sensitivity.py: {e}")
    by, missing = collections.defaultdict(list), 0
    for r in rows:
        if r["measured_us"] in ("", "nan"):
            continue
        tile, _g, w, s = r["config"].split(",")[:4]
        bm, bn, bk = map(int, tile.split("x"))
        w, s = int(w[1:]), int(s[1:])
        n = counts.get((bm, bn, bk, w, s))
        if n is None:
            missing += 1
            continue
        m, nn, k = int(r["m"]), int(r["n"]), int(r["k"])
        on_sm = math.ceil(math.ceil(m / bm) * math.ceil(nn / bn) / sms)
        issue_us = on_sm * math.ceil(k / bk) * w * n / ISSUE_SLOTS / CLOCK_MHZ
        by[(r["set"], m, nn, k, r["dtype"])].append(
            (float(r["predicted_us"]), float(r["measured_us"]), issue_us))
    print(f"{a[0]}: {len(by)} shapes; launches without a loop count: {missing}")
    for wt in weights:
        taus, abf = [], []
        for v in by.values():
            p = [x[0] + wt * x[2] for x in v]
            meas = [x[1] for x in v]
            taus.append(taub(p, meas))
            abf.append(min(meas) / meas[min(range(len(v)), key=p.__getitem__)])
        print(f"  weight {wt:5.2f}: tau {statistics.mean(taus):.3f}, "
              f"A/BF median {100 * statistics.median(abf):.1f} %, min {100 * min(abf):.1f} %")


if __name__ == "__main__":
    main()
