#!/usr/bin/env python3
"""How much of the Kendall tau a learned correction of the model could recover (an offline
experiment, CPU only; needs numpy and scikit-learn, which the project does not install).

The committed model's prediction of every timed launch (`origami-select --top 100000
--format csv`, as scripts/tau_analysis.py does), then per shape the residual
log(measured / predicted) less the shape's median; a gradient-boosted tree ensemble
(sklearn's HistGradientBoostingRegressor) learns it from launch and grid features (tile
sides, BLOCK_K, stages, warps, FLATTEN, swap, split-K, waves, last-wave fill, the shape's
sides, the predicted time) on the FIT sweep only, and the corrected predictions are scored
on every sweep given: mean tau-b over shapes, and A/BF of the corrected pick by lookup in
the sweep (median, min). An ensemble fitted on the held-out sweep itself (`--oracle`) says
what the features can explain at all.

Usage: residual_gbm.py --family FAMILY [--dtype fp16] [--oracle] [--rerank N] FIT.csv[.gz]
       [TEST.csv[.gz] [--test-dtype bf16] ...] [--trees 50,100,300,600] [--leaves 8,15,15,31]
"""
import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tau_analysis as T  # noqa: E402

SMS = 132


def features(shape, config, predicted_us):
    m, n, k = shape
    parts = config.split(",")
    bm, bn, bk = map(int, parts[0].split("x"))
    stages = int(next(p for p in parts if p.startswith("s") and p[1:].isdigit())[1:])
    warps = int(next(p for p in parts if p.startswith("w"))[1:])
    swap = "swap" in parts
    if swap:
        m, n = n, m
    runs = next((int(p[1:]) for p in parts if p.startswith("k") and p[1:].isdigit()), 1)
    tiles = -(-m // bm) * -(-n // bn) * runs
    waves = tiles / SMS
    return [math.log2(bm), math.log2(bn), bk, stages, warps, "flatten" in parts, swap, runs,
            math.log2(max(waves, 1e-3)), tiles / (math.ceil(waves) * SMS), math.log2(m),
            math.log2(n), math.log2(k), math.log(predicted_us)]


def load(path, family, dtype, select):
    meas = T.measured(path, dtype)
    pred = T.predicted(sorted(meas), family, "h100-sxm", dtype, select)
    out = []
    for s in sorted(meas):
        cs = [c for c in meas[s] if c in pred.get(s, {})]
        if len(cs) < 3:
            continue
        r = {c: math.log(meas[s][c] / pred[s][c]) for c in cs}
        mid = statistics.median(r.values())
        out.append((s, cs, meas[s], pred[s], {c: r[c] - mid for c in cs}))
    return out


def matrix(data):
    import numpy as np
    x = np.array([features(s, c, pr[c]) for s, cs, me, pr, res in data for c in cs], dtype=float)
    y = np.array([res[c] for s, cs, me, pr, res in data for c in cs])
    return x, y


def score(data, model=None, rerank=0):
    """Mean tau over shapes and the pick's A/BF; with `rerank` N, also the A/BF of the pick
    the correction makes among the model's own first N launches only (what a selection
    that corrects a few candidates would pick)."""
    import numpy as np
    taus, abf, abf_top = [], [], []
    for s, cs, me, pr, _ in data:
        p = pr
        if model is not None:
            corr = model.predict(np.array([features(s, c, pr[c]) for c in cs], dtype=float))
            p = {c: pr[c] * math.exp(v) for c, v in zip(cs, corr)}
        taus.append(T.taub([p[c] for c in cs], [me[c] for c in cs]))
        pick = min(cs, key=p.get)
        abf.append(min(me.values()) / me[pick])
        if rerank:
            top = sorted(cs, key=pr.get)[:rerank]
            abf_top.append(min(me.values()) / me[min(top, key=p.get)])
    out = (f"tau {statistics.mean(taus):.3f}  A/BF median {statistics.median(abf):.3f} "
           f"mean {statistics.mean(abf):.3f} min {min(abf):.3f}")
    if rerank:
        out += (f" (first {rerank} re-ranked: median {statistics.median(abf_top):.3f} "
                f"mean {statistics.mean(abf_top):.3f} min {min(abf_top):.3f})")
    return out


def bad_input(why):
    """One line on stderr and exit 2, the project's code for bad input."""
    print(f"residual_gbm: {why}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fit")
    ap.add_argument("tests", nargs="*")
    ap.add_argument("--family", required=True)
    ap.add_argument("--dtype", default="fp16")
    ap.add_argument("--test-dtype", action="append", default=None,
                    help="the type of each TEST sweep's rows (default: --dtype)")
    ap.add_argument("--trees", default="50,100,300,600")
    ap.add_argument("--leaves", default="8,15,15,31")
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument("--rerank", type=int, default=0, metavar="N",
                    help="also score the pick among the model's first N launches, corrected")
    ap.add_argument("--select", default="target/release/origami-select")
    a = ap.parse_args()
    from sklearn.ensemble import HistGradientBoostingRegressor
    try:
        trees = [int(x) for x in a.trees.split(",")]
        leaves = [int(x) for x in a.leaves.split(",")]
    except ValueError:
        bad_input(f"--trees and --leaves take comma-separated integers, not '{a.trees}' / '{a.leaves}'")
    if len(trees) != len(leaves) or min(trees + leaves) < 2:
        bad_input("--trees and --leaves need as many values, each at least 2")
    missing = [p for p in [a.fit] + a.tests if not os.path.isfile(p)]
    if missing:
        bad_input(f"no sweep file {missing[0]}")
    if not os.access(a.select, os.X_OK):
        bad_input(f"--select {a.select}: no such program (cargo build --release)")
    tdt = a.test_dtype or [a.dtype] * len(a.tests)
    if len(tdt) != len(a.tests):
        bad_input("give --test-dtype once per TEST sweep, or not at all")
    fit = load(a.fit, a.family, a.dtype, a.select)
    tests = [(p, dt, load(p, a.family, dt, a.select)) for p, dt in zip(a.tests, tdt)]
    x, y = matrix(fit)
    print(f"# fit: {a.fit} ({a.dtype}, {len(fit)} shapes, {len(y)} launches)")
    print(f"model alone: fit {score(fit)}" + "".join(
        f" | {os.path.basename(os.path.dirname(p)) or p} {dt} {score(d)}" for p, dt, d in tests))
    for t, lv in zip(trees, leaves):
        m = HistGradientBoostingRegressor(max_iter=t, learning_rate=0.05, max_leaf_nodes=lv,
                                          min_samples_leaf=40, random_state=0).fit(x, y)
        print(f"{t} trees x {lv} leaves: fit {score(fit, m, a.rerank)}" + "".join(
            f" | {os.path.basename(os.path.dirname(p)) or p} {dt} {score(d, m, a.rerank)}"
            for p, dt, d in tests))
    if a.oracle:
        for p, dt, d in tests:
            xo, yo = matrix(d)
            m = HistGradientBoostingRegressor(max_iter=trees[-1], learning_rate=0.05,
                                              max_leaf_nodes=leaves[-1], min_samples_leaf=40,
                                              random_state=0).fit(xo, yo)
            print(f"oracle (fitted on {p} itself): {score(d, m)}")


if __name__ == "__main__":
    main()
