#!/usr/bin/env python3
"""Inputs for an on-device check of a fitted hardware file's triton-family picks: per shape,
rank 1 = the pick of `origami-select --family triton` under TRITONBLAS_HW_PARAMS (run with
its phase-2 GROUP_SIZE_M), followed by the 8 fastest configs and the pick of an earlier
brute-force run (DIR/measurements.csv), so that one triton_sweep.py run times the new
pick and the former best side by side, on the same inputs and clocks.

Usage: TRITONBLAS_HW_PARAMS=calibrations/fitted/h200-triton-throughput.json \\
       python3 scripts/triton/validation_inputs.py results/h200/triton OUT_DIR [origami-select]
"""
import csv
import os
import subprocess
import sys
from collections import defaultdict

HEADER = ["rank", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps",
          "num_stages", "predicted_cycles", "predicted_us", "smem_bytes", "registers", "feasible",
          "reason"]


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_layout import open_csv  # noqa: E402


def main():
    src, out = sys.argv[1], sys.argv[2]
    select = sys.argv[3] if len(sys.argv) > 3 else "origami-select"
    os.makedirs(out, exist_ok=True)
    meas = defaultdict(list)
    with open_csv(os.path.join(src, "measurements.csv")) as f:
        for r in csv.DictReader(f):
            if r["role"] == "cublas" or r["status"] != "ok":
                continue
            meas[(int(r["M"]), int(r["N"]), int(r["K"]))].append(r)
    with open(os.path.join(src, "inputs", "shapes.csv")) as f:
        shapes = list(csv.DictReader(f))
    with open(os.path.join(out, "shapes.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(shapes[0].keys()))
        w.writeheader()
        w.writerows(shapes)
    for s in shapes:
        m, n, k = int(s["M"]), int(s["N"]), int(s["K"])
        pick = subprocess.run([select, str(m), str(n), str(k), "--family", "triton", "--gpu", "h200",
                               "--format", "csv", "--top", "1"], check=True, capture_output=True,
                              text=True).stdout.splitlines()
        rows = [dict(zip(HEADER, pick[1].split(",")))]
        old = sorted(meas[(m, n, k)], key=lambda r: float(r["measured_us"]))[:8]
        old += [r for r in meas[(m, n, k)] if r["role"] == "pick"]
        for r in old:
            rows.append({"rank": "", "BLOCK_SIZE_M": r["BLOCK_SIZE_M"], "BLOCK_SIZE_N": r["BLOCK_SIZE_N"],
                         "BLOCK_SIZE_K": r["BLOCK_SIZE_K"], "GROUP_SIZE_M": r["GROUP_SIZE_M"],
                         "num_warps": r["num_warps"], "num_stages": r["num_stages"],
                         "predicted_cycles": r["predicted_cycles"], "predicted_us": "",
                         "smem_bytes": r["shared_bytes"], "registers": r["n_regs"],
                         "feasible": "true", "reason": ""})
        with open(os.path.join(out, f"{m}_{n}_{k}.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=HEADER)
            w.writeheader()
            w.writerows(rows)
    print(f"{len(shapes)} shapes -> {out}")


if __name__ == "__main__":
    main()
