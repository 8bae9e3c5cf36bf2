#!/usr/bin/env python3
"""Starting values for `origami-bench refit` of the throughput model (docs/throughput.md).

Least squares of the throughput model's time to a sweep's measured configs (configs.csv of
`origami-bench sweep`, the origami family, fp16): Nelder-Mead on the log error with each
shape's mean removed (ranking, not absolute time; refit sets the absolute scale). Only the
rows of the fit set are used. Prints a flat TRITONBLAS_HW_PARAMS object on stdout.

    python3 scripts/throughput_start.py results/h200/bench/configs.csv seed_shapes > start.json

The GPU's numbers and the constant names come from the binaries, not from this file:
`origami-select --describe --gpu GPU --family origami --format json` gives the GPU
description (SMs, L2 size, shared memory, registers), the L2 and DRAM rates and the DRAM
coefficient as the model resolves them (`--hw FILE` is applied as TRITONBLAS_HW_PARAMS, e.g.
a calibration of the device), and the table of model constants, which every name this fit
writes must be in. The result is read back through `origami-select --format json` and
scored by `origami-bench refit --rounds 0` (the Rust model itself) on the fit set and the
other sets.

Why a copy of the model's formula remains here: Nelder-Mead evaluates it ~10^4 times over
thousands of configs; through the binary that is one process per shape and evaluation
(~40 ms), hours instead of seconds. So `predict` below is a numpy copy of
crates/origami-core/src/model/throughput.rs for the origami family with the constants this fit moves (the
others at their defaults: no p-norm, no wgmma, no fill transfer), and it needs two rules it
does not own: blocks per SM (crates/origami-core/src/model/occupancy.rs), and the origami kernel's warp grid,
which it reads from its owner (`origami-bench configs`, the origami family's listing). The
refit score at the end is the check that the copy still ranks like the Rust model.

Needs numpy, pandas and scipy (not used by CI).
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd
from scipy.optimize import minimize

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# The constants this fit moves, in the order of `predict`'s parameter vector, with first
# guesses (cycles or ratios; not properties of a GPU). The L2 share is fitted in bytes per
# cycle per SM and written as the model's fraction of the GPU's L2 rate per SM.
FITTED = [("tp_mma_cycles", 3.0), ("tp_warp_mma_cycles", 20.0),
          ("tp_load_latency_cycles", 1500.0), ("tp_iter_cycles", 200.0),
          ("tp_epilogue_cycles", 3000.0), ("tp_block_setup_cycles", 5000.0),
          ("tp_fragment_read_weight", 2.0), ("l2_bytes_per_cycle_per_sm", 35.0),
          ("tp_stage_exponent", 0.6), ("tp_prologue_loads", 1.5),
          ("tp_iter_latency_cycles", 600.0)]
# Defaults of ModelConstants that the copy below uses as plain numbers.
SMEM_BYTES_PER_CYCLE = 128.0   # tp_smem_bytes_per_cycle
MMA_ATOM = (16, 8, 16)         # m16n8k16, the origami kernel's mma.sync
ELEMENT_BYTES = 2              # fp16
# Occupancy rules of crates/origami-core/src/model/occupancy.rs (CUDA's per-architecture limits).
RESERVED_SMEM_PER_BLOCK = 1024
REGISTER_ALLOCATION_UNIT = 256
MAX_WARPS_BLOCKS = {(7, 5): (32, 16), (8, 6): (48, 16), (8, 7): (48, 16), (8, 9): (48, 24)}


def binary(name, path):
    """The command that runs one of this project's binaries."""
    if path:
        return [path]
    built = os.path.join(ROOT, "target", "release", name)
    if os.path.exists(built):
        return [built]
    return ["cargo", "run", "--release", "-q", "--manifest-path",
            os.path.join(ROOT, "Cargo.toml"), "--bin", name, "--"]


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def selection_json(select, gpu, shape, override=None):
    env = dict(os.environ, ORIGAMI_NO_GPU="1")
    env.pop("TRITONBLAS_HW_PARAMS", None)
    if override:
        env["TRITONBLAS_HW_PARAMS"] = override
    m, n, k = (str(int(x)) for x in shape)
    return json.loads(run(select + [m, n, k, "--gpu", gpu, "--family", "origami",
                                    "--format", "json"], env))


