#!/usr/bin/env python3
"""Turn scripts/time_cublas.py output into `origami-predict model` input.

cuBLAS sees torch's row-major C[M,N] = A[M,K] B[K,N] as the column-major GEMM
C^T[N,M] = B^T A^T, and its kernel tile and cluster names are in that orientation. The
model rows are written in the kernel's orientation (M' = N, N' = M, tile and cluster as
the kernel name gives them) so that the MMA M the model sees is the kernel's.
Rows whose kernel name gave no tile are dropped (reported on stderr).

Usage: python3 scripts/cublas_to_model_input.py IN.csv OUT.csv
"""
import csv
import sys


def swap(pair):
    a, b = pair.split("x")
    return f"{b}x{a}"


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        if not r["tile"]:
            print(f"dropped (no tile parsed): {r}", file=sys.stderr)
            continue
        kernels = r["kernels"].split("|")
        out.append({
            "M": r["N"], "N": r["M"], "K": r["K"],
            "dtype": r["dtype"], "out_dtype": r["out_dtype"],
            "tile": swap(r["tile"]), "cluster": swap(r["cluster"]),
            "measured_us": r["measured_us"], "cov": r["cov"],
            "split_k": "yes" if any("splitK" in k for k in kernels) else "no",
            "torch_M": r["M"], "torch_N": r["N"],
        })
    with open(dst, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
        w.writeheader()
        w.writerows(out)
    print(f"{len(out)} rows -> {dst}", file=sys.stderr)


if __name__ == "__main__":
    main()
