#!/usr/bin/env python3
"""Run the persistent TMA matmul (python/origami_gemm/kernels/triton_tma.py) on a CUDA device:
for each config of a listing and each shape, launch it into a NaN-poisoned output, compare
with torch's fp32 product (relative Frobenius error), and time it (median of CUDA-event
timed launches). Also the configs the compile table (data/triton_tma_sm90.csv) marks as
out of resources: their launch must fail, not run.

Usage (device): python3 scripts/triton/tma_device_check.py OUT.csv [--dtype fp16 bf16]
                [--reps 20]
"""
import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))

# Tiles x switches that cover every switch setting and each warp count, shapes with edges
TILES = [(64, 64, 32, 4, 2), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (128, 128, 64, 4, 4),
         (256, 128, 64, 8, 3), (64, 128, 128, 4, 3)]
SHAPES = [(4096, 4096, 4096), (1000, 1336, 520), (127, 8192, 1024)]
TOO_BIG = [(128, 256, 64, 8, 4, False)]   # 262176 B of shared memory without the subtile


def main():
    import torch
    from origami_gemm.kernels.triton_tma import TmaConfig, matmul
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--dtype", nargs="+", default=["fp16", "bf16"])
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    dev = torch.device("cuda")
    print(torch.cuda.get_device_name(dev), "torch", torch.__version__, flush=True)
    f = open(a.out, "w", newline="")
    wr = None
    for dname in a.dtype:
        dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[dname]
        for M, N, K in SHAPES:
            A = torch.randn(M, K, device=dev).to(dt)
            B = torch.randn(N, K, device=dev).to(dt)
            ref = A.float() @ B.float().T
            cfgs = [TmaConfig(bm, bn, bk, 8, w, s, ws, fl, st)
                    for bm, bn, bk, w, s in TILES
                    for ws in (False, True) for fl in (False, True) for st in (False, True)]
            cfgs += [TmaConfig(bm, bn, bk, 8, w, s, EPILOGUE_SUBTILE=st)
                     for bm, bn, bk, w, s, st in TOO_BIG]
            for c in cfgs:
                row = {"dtype": dname, "M": M, "N": N, "K": K, "config": c.key()}
                try:
                    torch.cuda.synchronize()
                    out = matmul(A, B, c)
                    torch.cuda.synchronize()
                    err = ((out.float() - ref).norm() / ref.norm()).item()
                    ts = []
                    for _ in range(a.reps):
                        e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
                        e0.record()
                        matmul(A, B, c)
                        e1.record()
                        e1.synchronize()
                        ts.append(e0.elapsed_time(e1) * 1e3)
                    us = sorted(ts)[len(ts) // 2]
                    row.update(status="ok" if err < 1e-2 else "wrong", rel_err=f"{err:.2e}",
                               us=round(us, 1), tflops=round(2 * M * N * K / us / 1e6, 1),
                               error="")
                except Exception as e:  # noqa: BLE001
                    row.update(status="launch_error", rel_err="", us="", tflops="",
                               error=f"{type(e).__name__}: {str(e)[:120]}".replace("\n", " "))
                if wr is None:
                    wr = csv.DictWriter(f, fieldnames=list(row))
                    wr.writeheader()
                wr.writerow(row)
                f.flush()
                print(",".join(str(v) for v in row.values()), flush=True)
    f.close()


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"done in {time.time() - t0:.0f} s")
