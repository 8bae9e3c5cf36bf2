#!/usr/bin/env python3
"""Issue 14: do the calibrated files of two GPUs lead to different picks, each the better on
its own GPU? The calibration-only tier's triton pick for every shape timed on both the
H100 (results/h100/triton-auto/classic2, results/h100/triton-two-gpu/run2) and the H200
(results/h200/triton-table/fit, results/h200/triton-two-gpu/run and run2: the shapes where
the two calibrations pick apart, results/h200/triton-two-gpu/README.md), from each GPU's
measured calibration (or H100_CALIBRATION / H200_CALIBRATION), looked up in both GPUs' sweeps (A/BF against the sweep's fastest
launch at any GROUP_SIZE_M). A shape in two sweeps of one GPU is scored on the later one
(each A/BF stays within one run); the earlier one's scores are printed as the repeat. Usage (CPU, repository root, after
`cargo build --release`): python3 scripts/calib_only/two_gpu_picks.py"""
import collections
import csv
import gzip
import io
import os
import subprocess

# per GPU: its measured calibration (H100_CALIBRATION / H200_CALIBRATION override them: the
# full calibrations with the row rates, results/h*/calibrate-rows-2026-11-27.json) and its
# sweeps, oldest first
GPUS = {
    "h100": (os.environ.get("H100_CALIBRATION", "results/h100/calibrate-2026-11-23.json"),
             ["results/h100/triton-auto/classic2/configs.csv.gz",
              "results/h100/triton-two-gpu/run2/configs.csv.gz",
              "results/h100/triton-two-gpu/run3/configs.csv.gz"]),
    "h200": (os.environ.get("H200_CALIBRATION", "calibrations/h200.json"),
             ["results/h200/triton-table/fit/configs.csv",
              "results/h200/triton-two-gpu/run/configs.csv.gz",
              "results/h200/triton-two-gpu/run2/configs.csv.gz",
              "results/h200/triton-two-gpu/run3/configs.csv.gz"]),
}


def rows(path):
    raw = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    return csv.DictReader(io.StringIO(raw.read()))


def times(path):
    t = collections.defaultdict(dict)
    for r in rows(path):
        if r["dtype"] != "fp16" or r.get("passed", "1") != "1" or not r.get("measured_ms"):
            continue
        key = (r["block_m"], r["block_n"], r["block_k"], r["num_warps"], r["num_stages"])
        shape = (r["m"], r["n"], r["k"])
        t[shape][key] = min(float(r["measured_ms"]), t[shape].get(key, float("inf")))
    return t


def sweeps_times(paths):
    """A shape's times from the last sweep that timed it, and the earlier runs' times of the
    shapes timed again (shape -> list of older time tables)."""
    latest, older = {}, collections.defaultdict(list)
    for path in paths:
        for shape, t in times(path).items():
            if shape in latest:
                older[shape].append(latest[shape])
            latest[shape] = t
    return latest, older


def pick(shape, calibration):
    out = subprocess.run(
        ["target/release/origami-select", *shape, "--family", "triton", "--calibration-only",
         "--format", "csv", "--top", "1"],
        capture_output=True, text=True, check=True,
        env={**os.environ, "TRITONBLAS_HW_PARAMS": calibration}).stdout
    r = next(csv.DictReader(out.splitlines()))
    return tuple(r[c] for c in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "num_warps", "num_stages"))


def main():
    both = {g: sweeps_times(paths) for g, (_, paths) in GPUS.items()}
    measured = {g: latest for g, (latest, _) in both.items()}
    for g, (_, older) in both.items():
        for shape, runs in older.items():
            p = {by: pick(shape, cal) for by, (cal, _) in GPUS.items()}
            for run in runs:
                best = min(run.values())
                print(f"{'x'.join(shape):>16}  repeat on {g}, the earlier run: " + "; ".join(
                    f"{by}'s pick {best / run[p[by]]:.3f}" if p[by] in run else f"{by}'s pick untimed"
                    for by in GPUS))
    shared = sorted(set(measured["h100"]) & set(measured["h200"]), key=lambda s: tuple(map(int, s)))
    differ = 0
    for shape in shared:
        picks = {g: pick(shape, cal) for g, (cal, _) in GPUS.items()}
        cells = []
        for on in GPUS:
            best = min(measured[on][shape].values())
            for by in GPUS:
                t = measured[on][shape].get(picks[by])
                cells.append(f"{by}'s pick on {on}: " + (f"{best / t:.3f}" if t else "untimed"))
        same = picks["h100"] == picks["h200"]
        differ += not same
        c = picks["h100"]
        print(f"{'x'.join(shape):>16}  {'same pick' if same else 'different picks'} "
              f"({c[0]}x{c[1]}x{c[2]},w{c[3]},s{c[4]}{'' if same else ' / ' + str(picks['h200'])}); "
              + "; ".join(cells))
    print(f"{len(shared)} shapes timed on both GPUs, {differ} with different picks")
    # every shape of the two lists: where the calibrations pick differently, the picks
    # looked up in whichever sweep timed the shape
    listed = []
    for name in ("data/seed_shapes.csv", "data/llm_shapes.csv"):
        with open(name) as f:
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                shape = (r["M"], r["N"], r["K"])
                if shape not in listed:
                    listed.append(shape)
    apart = 0
    for shape in listed:
        picks = {g: pick(shape, cal) for g, (cal, _) in GPUS.items()}
        if picks["h100"] == picks["h200"]:
            continue
        apart += 1
        cells = []
        for on in GPUS:
            if shape not in measured[on]:
                cells.append(f"not timed on {on}")
                continue
            best = min(measured[on][shape].values())
            for by in GPUS:
                t = measured[on][shape].get(picks[by])
                cells.append(f"{by}'s pick on {on}: " + (f"{best / t:.3f}" if t else "untimed"))
        print(f"{'x'.join(shape):>16}  h100 {picks['h100']} / h200 {picks['h200']}: " + "; ".join(cells))
    print(f"{len(listed)} shapes of the seed and LLM lists, {apart} with different picks")


if __name__ == "__main__":
    main()
