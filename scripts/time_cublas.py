#!/usr/bin/env python3
"""Time cuBLAS GEMMs (through torch) on a shape list, for `origami-predict model`.

For each shape and dtype (fp16, bf16, and fp8 e4m3 through torch._scaled_mm when it
works) this script:
  * draws fresh random inputs (never zeros), several input sets when one set fits in L2
    so that back-to-back calls rotate through more than twice the L2 size;
  * records the cuBLAS kernel name once with torch.profiler and parses its tile and
    cluster shape (nvjet_* and sm90_xmma_* name formats);
  * captures `reps` calls in a CUDA graph and times graph replays with CUDA events,
    so launch gaps stay out of small-shape timings; median of `--samples` replays,
    coefficient of variation reported.

torch is row-major: C[M,N] = A[M,K] @ B[K,N] reaches cuBLAS (column-major) as
C^T = B^T A^T, so the kernel's "m" is our N. The tile and cluster columns written here
are already swapped back to our (M, N) orientation; the raw kernel name is kept.

Clocks are never changed; nvidia-smi readings are written before and after.

Usage: python3 scripts/time_cublas.py --shapes shapes.csv --out DIR [--budget-s 170]
"""

import argparse
import csv
import math
import os
import re
import statistics
import subprocess
import sys
import time

import torch

L2_BYTES = 50 * 1024 * 1024

LLM_SHAPES = [
    # Llama-3-8B projections at decode/prefill token counts (M = tokens)
    (16, 4096, 4096), (16, 14336, 4096), (16, 4096, 14336), (16, 6144, 4096),
    (256, 4096, 4096), (256, 14336, 4096), (256, 4096, 14336), (256, 6144, 4096),
    (2048, 4096, 4096), (2048, 14336, 4096), (2048, 4096, 14336), (2048, 6144, 4096),
    # Llama-3-70B
    (512, 8192, 8192), (512, 28672, 8192), (512, 8192, 28672), (4096, 10240, 8192),
    # DeepSeek-V3-like (in the style of the warp-specialized persistent GEMM model's testlist)
    (4096, 7168, 2048), (4096, 2048, 7168), (4096, 7168, 256), (4096, 4096, 16384),
]


def smi(query):
    try:
        r = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20)
        return r.stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"error: {e}"


def parse_kernel(name, M, N):
    """(tile_m, tile_n, cluster_m, cluster_n) in our orientation, or None."""
    m = re.search(r"tilesize(\d+)x(\d+)x\d+", name)
    c = re.search(r"cluster(\d+)x(\d+)x\d+", name)
    if m:
        km, kn = int(m.group(1)), int(m.group(2))
        cm, cn = (int(c.group(1)), int(c.group(2))) if c else (1, 1)
        return kn, km, cn, cm
    m = re.search(r"_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)_", name)
    if m:
        km, kn = int(m.group(1)), int(m.group(2))
        cm, cn = int(m.group(5)), int(m.group(6))
        return kn, km, cn, cm
    m = re.search(r"_(\d+)x(\d+)_(\d+)x(\d+)", name)
    if m:
        km, kn = int(m.group(1)), int(m.group(2))
        return kn, km, 1, 1
    return None


