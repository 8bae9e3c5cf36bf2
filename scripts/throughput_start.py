#!/usr/bin/env python3
"""Starting values for `origami-bench refit` of the throughput model (docs/throughput.md).

The same formulas as src/model/throughput.rs, vectorized with numpy, fitted to a sweep's
configs.csv by Nelder-Mead on the log error with each shape's mean removed (ranking, not
absolute time; refit sets the absolute scale). Only the `--fit-set` rows are used; the
others are scored as held out. Prints a flat TRITONBLAS_HW_PARAMS object on stdout.

    python3 scripts/throughput_start.py results/h200/bench/configs.csv seed_shapes > start.json

Needs numpy, pandas and scipy (not used by CI). GPU numbers are the H200's (132 SMs, 228 KiB
shared memory per SM, calibrations/h200.json's L2 and DRAM figures). Each config's warp grid
is the origami family's (`origami-bench configs`; $ORIGAMI_BENCH, else `cargo run`).
"""
import io
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.stats import kendalltau

SMS, SMEM_SM, RES, L2_BYTES = 132, 233472, 1024, 62914560
L2BW, DRAMBW, COEF = 4719.031, 2320.216, 0.030680
NAMES = ["tp_mma_cycles", "tp_warp_mma_cycles", "tp_load_latency_cycles", "tp_iter_cycles",
         "tp_epilogue_cycles", "tp_block_setup_cycles", "tp_fragment_read_weight",
         "l2_bytes_per_cycle_per_sm", "tp_stage_exponent", "tp_prologue_loads",
         "tp_iter_latency_cycles"]
START = [3.0, 20.0, 1500.0, 200.0, 3000.0, 5000.0, 2.0, 35.0, 0.6, 1.5, 600.0]


CONFIG_KEY = ["block_m", "block_n", "block_k", "num_warps", "num_stages"]


def warp_grids():
    """The origami family's config listing: CONFIG_KEY columns, warps_m, warps_n."""
    bench = os.environ.get("ORIGAMI_BENCH", "cargo run --release --quiet --bin origami-bench --")
    out = subprocess.run(bench.split() + ["configs"], check=True, capture_output=True, text=True,
                         cwd=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    return pd.read_csv(io.StringIO(out.stdout))[CONFIG_KEY + ["warps_m", "warps_n"]]


def features(d, grids):
    d = d.merge(grids, on=CONFIG_KEY, how="left", validate="many_to_one")  # keeps d's row order
    if d.warps_m.isna().any():
        sys.exit("configs outside the origami family: " + str(d[d.warps_m.isna()][CONFIG_KEY]))
    f = {c: d[k].values.astype(float) for c, k in
         [("BM", "block_m"), ("BN", "block_n"), ("BK", "block_k"), ("w", "num_warps"),
          ("s", "num_stages"), ("g", "group_m"), ("M", "m"), ("N", "n"), ("K", "k")]}
    regs, smem = d.registers.values.astype(float), d.smem_bytes.values.astype(float)
    per_warp = np.ceil(regs * 32 / 256) * 256
    f["o"] = np.maximum(1, np.minimum.reduce([np.floor(SMEM_SM / (smem + RES)),
                                              np.floor(65536 / (per_warp * f["w"])),
                                              np.floor(64 / f["w"]), np.full_like(regs, 32)]))
    f["wm"], f["wn"] = d.warps_m.values.astype(float), d.warps_n.values.astype(float)
    f["gm"], f["gn"] = np.ceil(f["M"] / f["BM"]), np.ceil(f["N"] / f["BN"])
    f["tiles"], f["nk"] = f["gm"] * f["gn"], np.ceil(f["K"] / f["BK"])
    return f


def predict(f, th):
    a, b, lat, ovh, epi, setup, frw, l2sm, sexp, fill, ovh2 = th
    BM, BN, BK, w, s, o = f["BM"], f["BN"], f["BK"], f["w"], f["s"], f["o"]
    nmma = BM * BN * BK / 2048.0
    busiest = np.ceil(f["tiles"] / SMS)
    load = (BM + BN) * BK * 2
    frag = (BM * f["wn"] + BN * f["wm"]) * BK * 2

    def rounds(c):
        tensor = c * (nmma * a + ovh)
        smem = c * (frw * frag + load) / 128.0
        l2_one = load / l2sm
        warp = nmma / w * b + ovh2
        pipe = (lat + l2_one) / np.maximum(s - 1, 1) ** sexp
        it = np.maximum.reduce([tensor, smem, c * l2_one, warp, pipe])
        return f["nk"] * it + fill * lat + c * epi * BM * BN / 4096.0 + setup

    full = np.floor(busiest / o)
    rest = busiest - full * o
    sm = full * rounds(o) + np.where(rest > 0, rounds(np.maximum(rest, 1)), 0)
    resident = np.maximum(1, np.minimum(f["tiles"], SMS * o))
    gm = np.minimum(np.minimum(f["g"], f["gm"]), resident)
    gn = np.minimum(f["gn"], np.ceil(resident / gm))
    ab = (f["M"] + f["N"]) * f["K"] * 2
    per_round = (gm * BM + gn * BN) * f["K"] * 2
    inputs = np.where(ab < L2_BYTES, ab, np.maximum(ab, np.ceil(f["tiles"] / resident) * per_round))
    active = np.minimum(f["tiles"], SMS)
    dram = (inputs + f["M"] * f["N"] * 2) / (DRAMBW * np.minimum(1, COEF * active))
    return np.maximum(sm, dram)


def score(d, f, th):
    d = d.assign(pred=predict(f, th))
    taus, abf = [], []
    for _, g in d.groupby(["m", "n", "k"]):
        taus.append(kendalltau(g.pred, g.measured_ms).statistic)
        abf.append(g.measured_ms.min() / g.loc[g.pred.idxmin()].measured_ms)
    return f"tau {np.mean(taus):.3f}, A/BF median {np.median(abf):.3f} min {np.min(abf):.3f}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    d = pd.read_csv(sys.argv[1])
    d = d[(d.passed == 1) & (d.dtype == "fp16")]
    fit, held = d[d.set == sys.argv[2]], d[d.set != sys.argv[2]]
    if fit.empty:
        sys.exit(f"no rows of set {sys.argv[2]}")
    grids = warp_grids()
    ff = features(fit, grids)
    key = fit.m.astype(str) + "_" + fit.n.astype(str) + "_" + fit.k.astype(str)
    logm = np.log(fit.measured_ms.values)

    def loss(t):
        r = pd.Series(np.log(predict(ff, np.abs(t))) - logm)
        return float(((r - r.groupby(key.values).transform("mean")) ** 2).mean())

    th = np.array(START)
    for _ in range(2):
        th = np.abs(minimize(loss, th, method="Nelder-Mead",
                             options=dict(maxiter=6000, xatol=1e-4, fatol=1e-8, adaptive=True)).x)
    print("fit:", score(fit, ff, th), file=sys.stderr)
    if not held.empty:
        print("held out:", score(held, features(held, grids), th), file=sys.stderr)
    c = dict(zip(NAMES, (float(x) for x in th)))
    c["tp_l2_sm_share"] = c.pop("l2_bytes_per_cycle_per_sm") / (L2BW / SMS)
    c["throughput_model"] = 1
    print(json.dumps({"constants": c}, indent=1))


if __name__ == "__main__":
    main()
