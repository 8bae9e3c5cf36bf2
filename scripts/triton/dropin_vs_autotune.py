#!/usr/bin/env python3
"""origami's drop-in for `triton.autotune` against `triton.autotune` itself, on a GPU: the
project's classic Triton matmul (origami_gemm/kernels/triton_classic.py) decorated three
ways, each run in its own process with an empty Triton cache, over shapes that are in
neither of the project's shape lists:

  origami     `origami_gemm.triton.autotune(key=["M", "N", "K"])`: one compile and one
              launch per new shape, no benchmarking;
  autotune8   `triton.autotune` over eight configs of the kind Triton's matmul tutorial
              lists (below), on every shape;
  autotuneF   `triton.autotune` over every 10th config of the `triton` family's feasible
              configs for the GPU (origami's listing, in its order), on the first
              --family-shapes shapes (the whole family, 600+ configs, compiles for hours).

Per shape it records the time to first result (the first call: pruning or benchmarking,
compiling, running, synchronized), the config Triton ended up launching, the relative
error against torch.matmul, and the steady-state time of that launch (CUDA-graph replay,
median) beside cuBLAS (torch.matmul). fp16, A M x K row-major, B stored N x K.

Needs origami_gemm installed with its extension (`pip install .` at the repository root).
Usage: dropin_vs_autotune.py --out DIR            (runs the three modes as subprocesses)
       dropin_vs_autotune.py --mode MODE --json FILE   (one mode, this process)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


# Twenty shapes in neither data/seed_shapes.csv nor data/llm_shapes.csv; N and K are
# multiples of 16 (the class the sweeps time), M is free.
SHAPES = [
    (16, 2560, 2560), (16, 13824, 5120), (64, 5120, 5120), (96, 11008, 4096),
    (200, 4096, 11008), (256, 3584, 3584), (333, 18944, 3584), (512, 3584, 18944),
    (640, 8640, 3200), (768, 3200, 8640), (1024, 2560, 10240), (1280, 5120, 13824),
    (1536, 13824, 5120), (2304, 5120, 5120), (3000, 4096, 4096), (4096, 2560, 2560),
    (5000, 11008, 4096), (6144, 4096, 11008), (8000, 3584, 18944), (12288, 5120, 5120),
]

# Eight configs of the kind Triton's matrix-multiplication tutorial autotunes over
# (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps, num_stages).
TUTORIAL_LIKE = [(128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4),
                 (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 32, 32, 4, 4),
                 (64, 32, 32, 2, 5), (32, 64, 32, 2, 5)]


def kernel_for(mode, family_configs):
    import triton

    from origami_gemm.kernels.triton_classic import matmul_kernel
    from origami_gemm import triton as ogt

    key = ["M", "N", "K"]
    if mode == "origami":
        return ogt.autotune(key=key, family="triton")(matmul_kernel)
    if mode == "autotune8":
        cfgs = [triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k},
                              num_warps=w, num_stages=s) for m, n, k, w, s in TUTORIAL_LIKE]
    else:
        cfgs = family_configs
    return triton.autotune(configs=cfgs, key=key)(matmul_kernel)


def family_configs(stride):
    """Every `stride`-th feasible config of the triton family on this GPU (origami's
    listing for a square shape; the family's feasible set does not depend on the shape)."""
    import triton

    import origami_gemm

    sel = origami_gemm.Selector(family="triton", device="torch")
    ranked = sel.rank(4096, 4096, 4096, "fp16", top=100000)
    out = []
    for p in ranked[::stride]:
        out.append(triton.Config({"BLOCK_SIZE_M": p.block_m, "BLOCK_SIZE_N": p.block_n,
                                  "BLOCK_SIZE_K": p.block_k},
                                 num_warps=p.num_warps, num_stages=p.num_stages))
    return out, len(ranked)


def bench(fn):
    """Median milliseconds of `fn` as CUDA-graph replays (Triton's do_bench_cudagraph),
    or of plain launches (do_bench) where capture fails."""
    import triton.testing

    try:
        return triton.testing.do_bench_cudagraph(fn, rep=100, quantiles=[0.5])
    except Exception:  # noqa: BLE001 (a launch path that cannot be captured)
        return triton.testing.do_bench(fn, warmup=25, rep=100, quantiles=[0.5])


def run_mode(mode, shapes, json_path):
    import torch
    import triton
    fam, fam_total = ([], 0)
    if mode == "autotuneF":
        fam, fam_total = family_configs(10)
    kern = kernel_for(mode, fam)
    rows = []
    for (m, n, k) in shapes:
        gen = torch.Generator(device="cuda").manual_seed(m * 7 + n * 13 + k)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=gen)
        b = torch.randn(n, k, device="cuda", dtype=torch.float16, generator=gen)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)

        def grid(meta):
            return (triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)

        def call():
            kern[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), 8)

        torch.cuda.synchronize()
        t0 = time.perf_counter()
        call()
        torch.cuda.synchronize()
        first_s = time.perf_counter() - t0
        ref = torch.matmul(a, b.t()).float()
        rel = ((c.float() - ref).norm() / ref.norm()).item()
        best = kern.best_config
        steady = bench(call)
        cublas = bench(lambda: torch.matmul(a, b.t()))
        pick = (f"{best.kwargs.get('BLOCK_SIZE_M')}x{best.kwargs.get('BLOCK_SIZE_N')}x"
                f"{best.kwargs.get('BLOCK_SIZE_K')},w{best.num_warps},s{best.num_stages}")
        rows.append({"m": m, "n": n, "k": k, "first_s": round(first_s, 4), "config": pick,
                     "rel_err": rel, "steady_us": round(steady * 1e3, 3),
                     "cublas_us": round(cublas * 1e3, 3)})
        print(f"[{mode}] {m}x{n}x{k}: first {first_s:.3f} s, {pick}, {steady * 1e3:.1f} us "
              f"(cuBLAS {cublas * 1e3:.1f}), rel err {rel:.1e}", flush=True)
    info = {"mode": mode, "configs": (len(TUTORIAL_LIKE) if mode == "autotune8" else
                                      len(fam) if mode == "autotuneF" else 1),
            "family_feasible": fam_total, "gpu": torch.cuda.get_device_name(0),
            "triton": triton.__version__, "torch": torch.__version__, "rows": rows}
    with open(json_path, "w") as f:
        json.dump(info, f, indent=1)


