#!/usr/bin/env python3
"""What a pick costs from Python (origami_gemm, the PyO3 extension of crates/origami-py):

  * a cached pick: `Selector.select` of a shape asked before (the engine's LRU cache);
    goal <= 1 us;
  * an uncached pick (`cache_size=0`), to compare with the Rust pick's time that
    `cargo bench --bench selection` reports as `pick/...` (criterion's estimates are read
    from target/criterion when that bench has run); goal <= 2x the Rust time;
  * 10,000 shapes in one `select_batch` call (the GIL released, the batch split over the
    cores); goal < 50 ms;
  * and, when the `nvidia-matmul-heuristics` package (NVIDIA's nvMatmulHeuristics) is
    importable, its Python query on the same machine, for comparison.

Not a test: it prints numbers. Usage (the extension built, e.g. `maturin develop --release`
at the repository root):  python benches/python_select.py [--gpu h100-sxm]
"""
import argparse
import json
import os
import platform
import random
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import origami_gemm as og  # noqa: E402
from origami_gemm import _core  # noqa: E402

SHAPES = [(4096, 4096, 4096), (128, 14336, 4096)]
# (Selector family, the matching criterion benchmark's family label in benches/selection.rs)
FAMILIES = [("triton", "triton-throughput"), ("origami", "origami-throughput"),
            ("triton-tma", "triton-tma"), ("triton-auto", "triton-auto")]


def per_call_us(fn, calls, repeats=7):
    """Median over `repeats` of the mean time of one call over `calls` calls, us."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(times)


def criterion_us(label, m, n, k, kind="select"):
    """The Rust bench's point estimate (median) in us, if criterion has stored one:
    `select/...` scores every config, `pick/...` only what the pick needs (as the
    Python package does)."""
    name = f"{kind}_{label}_{m}x{n}x{k}"
    path = os.path.join(ROOT, "target", "criterion", name, "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"] / 1000.0
    except (OSError, KeyError, ValueError):
        return None


def batch_shapes(count, seed=0):
    """`count` LLM-like shapes: M from 1 to 16384, N and K from common layer sizes."""
    rng = random.Random(seed)
    dims = [1024, 2048, 4096, 5120, 6144, 7168, 8192, 11008, 14336, 16384, 28672]
    return [(rng.randint(1, 16384), rng.choice(dims), rng.choice(dims)) for _ in range(count)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h100-sxm")
    ap.add_argument("--batch", type=int, default=10000)
    args = ap.parse_args()
    print(f"origami_gemm {_core.__version__} on {platform.python_implementation()} "
          f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"preset {args.gpu}")

    print("\ncached pick (Selector.select of a shape asked before): goal <= 1 us")
    for family, _ in FAMILIES:
        sel = og.Selector(family=family, gpu=args.gpu)
        for m, n, k in SHAPES:
            sel.select(m, n, k)
            us = per_call_us(lambda: sel.select(m, n, k), 20000)
            print(f"  {family:12s} {m}x{n}x{k:<6d} {us:7.3f} us")

    print("\nuncached pick (cache_size=0) vs the Rust pick "
          "(cargo bench --bench selection, pick/...): goal <= 2x")
    for family, label in FAMILIES:
        sel = og.Selector(family=family, gpu=args.gpu, cache_size=0)
        for m, n, k in SHAPES:
            sel.select(m, n, k)  # builds the selector for the type
            us = per_call_us(lambda: sel.select(m, n, k), 300)
            rust = criterion_us(label, m, n, k, kind="pick")
            full = criterion_us(label, m, n, k)
            vs = (f"Rust pick {rust:7.2f} us, ratio {us / rust:4.2f}x" if rust
                  else "Rust: no criterion estimate (run cargo bench --bench selection)")
            if full:
                vs += f" (Rust scoring every config: {full:7.2f} us)"
            print(f"  {family:12s} {m}x{n}x{k:<6d} {us:7.2f} us   {vs}")

    shapes = batch_shapes(args.batch)
    print(f"\n{len(shapes)} shapes in one select_batch call (fp16): goal < 50 ms")
    for family, _ in FAMILIES:
        sel = og.Selector(family=family, gpu=args.gpu)
        sel.select_batch(shapes[:10])
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            out = sel.select_batch(shapes, errors="none")
            runs.append((time.perf_counter() - t) * 1e3)
        ok = sum(p is not None for p in out)
        print(f"  {family:12s} {min(runs):8.1f} ms (best of 3; {ok} picks, "
              f"{len(out) - ok} shapes the family cannot run)")

    print("\nnvidia-matmul-heuristics (NVIDIA's Python query), same machine, one config per "
          "query:")
    nvmmh()


def nvmmh():
    """Time nvMatmulHeuristics' Python query (backend TRITON, its predefined H100 SXM, fp16
    in / fp32 accumulate ('HSS'), A row-major M x K and B stored N x K: NT_ROW_MAJOR)."""
    try:
        import nvMatmulHeuristics as nv
    except ImportError as e:
        print(f"  not importable here ({e}); pip install nvidia-matmul-heuristics")
        return
    layout = nv.NvMatmulHeuristicsMatmulLayout.NT_ROW_MAJOR
    for flags in (nv.NvMatmulHeuristicsFlags.NONE,
                  nv.NvMatmulHeuristicsFlags.PERF_MODEL_BASED_AUTO_TUNING):
        h = nv.NvMatmulHeuristicsInterfaceEx(backend=nv.NvMatmulHeuristicsTarget.TRITON,
                                             flags=flags,
                                             gpu=nv.NvMatmulHeuristicsNvidiaGpu.H100_SXM)
        for m, n, k in SHAPES:
            # The Ex interface's get_with_mnk passes the hardware descriptor where its get
            # takes a precision: build the problem and call get directly.
            def query():
                return h.get(h.makeNvMatmulHeuristicsProblem(m, n, k, layout), 1)

            got = query()
            cfg = got[0]["kernel"] if got else None
            tile = (f"{cfg.cta_tile_m}x{cfg.cta_tile_n}x{cfg.cta_tile_k},s{cfg.stages}"
                    if cfg else "no config")
            us = per_call_us(query, 50, repeats=5)
            print(f"  flags={flags.name:28s} {m}x{n}x{k:<6d} {us:9.1f} us  ({tile})")

if __name__ == "__main__":
    main()
