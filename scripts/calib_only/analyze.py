#!/usr/bin/env python3
"""Where a ranking loses: per shape the pick against the best measured launch, and the
log error (measured / predicted, each shape's median removed) by config feature.

    python3 scripts/calib_only/analyze.py PREDICTIONS.csv [--shapes]

PREDICTIONS.csv: `origami-bench refit --predictions` output.
"""
import csv, math, re, statistics as st, sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1])))
show_shapes = "--shapes" in sys.argv
by = defaultdict(list)
for r in rows:
    r["p"] = float(r["predicted_us"]); r["t"] = float(r["measured_us"])
    bm, bn, bk = map(int, r["config"].split(",")[0].split("x"))
    w = int(re.search(r",w(\d+)", r["config"]).group(1)); s = int(re.search(r",s(\d+)", r["config"]).group(1))
    r.update(bm=bm, bn=bn, bk=bk, w=w, s=s)
    by[(r["set"], r["m"], r["n"], r["k"])].append(r)

feat = defaultdict(list)
print(f"{'shape':>22s} {'A/BF':>6s} {'pick':>22s} {'pred':>8s} {'meas':>8s} {'best':>22s} {'pred':>8s} {'meas':>8s} {'meas/pred med':>13s}")
for key, rs in by.items():
    best = min(rs, key=lambda r: r["t"])
    pick = [r for r in rs if r["picked"] == "true"]
    pick = pick[0] if pick else None
    ratios = [math.log(r["t"] / r["p"]) for r in rs if r["p"] > 0]
    med = st.median(ratios)
    for r in rs:
        if r["p"] <= 0:
            continue
        e = math.log(r["t"] / r["p"]) - med
        for name, val in (("BM", r["bm"]), ("BN", r["bn"]), ("BK", r["bk"]), ("warps", r["w"]), ("stages", r["s"])):
            feat[(name, val)].append(e)
    if show_shapes:
        shape = "x".join(key[1:])
        if pick:
            print(f"{shape:>22s} {best['t']/pick['t']*100:5.1f}% {pick['config']:>22s} {pick['p']:8.2f} {pick['t']:8.2f} {best['config']:>22s} {best['p']:8.2f} {best['t']:8.2f} {math.exp(med):13.3f}")
print("\nmean log error (measured/predicted, shape median removed) by feature; > 0: the model is too optimistic")
for name in ("BM", "BN", "BK", "warps", "stages"):
    items = sorted((v, es) for (n, v), es in feat.items() if n == name)
    print(f"  {name:7s}" + "  ".join(f"{v}:{st.mean(es):+.2f}(n{len(es)})" for v, es in items))