def summarize(out):
    modes = {}
    for name in ("origami", "autotune8", "autotuneF"):
        p = os.path.join(out, f"{name}.json")
        if os.path.exists(p):
            with open(p) as f:
                modes[name] = json.load(f)
    lines = []
    for name, d in modes.items():
        rows = d["rows"]
        lines.append(f"{name}: {d['configs']} config(s) per shape"
                     + (f" (of {d['family_feasible']} feasible)" if d["family_feasible"] else "")
                     + f", {len(rows)} shapes, time to first result total "
                     f"{sum(r['first_s'] for r in rows):.1f} s, median "
                     f"{statistics.median(r['first_s'] for r in rows):.3f} s; steady state / "
                     f"cuBLAS median {statistics.median(r['cublas_us'] / r['steady_us'] for r in rows):.3f}")
    if "origami" in modes:
        o = {(r["m"], r["n"], r["k"]): r for r in modes["origami"]["rows"]}
        for name in ("autotune8", "autotuneF"):
            if name not in modes:
                continue
            ratios = []
            for r in modes[name]["rows"]:
                key = (r["m"], r["n"], r["k"])
                if key in o:
                    # speed of origami's launch relative to autotune's winner (>1: faster)
                    ratios.append(r["steady_us"] / o[key]["steady_us"])
            if ratios:
                lines.append(f"origami's launch vs {name}'s winner (speed ratio, >1 faster), "
                             f"{len(ratios)} shapes: median {statistics.median(ratios):.3f}, "
                             f"min {min(ratios):.3f}, max {max(ratios):.3f}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    print(text, end="")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="folder for the three modes' JSON and summary.txt")
    ap.add_argument("--mode", choices=["origami", "autotune8", "autotuneF"])
    ap.add_argument("--json", help="with --mode: where to write its rows")
    ap.add_argument("--family-shapes", type=int, default=4,
                    help="shapes autotuneF runs (the first N of the list)")
    ap.add_argument("--timeout-s", type=float, default=240.0, help="per mode")
    args = ap.parse_args(argv)
    if args.mode:
        if not args.json:
            ap.error("--mode needs --json")
        shapes = SHAPES[:args.family_shapes] if args.mode == "autotuneF" else SHAPES
        run_mode(args.mode, shapes, args.json)
        return 0
    if not args.out:
        ap.error("give --out DIR (or --mode with --json)")
    os.makedirs(args.out, exist_ok=True)
    for mode in ("origami", "autotune8", "autotuneF"):
        env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(prefix=f"tc-{mode}-"))
        cmd = [sys.executable, __file__, "--mode", mode, "--json",
               os.path.join(args.out, f"{mode}.json"), "--family-shapes",
               str(args.family_shapes)]
        t0 = time.time()
        try:
            r = subprocess.run(cmd, env=env, timeout=args.timeout_s)
            print(f"== {mode}: exit {r.returncode}, {time.time() - t0:.1f} s", flush=True)
        except subprocess.TimeoutExpired:
            print(f"== {mode}: stopped after {args.timeout_s:.0f} s", flush=True)
    summarize(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
