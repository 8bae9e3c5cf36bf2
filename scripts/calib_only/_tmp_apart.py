#!/usr/bin/env python3
"""Issue 14: where do the calibrated files of the H100 and the H200 lead the
calibration-only tier to different triton picks? Ranks a grid of shapes (M in 1..16384,
N in 512..57344, K in 512..28672; 672 shapes) with each GPU's calibration and prints the
shapes whose picks differ; results/h200/triton-two-gpu/inputs2 holds seven of them (chosen
to span decode, skinny and large shapes), swept on both GPUs and scored by
scripts/calib_only/two_gpu_picks.py. Usage (CPU, repository root, after
`cargo build --release`): python3 scripts/calib_only/picks_apart.py"""
import csv
import itertools
import os
import subprocess
import tempfile

CALIBRATIONS = {
    "h100": "results/h100/calibrate-rows-2026-11-27.json",
    "h200": "results/h200/calibrate-rows-2026-11-27.json",
}
MS = [1, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
NS = [512, 1024, 2048, 4096, 8192, 14336, 28672, 57344]
KS = [512, 1024, 2048, 4096, 8192, 14336, 28672]
KEYS = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "num_warps", "num_stages")


def picks(shapes_csv, calibration):
    out = subprocess.run(
        ["target/release/origami-select", "--shapes", shapes_csv, "--family", "triton",
         "--calibration-only", "--format", "csv"],
        capture_output=True, text=True, check=True,
        env={**os.environ, "TRITONBLAS_HW_PARAMS": calibration}).stdout
    return {(r["M"], r["N"], r["K"]): tuple(r[k] for k in KEYS) for r in csv.DictReader(out.splitlines())}


def main():
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("M,N,K\n")
        for m, n, k in itertools.product(MS, NS, KS):
            f.write(f"{m},{n},{k}\n")
    try:
        by = {g: picks(f.name, cal) for g, cal in CALIBRATIONS.items()}
    finally:
        os.unlink(f.name)
    apart = [s for s in by["h100"] if by["h100"][s] != by["h200"].get(s)]
    for s in apart:
        a, b = by["h100"][s], by["h200"][s]
        print(f"{'x'.join(s):>16}  h100 {a[0]}x{a[1]}x{a[2]},w{a[3]},s{a[4]}"
              f"  h200 {b[0]}x{b[1]}x{b[2]},w{b[3]},s{b[4]}")
    print(f"{len(by['h100'])} shapes, {len(apart)} with different picks")


if __name__ == "__main__":
    main()