def describe(select, gpu, hw_file):
    """`origami-select --describe --format json`: the GPU description, the parameters and
    every model constant as the model resolves them (`hw_file` as TRITONBLAS_HW_PARAMS)."""
    env = dict(os.environ, ORIGAMI_NO_GPU="1")
    env.pop("TRITONBLAS_HW_PARAMS", None)
    if hw_file:
        env["TRITONBLAS_HW_PARAMS"] = hw_file
    return json.loads(run(select + ["--describe", "--gpu", gpu, "--family", "origami",
                                    "--format", "json"], env))


def hardware(select, gpu, hw_file):
    """The GPU's numbers, all from origami-select --describe."""
    j = describe(select, gpu, hw_file)
    desc = j["gpu"]
    known = {c["name"] for c in j["constants"]}
    unknown = [n for n, _ in FITTED if n not in known and n != "l2_bytes_per_cycle_per_sm"]
    if unknown:
        sys.exit(f"not constants of the model: {', '.join(unknown)}")
    warps, blocks = MAX_WARPS_BLOCKS.get(tuple(desc["compute_capability"]),
                                         (48, 32) if desc["compute_capability"][0] == 12
                                         else (64, 32))
    p = {name: v["value"] for name, v in j["params"].items()}
    return {
        "sms": desc["sm_count"],
        "l2_rate": p["l2_perf_ratio"], "dram_rate": p["dram_perf_ratio"],
        "dram_coeff": p["dram_bw_coeff"],
        "l2_bytes": desc["l2_bytes"],
        "smem_per_sm": desc["smem_per_block_optin_bytes"] + RESERVED_SMEM_PER_BLOCK,
        "registers_per_sm": desc["registers_per_sm"],
        "max_warps": warps, "max_blocks": blocks,
        "source": j["gpu_source"],
    }


CONFIG_KEY = ["block_m", "block_n", "block_k", "num_warps", "num_stages"]


def warp_grids(bench):
    """The origami family's config listing: CONFIG_KEY columns, warps_m, warps_n."""
    out = run(bench + ["configs"])
    return pd.read_csv(io.StringIO(out))[CONFIG_KEY + ["warps_m", "warps_n"]]


def features(d, hw, grids):
    d = d.merge(grids, on=CONFIG_KEY, how="left", validate="many_to_one")  # keeps d's row order
    if d.warps_m.isna().any():
        sys.exit("configs outside the origami family: " + str(d[d.warps_m.isna()][CONFIG_KEY]))
    f = {c: d[k].values.astype(float) for c, k in
         [("BM", "block_m"), ("BN", "block_n"), ("BK", "block_k"), ("w", "num_warps"),
          ("s", "num_stages"), ("g", "group_m"), ("M", "m"), ("N", "n"), ("K", "k")]}
    regs, smem = d.registers.values.astype(float), d.smem_bytes.values.astype(float)
    per_warp = np.ceil(regs * 32 / REGISTER_ALLOCATION_UNIT) * REGISTER_ALLOCATION_UNIT
    f["o"] = np.maximum(1, np.minimum.reduce([
        np.floor(hw["smem_per_sm"] / (smem + RESERVED_SMEM_PER_BLOCK)),
        np.floor(hw["registers_per_sm"] / (per_warp * f["w"])),
        np.floor(hw["max_warps"] / f["w"]), np.full_like(regs, hw["max_blocks"])]))
    f["wm"], f["wn"] = d.warps_m.values.astype(float), d.warps_n.values.astype(float)
    f["gm"], f["gn"] = np.ceil(f["M"] / f["BM"]), np.ceil(f["N"] / f["BN"])
    f["tiles"], f["nk"] = f["gm"] * f["gn"], np.ceil(f["K"] / f["BK"])
    return f


