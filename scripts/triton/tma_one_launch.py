#!/usr/bin/env python3
"""Launch the persistent TMA matmul (python/origami_gemm/kernels/triton_tma.py) of one config
on one shape a few times, for a profiler: the first launch compiles, the later ones are
the kernel alone (`ncu --launch-skip 1 --launch-count 1`). Also cuBLAS once
(`torch.mm`, for the same profiler with a cuBLAS kernel filter). Fresh random inputs;
with --fresh, new input buffers (new addresses, new values) before every launch.

Usage (device): python3 scripts/triton/tma_one_launch.py M N K CONFIG [--dtype fp16|bf16]
                [--launches 3] [--cublas] [--fresh]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))


def bad_input(why):
    """One line on stderr and exit 2, the project's code for bad input."""
    print(f"tma_one_launch: {why}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("m", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("config", help="BMxBNxBK,gG,wW,sS[,switch...] (the model's text form)")
    ap.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16")
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--cublas", action="store_true", help="launch torch.mm instead")
    ap.add_argument("--fresh", action="store_true",
                    help="new input buffers before every launch (the earlier ones kept alive)")
    a = ap.parse_args()
    if min(a.m, a.n, a.k) < 1 or a.launches < 1:
        bad_input("M, N, K and --launches must be positive")
    import torch
    from origami_gemm.kernels.triton_tma import matmul, parse_text
    dt = torch.float16 if a.dtype == "fp16" else torch.bfloat16
    try:
        cfg = parse_text(a.config)
    except ValueError as e:
        bad_input(e)
    torch.manual_seed(0)
    x = torch.randn(a.m, a.k, device="cuda", dtype=dt)
    w = torch.randn(a.n, a.k, device="cuda", dtype=dt)
    kept = []
    for i in range(a.launches):
        if a.fresh and i > 0:
            # keep the old buffers so the allocator hands out new addresses
            kept.append((x, w))
            x = torch.randn(a.m, a.k, device="cuda", dtype=dt)
            w = torch.randn(a.n, a.k, device="cuda", dtype=dt)
        c = torch.mm(x, w.t()) if a.cublas else matmul(x, w, cfg)
    torch.cuda.synchronize()
    ref = torch.mm(x.float(), w.float().t())
    err = ((c.float() - ref).norm() / ref.norm()).item()
    print(f"{a.m}x{a.n}x{a.k} {a.dtype} {'cuBLAS' if a.cublas else a.config}: rel. error {err:.2e}")
    if err > 2e-3:
        sys.exit("tma_one_launch: result differs from torch's fp32 product")


if __name__ == "__main__":
    main()
