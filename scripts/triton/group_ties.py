#!/usr/bin/env python3
"""Phase-2 ties on measured data: for every config that the GROUP_SIZE_M pass of a
triton_sweep.py run (DIR/refine.csv) timed at several group sizes whose phase-2 footprint
costs tie at the minimum, compare the smallest and the largest tied group size with the
fastest of the tied ones. Usage: python3 scripts/triton/group_ties.py results/h200/triton
"""
import csv
import os
import statistics as st
import sys
from collections import defaultdict


def grouped(pid, gm, gn, g):
    width = g * gn
    first = (pid // width) * g
    gsz = min(gm - first, g)
    local = pid % width
    return first + local % gsz, local // gsz


def cost(gm, gn, active, bm, bn, g):
    rows, cols = set(), set()
    for p in range(min(active, gm * gn)):
        r, c = grouped(p, gm, gn, g)
        rows.add(r)
        cols.add(c)
    return len(rows) * bm + len(cols) * bn


def main():
    sms = 132
    by = defaultdict(dict)
    for r in csv.DictReader(open(os.path.join(sys.argv[1], "refine.csv"))):
        if r["status"] != "ok":
            continue
        key = tuple(int(r[c]) for c in ("M", "N", "K", "BLOCK_SIZE_M", "BLOCK_SIZE_N",
                                        "BLOCK_SIZE_K", "num_warps", "num_stages"))
        by[key][int(r["GROUP_SIZE_M"])] = float(r["measured_us"])
    small, large = [], []
    for (m, n, _k, bm, bn, _bk, _w, _s), t in by.items():
        gm, gn = -(-m // bm), -(-n // bn)
        costs = {g: cost(gm, gn, min(sms, gm * gn), bm, bn, g) for g in t}
        ties = [g for g in t if costs[g] == min(costs.values())]
        if len(ties) < 2:
            continue
        best = min(t[g] for g in ties)
        small.append(t[min(ties)] / best)
        large.append(t[max(ties)] / best)
    print(f"configs timed at >= 2 group sizes whose phase-2 costs tie: {len(small)}")
    for name, v in (("smallest", small), ("largest", large)):
        print(f"{name} tied GROUP_SIZE_M: time / fastest tied: median {st.median(v):.3f} "
              f"mean {st.mean(v):.3f} p90 {sorted(v)[int(0.9 * len(v))]:.3f} max {max(v):.3f}")


if __name__ == "__main__":
    main()