def predict(f, th, hw):
    a, b, lat, ovh, epi, setup, frw, l2sm, sexp, fill, ovh2 = th
    BM, BN, BK, w, s, o = f["BM"], f["BN"], f["BK"], f["w"], f["s"], f["o"]
    nmma = BM * BN * BK / float(np.prod(MMA_ATOM))
    busiest = np.ceil(f["tiles"] / hw["sms"])
    load = (BM + BN) * BK * ELEMENT_BYTES
    frag = (BM * f["wn"] + BN * f["wm"]) * BK * ELEMENT_BYTES

    def rounds(c):
        tensor = c * (nmma * a + ovh)
        smem = c * (frw * frag + load) / SMEM_BYTES_PER_CYCLE
        l2_one = load / l2sm
        warp = nmma / w * b + ovh2
        pipe = (lat + l2_one) / np.maximum(s - 1, 1) ** sexp
        it = np.maximum.reduce([tensor, smem, c * l2_one, warp, pipe])
        return f["nk"] * it + fill * lat + c * epi * BM * BN / 4096.0 + setup

    full = np.floor(busiest / o)
    rest = busiest - full * o
    sm = full * rounds(o) + np.where(rest > 0, rounds(np.maximum(rest, 1)), 0)
    resident = np.maximum(1, np.minimum(f["tiles"], hw["sms"] * o))
    gm = np.minimum(np.minimum(f["g"], f["gm"]), resident)
    gn = np.minimum(f["gn"], np.ceil(resident / gm))
    ab = (f["M"] + f["N"]) * f["K"] * ELEMENT_BYTES
    per_round = (gm * BM + gn * BN) * f["K"] * ELEMENT_BYTES
    inputs = np.where(ab < hw["l2_bytes"], ab,
                      np.maximum(ab, np.ceil(f["tiles"] / resident) * per_round))
    active = np.minimum(f["tiles"], hw["sms"])
    dram = (inputs + f["M"] * f["N"] * ELEMENT_BYTES) / (
        hw["dram_rate"] * np.minimum(1, hw["dram_coeff"] * active))
    return np.maximum(sm, dram)


def fit(rows, hw, grids):
    ff = features(rows, hw, grids)
    key = rows.m.astype(str) + "_" + rows.n.astype(str) + "_" + rows.k.astype(str)
    logm = np.log(rows.measured_ms.values)

    def loss(t):
        r = pd.Series(np.log(predict(ff, np.abs(t), hw)) - logm)
        return float(((r - r.groupby(key.values).transform("mean")) ** 2).mean())

    th = np.array([v for _, v in FITTED])
    for _ in range(2):
        th = np.abs(minimize(loss, th, method="Nelder-Mead",
                             options=dict(maxiter=6000, xatol=1e-4, fatol=1e-8,
                                          adaptive=True)).x)
    c = dict(zip((n for n, _ in FITTED), (float(x) for x in th)))
    c["tp_l2_sm_share"] = c.pop("l2_bytes_per_cycle_per_sm") / (hw["l2_rate"] / hw["sms"])
    c["throughput_model"] = 1
    return {"constants": c}


def check_with_binaries(result, a, select, shape):
    """Read the result back through origami-select (every name must be a model constant)
    and score it with origami-bench refit --rounds 0 (the Rust model) on stderr."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(result, f)
    try:
        back = selection_json(select, a.gpu, shape, f.name)["constants"]
        missing = [n for n in result["constants"] if back.get(n, {}).get("tier") != "file"]
        if missing:
            sys.exit(f"origami-select did not take {', '.join(missing)} from the result")
        env = dict(os.environ, TRITONBLAS_HW_PARAMS=f.name, ORIGAMI_NO_GPU="1")
        out = run(binary("origami-bench", a.bench) + [
            "refit", "--out", os.path.dirname(os.path.abspath(a.configs)) or ".",
            "--fit-set", a.fit_set, "--gpu", a.gpu, "--rounds", "0"], env)
        for line in out.splitlines():
            if ", before" in line:
                print("origami-bench refit --rounds 0:", line, file=sys.stderr)
    finally:
        os.unlink(f.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("configs", help="configs.csv of an origami-bench sweep (origami family)")
    ap.add_argument("fit_set", help="the set (shape-list stem) to fit on, e.g. seed_shapes")
    ap.add_argument("--gpu", default="h200", help="preset the sweep ran on (default h200)")
    ap.add_argument("--hw", help="a calibration file (as TRITONBLAS_HW_PARAMS) over the preset")
    ap.add_argument("--select", help="origami-select binary (default: target/release, "
                    "else cargo run --release)")
    ap.add_argument("--bench", help="origami-bench binary (same default)")
    a = ap.parse_args()
    d = pd.read_csv(a.configs)
    d = d[(d.passed == 1) & (d.dtype == "fp16")]
    rows = d[d.set == a.fit_set]
    if rows.empty:
        sys.exit(f"no passed fp16 rows of set {a.fit_set} in {a.configs}")
    select = binary("origami-select", a.select)
    shape = rows.iloc[0][["m", "n", "k"]]
    hw = hardware(select, a.gpu, a.hw)
    print(f"GPU numbers: {hw['source']} via origami-select --describe", file=sys.stderr)
    grids = warp_grids(binary("origami-bench", a.bench))
    result = fit(rows, hw, grids)
    check_with_binaries(result, a, select, shape)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
