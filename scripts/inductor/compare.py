#!/usr/bin/env python3
"""PyTorch Inductor's max-autotune GEMMs with and without origami's ranking, on a GPU.

`torch.compile(lambda a, b: a @ b, mode="max-autotune-no-cudagraphs", dynamic=False)` per
shape, fp16, in three ways, each in its own process with empty Inductor and Triton caches:

  inductor    Inductor as shipped: its default list of Triton mm configs and ATen's
              cuBLAS call, every candidate compiled and timed;
  origami1    Inductor's exhaustive config list (max_autotune_gemm_search_space =
              "EXHAUSTIVE") ranked by origami (`origami_gemm.inductor.install(top_k=1,
              keep_others=False)`): the one config origami predicts fastest is the only
              candidate, so nothing is timed;
  origami3    the exhaustive list, origami's three best and ATen's cuBLAS call timed by
              Inductor (`top_k=3`, `keep_others=True`).

Per shape: the time to first result (tracing, code generation, compiling and timing the
candidates, the run; synchronized), the steady-state time of the compiled function
(CUDA-graph replay, median) beside cuBLAS (torch.matmul) in the same process, the
relative error against torch.matmul in fp32, and for origami's modes the configs it kept.

Needs origami_gemm with its extension. Usage:
  compare.py --out DIR                        (the three modes as subprocesses)
  compare.py --mode MODE --json FILE          (one mode, this process)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Shapes in neither data/seed_shapes.csv nor data/llm_shapes.csv (those of
# scripts/triton/dropin_vs_autotune.py, every other one).
SHAPES = [
    (16, 13824, 5120), (96, 11008, 4096), (256, 3584, 3584), (512, 3584, 18944),
    (768, 3200, 8640), (1280, 5120, 13824), (2304, 5120, 5120), (4096, 2560, 2560),
    (6144, 4096, 11008), (12288, 5120, 5120),
]
MODES = ("inductor", "origami1", "origami3")


def bench_ms(fn):
    import triton.testing

    try:
        return triton.testing.do_bench_cudagraph(fn, rep=100, quantiles=[0.5])
    except Exception:  # noqa: BLE001 (a call that cannot be captured)
        return triton.testing.do_bench(fn, warmup=25, rep=100, quantiles=[0.5])


def run_mode(mode, shapes, json_path):
    import torch
    import torch._inductor.config as icfg
    import triton

    icfg.force_disable_caches = True
    handler = None
    if mode != "inductor":
        from origami_gemm import inductor

        icfg.max_autotune_gemm_search_space = "EXHAUSTIVE"
        handler = (inductor.install(top_k=1, keep_others=False) if mode == "origami1"
                   else inductor.install(top_k=3, keep_others=True))
    rows = []
    for (m, n, k) in shapes:
        torch._dynamo.reset()
        gen = torch.Generator(device="cuda").manual_seed(m * 7 + n * 13 + k)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=gen)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16, generator=gen)
        f = torch.compile(lambda x, y: x @ y, mode="max-autotune-no-cudagraphs",
                          dynamic=False)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        c = f(a, b)
        torch.cuda.synchronize()
        first_s = time.perf_counter() - t0
        ref = torch.matmul(a.float(), b.float())
        rel = ((c.float() - ref).norm() / ref.norm()).item()
        steady = bench_ms(lambda: f(a, b))
        cublas = bench_ms(lambda: torch.matmul(a, b))
        row = {"m": m, "n": n, "k": k, "first_s": round(first_s, 3), "rel_err": rel,
               "steady_us": round(steady * 1e3, 2), "cublas_us": round(cublas * 1e3, 2)}
        if handler is not None and handler.log:
            last = handler.log[-1]
            row.update({"candidates": last["candidates"], "scored": last["scored"],
                        "kept": [x["config"] for x in (last["kept"] or [])]})
        rows.append(row)
        print(f"[{mode}] {m}x{n}x{k}: first {first_s:.2f} s, {steady * 1e3:.1f} us "
              f"(cuBLAS {cublas * 1e3:.1f}), rel err {rel:.1e} {row.get('kept', '')}",
              flush=True)
    info = {"mode": mode, "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "triton": triton.__version__, "rows": rows}
    with open(json_path, "w") as fh:
        json.dump(info, fh, indent=1)


def summarize(out):
    runs = {}
    for mode in MODES:
        path = os.path.join(out, f"{mode}.json")
        if os.path.exists(path):
            with open(path) as fh:
                runs[mode] = json.load(fh)
    lines = []
    for mode, info in runs.items():
        rows = info["rows"]
        if not rows:
            continue
        speed = [r["cublas_us"] / r["steady_us"] for r in rows]
        lines.append(f"{mode}: {len(rows)} shapes, time to first result total "
                     f"{sum(r['first_s'] for r in rows):.1f} s (median "
                     f"{statistics.median(r['first_s'] for r in rows):.2f} s), speed vs cuBLAS "
                     f"median {statistics.median(speed):.3f} (min {min(speed):.3f}, max "
                     f"{max(speed):.3f}), worst rel err {max(r['rel_err'] for r in rows):.1e} "
                     f"({info['gpu']}, torch {info['torch']}, triton {info['triton']})")
    if "inductor" in runs:
        base = {(r["m"], r["n"], r["k"]): r for r in runs["inductor"]["rows"]}
        for mode in MODES[1:]:
            if mode not in runs:
                continue
            ratio = [base[key]["steady_us"] / r["steady_us"] for r in runs[mode]["rows"]
                     if (key := (r["m"], r["n"], r["k"])) in base]
            if ratio:
                lines.append(f"{mode} against inductor, steady speed ratio (>1: faster): "
                             f"median {statistics.median(ratio):.3f} (min {min(ratio):.3f}, "
                             f"max {max(ratio):.3f}) over {len(ratio)} shapes")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.txt"), "w") as fh:
        fh.write(text)
    print(text, end="")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="folder for the modes' JSON and summary.txt")
    ap.add_argument("--mode", choices=MODES)
    ap.add_argument("--json")
    ap.add_argument("--shapes", type=int, default=len(SHAPES), help="the first N shapes")
    ap.add_argument("--timeout-s", type=int, default=250, help="per mode")
    args = ap.parse_args()
    shapes = SHAPES[:args.shapes]
    if args.mode:
        run_mode(args.mode, shapes, args.json)
        return
    if not args.out:
        sys.exit("compare.py: give --out DIR (or --mode and --json)")
    os.makedirs(args.out, exist_ok=True)
    for mode in MODES:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(cache, "inductor"),
                       TRITON_CACHE_DIR=os.path.join(cache, "triton"))
            cmd = [sys.executable, __file__, "--mode", mode, "--json",
                   os.path.join(args.out, f"{mode}.json"), "--shapes", str(args.shapes)]
            try:
                subprocess.run(cmd, env=env, timeout=args.timeout_s, check=False)
            except subprocess.TimeoutExpired:
                print(f"[{mode}] stopped after {args.timeout_s} s", flush=True)
    summarize(args.out)


if __name__ == "__main__":
    main()
