#!/usr/bin/env python3
"""The GPC merge shares of the triton-tma family's L2 term from Nsight Compute counters
(issue 11; docs/throughput.md, "GPC merge"). For every probe of the summaries
(`scripts/triton/narrow_n_summary.py` output: the L2 sectors the SMs read over the
tensor-descriptor boxes' bytes, f) it computes d_A and d_B, the distinct A and B boxes per
GPC over the boxes asked for, on the block placement of a topology document
(`origami-calibrate --only topology`), as `model::gpc_share::distinct_share` does (program p
of min(tiles, SMs) walks tiles p, p + programs, ... in Triton's grouped order; up to 4 rounds
sampled evenly), and fits 1 - f = [BM c_A (1 - d_A) + BN c_B (1 - d_B)] / (BM + BN) by least
squares (c_A, c_B: tp_l2_gpc_merge_a, _b). Counters, not GEMM times: nothing here is fitted
on a sweep.

Usage: python3 scripts/triton/gpc_merge_fit.py TOPOLOGY.json SUMMARY.txt [SUMMARY.txt ...]
Standard library only.
"""
import json
import math
import sys

ROUNDS = 4


def bad_input(why):
    """One line on stderr and exit 2, the project's code for bad input."""
    print(f"gpc_merge_fit: {why}", file=sys.stderr)
    sys.exit(2)


def topology(path):
    """Per launch size P (index P - 1), the GPC of each block."""
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        bad_input(f"{path}: {e}")
    m = next((m for m in doc.get("measurements", []) if m.get("name") == "sm_topology"), None)
    if m is None:
        bad_input(f"{path}: no sm_topology measurement")
    gpc = m["details"]["gpc_of_sm"]
    return [[gpc[s] for s in launch] for launch in m["details"]["block_sm"]]


def grouped_tile(pid, grid_m, grid_n, group_m):
    """Triton's grouped order (model::group::grouped_tile)."""
    width = group_m * grid_n
    first_m = (pid // width) * group_m
    gsz = min(grid_m - first_m, group_m)
    return first_m + (pid % width) % gsz, (pid % width) // gsz


def distinct_share(place, m, n, bm, bn, group_m):
    """(d_A, d_B) of one launch."""
    grid_m, grid_n = math.ceil(m / bm), math.ceil(n / bn)
    tiles = grid_m * grid_n
    programs = min(tiles, len(place))
    gpcs = place[programs - 1]
    rounds = math.ceil(tiles / programs)
    sampled = min(rounds, ROUNDS)
    rows_seen = cols_seen = ran = 0
    for i in range(sampled):
        r = i * rounds // sampled
        rows, cols = set(), set()
        for p, g in enumerate(gpcs):
            t = r * programs + p
            if t >= tiles:
                break
            tm, tn = grouped_tile(t, grid_m, grid_n, group_m)
            rows.add((g, tm))
            cols.add((g, tn))
            ran += 1
        rows_seen += len(rows)
        cols_seen += len(cols)
    return rows_seen / ran, cols_seen / ran


def fit_two(xs, ys):
    """Least squares of y = c_a x_a + c_b x_b through the origin: (c_a, c_b)."""
    saa = sum(a * a for a, _ in xs)
    sbb = sum(b * b for _, b in xs)
    sab = sum(a * b for a, b in xs)
    sya = sum(y * a for y, (a, _) in zip(ys, xs))
    syb = sum(y * b for y, (_, b) in zip(ys, xs))
    det = saa * sbb - sab * sab
    if abs(det) < 1e-12:
        bad_input("the probes do not tell A's share from B's")
    return (sya * sbb - syb * sab) / det, (syb * saa - sya * sab) / det


def probes(path):
    """(M, N, K, config, read/boxes) of a summary's rows."""
    out = []
    for line in open(path).read().splitlines()[1:]:
        f = line.split()
        if len(f) < 9:
            continue
        try:
            m, n, k = (int(x) for x in f[0].split("x"))
            out.append((m, n, k, f[1], float(f[8])))
        except ValueError:
            bad_input(f"{path}: cannot read '{line}'")
    return out


def main():
    if len(sys.argv) < 3:
        bad_input("usage: gpc_merge_fit.py TOPOLOGY.json SUMMARY.txt [SUMMARY.txt ...]")
    place = topology(sys.argv[1])
    rows = []
    for path in sys.argv[2:]:
        for m, n, k, cfg, f in probes(path):
            bm, bn, _ = (int(x) for x in cfg.split(",")[0].split("x"))
            g = int(cfg.split(",")[1][1:])
            da, db = distinct_share(place, m, n, bm, bn, g)
            x = (bm / (bm + bn) * (1 - da), bn / (bm + bn) * (1 - db))
            rows.append((f"{m}x{n}x{k}", cfg, f, da, db, x))
    if len(rows) < 2:
        bad_input("need at least two probes")
    ca, cb = fit_two([r[5] for r in rows], [1 - r[2] for r in rows])
    model = [1 - ca * x[0] - cb * x[1] for *_, x in rows]
    print(f"{'shape':16}{'config':30}{'read/boxes':>11}{'d_A':>7}{'d_B':>7}{'model':>7}")
    for (shape, cfg, f, da, db, _), p in zip(rows, model):
        print(f"{shape:16}{cfg:30}{f:11.2f}{da:7.2f}{db:7.2f}{p:7.2f}")
    err = [abs(r[2] - p) for r, p in zip(rows, model)]
    pairs = [(i, j) for i in range(len(rows)) for j in range(i + 1, len(rows))]
    conc = sum((rows[i][2] - rows[j][2]) * (model[i] - model[j]) > 0 for i, j in pairs)
    print(f"probes {len(rows)}  tp_l2_gpc_merge_a {ca:.3f}  tp_l2_gpc_merge_b {cb:.3f}  mean |error| "
          f"{sum(err) / len(err):.3f}  max {max(err):.3f}  pairs ordered as measured {conc}/{len(pairs)}")


if __name__ == "__main__":
    main()
