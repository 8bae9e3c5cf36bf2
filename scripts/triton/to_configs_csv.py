#!/usr/bin/env python3
"""Convert a triton_sweep.py run (DIR/measurements.csv) into the configs.csv layout of
origami-bench, so that `origami-bench refit --family triton` can score and refit the
model on Triton's measurements without a GPU. Shapes of data/seed_shapes.csv get the set
`seed_shapes`, the others `llm_shapes`. Only rows that ran and passed (status ok) count;
the cuBLAS rows are dropped.

Usage: python3 scripts/triton/to_configs_csv.py results/h200/triton OUT_DIR
"""
import csv
import os
import sys

COLS = ["set", "m", "n", "k", "dtype", "config", "block_m", "block_n", "block_k", "group_m",
        "num_warps", "num_stages", "is_pick", "model_rank", "predicted_cycles", "predicted_us",
        "measured_ms", "cov", "samples", "reps", "screened", "tflops", "registers",
        "local_bytes", "spills", "smem_bytes", "rel_err", "passed", "note"]


def main():
    src, out = sys.argv[1], sys.argv[2]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    seed = set()
    with open(os.path.join(root, "data", "seed_shapes.csv")) as f:
        for r in csv.DictReader(f):
            seed.add((int(r["M"]), int(r["N"]), int(r["K"])))
    os.makedirs(out, exist_ok=True)
    n = 0
    with open(os.path.join(src, "measurements.csv")) as f, open(os.path.join(out, "configs.csv"), "w", newline="") as g:
        w = csv.DictWriter(g, fieldnames=COLS)
        w.writeheader()
        for r in csv.DictReader(f):
            if r["role"] == "cublas" or r["status"] != "ok":
                continue
            m, nn, k = int(r["M"]), int(r["N"]), int(r["K"])
            cfg = "%sx%sx%s,g%s,w%s,s%s" % (r["BLOCK_SIZE_M"], r["BLOCK_SIZE_N"], r["BLOCK_SIZE_K"],
                                          r["GROUP_SIZE_M"], r["num_warps"], r["num_stages"])
            w.writerow({
                "set": "seed_shapes" if (m, nn, k) in seed else "llm_shapes",
                "m": m, "n": nn, "k": k, "dtype": "fp16", "config": cfg,
                "block_m": r["BLOCK_SIZE_M"], "block_n": r["BLOCK_SIZE_N"], "block_k": r["BLOCK_SIZE_K"],
                "group_m": r["GROUP_SIZE_M"], "num_warps": r["num_warps"], "num_stages": r["num_stages"],
                "is_pick": 1 if r["role"] == "pick" else 0, "model_rank": r["rank"] or 0,
                "predicted_cycles": r["predicted_cycles"], "predicted_us": 0,
                "measured_ms": float(r["measured_us"]) / 1000.0, "cov": "", "samples": 1, "reps": 1,
                "screened": 0, "tflops": r["tflops"], "registers": r["n_regs"], "local_bytes": "",
                "spills": "", "smem_bytes": r["shared_bytes"] or 0, "rel_err": r["rel_err"],
                "passed": 1, "note": "triton_sweep.py",
            })
            n += 1
    print("%d rows -> %s" % (n, os.path.join(out, "configs.csv")))


if __name__ == "__main__":
    main()