def make_fn(dtype, M, N, K, sets):
    """Returns (call(i), description) where call(i) runs GEMM on input set i."""
    dev = "cuda"
    if dtype in ("fp16", "bf16"):
        t = torch.float16 if dtype == "fp16" else torch.bfloat16
        A = [torch.randn(M, K, device=dev, dtype=t) for _ in range(sets)]
        B = [torch.randn(K, N, device=dev, dtype=t) for _ in range(sets)]
        C = [torch.empty(M, N, device=dev, dtype=t) for _ in range(sets)]

        def call(i):
            torch.matmul(A[i], B[i], out=C[i])
        return call, C
    if dtype == "fp8":
        f8 = torch.float8_e4m3fn
        A = [torch.randn(M, K, device=dev).to(f8) for _ in range(sets)]
        # column-major B as _scaled_mm requires
        B = [torch.randn(N, K, device=dev).to(f8).t() for _ in range(sets)]
        one = torch.tensor(1.0, device=dev)

        def call(i):
            torch._scaled_mm(A[i], B[i], scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        return call, None
    raise ValueError(dtype)


def bytes_per_set(dtype, M, N, K):
    e = {"fp16": 2, "bf16": 2, "fp8": 1}[dtype]
    return (M * K + K * N) * e + M * N * 2


def kernel_names(call):
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        call(0)
        torch.cuda.synchronize()
    names = []
    for ev in p.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            names.append(ev.name)
    return [n for n in names if "memset" not in n.lower() and "memcpy" not in n.lower()]


def time_shape(dtype, M, N, K, samples):
    per_set = bytes_per_set(dtype, M, N, K)
    sets = max(1, min(32, math.ceil(2.5 * L2_BYTES / per_set)))
    call, _ = make_fn(dtype, M, N, K, sets)
    for i in range(sets):  # warm-up, cuBLAS heuristics, workspace
        call(i)
    torch.cuda.synchronize()
    names = kernel_names(call)
    # rough single-call time for choosing reps
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for i in range(sets):
        call(i)
    e.record()
    torch.cuda.synchronize()
    est_us = max(1e-3, s.elapsed_time(e) * 1e3 / sets)
    reps = max(sets, min(2000, int(math.ceil(2000.0 / est_us))))  # >= ~2 ms per replay
    reps = int(math.ceil(reps / sets) * sets)
    g = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call(0)
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=stream):
            for r in range(reps):
                call(r % sets)
    torch.cuda.synchronize()
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        s.record()
        g.replay()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1e3 / reps)
    med = statistics.median(times)
    cov = statistics.pstdev(times) / statistics.mean(times)
    del g
    return med, cov, reps, sets, names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--budget-s", type=float, default=170.0)
    ap.add_argument("--dtypes", default="fp16,bf16,fp8")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    shapes = []
    with open(args.shapes) as f:
        for row in csv.DictReader(f):
            shapes.append((int(row["M"]), int(row["N"]), int(row["K"])))
    for s in LLM_SHAPES:
        if s not in shapes:
            shapes.append(s)

    t0 = time.time()
    info = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "smi_before": smi("clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,driver_version"),
    }
    out_csv = os.path.join(args.out, "h200_cublas.csv")
    fields = ["M", "N", "K", "dtype", "out_dtype", "tile", "cluster", "measured_us",
              "cov", "samples", "reps", "input_sets", "tflops", "kernels"]
    rows = []
    dtypes = args.dtypes.split(",")
    for (M, N, K) in shapes:
        for dtype in dtypes:
            if time.time() - t0 > args.budget_s:
                print(f"budget reached, skipping {dtype} {M}x{N}x{K}", file=sys.stderr)
                continue
            try:
                med, cov, reps, sets, names = time_shape(dtype, M, N, K, args.samples)
            except Exception as ex:  # noqa: BLE001
                print(f"skip {dtype} {M}x{N}x{K}: {type(ex).__name__}: {ex}", file=sys.stderr)
                torch.cuda.empty_cache()
                continue
            gemm = [n for n in names if "reduce" not in n.lower()] or names
            parsed = parse_kernel(gemm[0], M, N) if gemm else None
            tile = f"{parsed[0]}x{parsed[1]}" if parsed else ""
            cluster = f"{parsed[2]}x{parsed[3]}" if parsed else ""
            out_dtype = "bf16" if dtype in ("bf16", "fp8") else "fp16"
            row = dict(M=M, N=N, K=K, dtype=dtype, out_dtype=out_dtype, tile=tile,
                       cluster=cluster, measured_us=f"{med:.4f}", cov=f"{cov:.4f}",
                       samples=args.samples, reps=reps, input_sets=sets,
                       tflops=f"{2*M*N*K/med/1e6:.1f}", kernels="|".join(names))
            rows.append(row)
            print(f"{dtype:5} {M:6} {N:6} {K:6} {med:10.3f} us cov {cov:.3f} "
                  f"{row['tflops']:>7} TF/s tile {tile} cl {cluster} ({len(names)} kernels)",
                  flush=True)
            torch.cuda.empty_cache()
    info["smi_after"] = smi("clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,driver_version")
    info["elapsed_s"] = round(time.time() - t0, 1)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "h200_cublas_info.txt"), "w") as f:
        for k, v in info.items():
            f.write(f"{k}: {v}\n")
    print(info)


if __name__ == "__main__":
    main()
