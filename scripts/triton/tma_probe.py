#!/usr/bin/env python3
"""Probe of Triton's Hopper matmul (python/origami_gemm/kernels/triton_tma.py) on a GPU: which
of its switches (warp specialization, flatten, epilogue subtiling) compile and help, and
how close its tiles come to cuBLAS, before the full brute-force sweep.

For each shape: fresh random inputs (A M x K, B N x K, row-major), cuBLAS
(torch.mm(A, B.t())) as the reference and the baseline, then every config of the probe
list: checked against cuBLAS (||C - ref||_F / ||ref||_F <= 2e-3 after C is poisoned with
NaN), then timed with the classic sweep's timer (CUDA graphs of back-to-back launches
under ~100 us, CUDA events otherwise; a busy-wait kernel keeps launch gaps out; median).
SM clocks, power and temperature are sampled with NVML. Compilation runs first in a
process pool (one small launch per config fills Triton's on-disk cache).

Writes probe.csv (one row per shape x config, cuBLAS included), compile.csv, and
run_info.json under --out, and prints a summary: per shape the best config against
cuBLAS, and per switch the median time ratio on/off over the pairs that differ only in it.

Usage: python3 scripts/triton/tma_probe.py --out DIR [--workers 15] [--quick]
           [--space switches|wide|full] [--shapes probe|llm|seed | --shape MxNxK ...]
           [--dtype fp16|bf16]
"""
import argparse
import csv
import hashlib
import itertools
import json
import multiprocessing as mp
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

SHAPES = [  # (M, N, K, dtype)
    (4096, 4096, 4096, "fp16"),
    (8192, 8192, 8192, "fp16"),
    (4096, 10240, 8192, "fp16"),
    (2048, 7168, 18432, "fp16"),
    (1024, 4096, 14336, "fp16"),
    (128, 8192, 8192, "fp16"),
    (16, 6144, 4096, "fp16"),
    (6000, 1536, 7168, "fp16"),
    (4096, 4096, 4096, "bf16"),
]

TILES = [  # (BM, BN, BK, warps, stages)
    (128, 256, 64, 8, 3),
    (256, 128, 64, 8, 3),
    (128, 128, 64, 8, 4),
    (128, 128, 64, 4, 4),
    (128, 128, 128, 8, 3),
    (64, 256, 64, 4, 4),
    (128, 64, 64, 4, 4),
    (64, 128, 64, 4, 5),
    (64, 64, 64, 4, 5),
    (128, 256, 128, 8, 2),
]
GROUP_M = 8
REL_TOL = 2e-3  # ||C - ref||_F / ||ref||_F a config must meet against cuBLAS
COMPILE_SHAPE = (256, 256, 256)  # the compile launch's M, N, K unless told otherwise
# (WARP_SPECIALIZE, FLATTEN) settings of the wide space: all off; flatten; both.
WIDE_SWITCHES = ((False, False), (False, True), (True, True))


def wide_configs(switch_settings=WIDE_SWITCHES):
    """Tiles x stages x warps at GROUP_SIZE_M 8 with the given (WARP_SPECIALIZE, FLATTEN)
    settings (default: all off; flatten; warp specialization with flatten), less operand
    rings over sm_90's shared memory less 4 KiB: the ceiling of the family on a shape
    list, not yet the full sweep space."""
    from origami_gemm.kernels.triton_tma import TmaConfig
    out = []
    for bm, bn, bk, w, s in itertools.product((64, 128, 256), (64, 128, 256), (64, 128),
                                              (4, 8), (3, 4, 5)):
        for ws, fl in switch_settings:
            c = TmaConfig(bm, bn, bk, GROUP_M, w, s, ws, fl, False)
            if c.operand_ring_bytes() <= 232448 - 4096:
                out.append(c)
    return out


def shape_list(root, name):
    """The rows of data/<name>.csv ('#' lines are comments) as dicts, in order."""
    with open(os.path.join(root, "data", f"{name}.csv")) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def listed_shapes(root, name, min_m, dtype):
    """data/<name>.csv rows with M >= min_m, in `dtype`."""
    return [(int(r["M"]), int(r["N"]), int(r["K"]), dtype)
            for r in shape_list(root, name) if int(r["M"]) >= min_m]


def probe_configs(quick):
    from origami_gemm.kernels.triton_tma import TmaConfig
    tiles = TILES[:3] if quick else TILES
    out = []
    for (bm, bn, bk, w, s), (ws, fl, st) in itertools.product(
            tiles, itertools.product((False, True), repeat=3)):
        out.append(TmaConfig(bm, bn, bk, GROUP_M, w, s, ws, fl, st))
    return out


def torch_dtype(torch, name):
    return {"fp16": torch.float16, "bf16": torch.bfloat16}[name]


def launcher(cfg, a, b, c, programs):
    import triton
    from origami_gemm.kernels.triton_tma import matmul_tma_persistent_kernel
    M, K = a.shape
    N = b.shape[0]
    tiles = triton.cdiv(M, cfg.BLOCK_SIZE_M) * triton.cdiv(N, cfg.BLOCK_SIZE_N)
    grid = (min(programs, tiles),)

    def run():
        return matmul_tma_persistent_kernel[grid](
            a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
            NUM_PROGRAMS=programs, num_warps=cfg.num_warps, num_stages=cfg.num_stages,
            **cfg.constexprs())
    return run


def _compile_one(args):
    """In a worker: one small launch per input type of the run fills the on-disk cache; the compiled
    kernel's registers, spills and shared memory, or the error. args: (config, programs,
    dtypes) or (config, programs, dtypes, (M, N, K)) for the launch's shape (default
    COMPILE_SHAPE: Triton compiles one kernel per class of its integer arguments, so a
    shape of another class, M = 1 or N, K not multiples of 16, needs a launch of its own)."""
    cfg, programs, dtypes = args[:3]
    M, N, K = args[3] if len(args) > 3 else COMPILE_SHAPE
    row = {"config": cfg.key()}
    try:
        import torch
        import triton
        from origami_gemm.kernels.triton_tma import _alloc
        triton.set_allocator(_alloc(torch.device("cuda")))
        for name in dtypes:
            dt = torch_dtype(torch, name)
            a = torch.randn(M, K, device="cuda", dtype=dt)
            b = torch.randn(N, K, device="cuda", dtype=dt)
            c = torch.empty(M, N, device="cuda", dtype=dt)
            k = launcher(cfg, a, b, c, programs)()
            torch.cuda.synchronize()
        row.update(status="ok", registers=k.n_regs, spills=k.n_spills,
                   shared_bytes=k.metadata.shared, error="")
    except Exception as e:  # noqa: BLE001
        msg = " ".join(str(e).split())[:300]
        row.update(status="error", registers="", spills="", shared_bytes="", error=msg)
    return row


def rel_err(torch, c, ref):
    d = (c.float() - ref.float()).norm() / ref.float().norm()
    return float(d)


def verify(torch, run, c, ref):
    """C poisoned with NaN, one launch, the relative Frobenius error against `ref` (NaN
    when C kept a NaN: `not err <= REL_TOL` is then true)."""
    c.fill_(float("nan"))
    run()
    torch.cuda.synchronize()
    return rel_err(torch, c, ref)


def cov(samples):
    """Coefficient of variation of a timing's samples ('' for a single sample)."""
    if len(samples) < 2:
        return ""
    return round(statistics.pstdev(samples) / statistics.mean(samples), 4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="3 tiles, 2 shapes (a smoke run)")
    ap.add_argument("--space", choices=("switches", "wide", "full"), default="switches",
                    help="switches: 10 tiles x the 8 switch settings (default); wide: "
                         "tiles x stages x warps with three switch settings; full: "
                         "triton_tma.configs() less warp specialization where it "
                         "leaves the kernel unchanged")
    ap.add_argument("--shape", action="append", default=[], metavar="MxNxK",
                    help="time these shapes (fp16, or --dtype) instead of a list; repeatable")
    ap.add_argument("--shapes", choices=("probe", "llm", "seed"), default="probe",
                    help="probe: the 9 shapes above; llm: data/llm_shapes.csv, M >= 1024; "
                         "seed: data/seed_shapes.csv (the list the model is fitted on)")
    ap.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16",
                    help="input type of the llm and seed lists (the probe list has its own)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    import torch
    import triton
    from triton_sweep import ClockSampler, Timer, smi
    from origami_gemm.kernels import triton_tma
    from origami_gemm.kernels.triton_tma import _alloc

    dev = torch.device("cuda")
    programs = torch.cuda.get_device_properties(dev).multi_processor_count
    if args.space == "full":
        # Warp specialization only where it changes the kernel: its PTX is the plain
        # kernel's with FLATTEN on or at 8 warps (data/triton_tma_sm90.csv, docs/triton-tma.md).
        cfgs = [c for c in triton_tma.configs() if not c.WARP_SPECIALIZE
                or (c.num_warps == 4 and not c.FLATTEN)]
    elif args.space == "wide":
        cfgs = wide_configs()
    else:
        cfgs = probe_configs(args.quick)
    if args.shape:
        shapes = [tuple(int(x) for x in s.split("x")) + (args.dtype,) for s in args.shape]
    elif args.shapes == "llm":
        shapes = listed_shapes(ROOT, "llm_shapes", 1024, args.dtype)
    elif args.shapes == "seed":
        shapes = listed_shapes(ROOT, "seed_shapes", 1, args.dtype)
    else:
        shapes = SHAPES
    shapes = shapes[:2] if args.quick else shapes
    kernel_sha = hashlib.sha256(open(triton_tma.__file__, "rb").read()).hexdigest()
    info = {"gpu": torch.cuda.get_device_name(dev), "sms": programs,
            "torch": torch.__version__, "triton": triton.__version__,
            "kernel_file": "python/origami_gemm/kernels/triton_tma.py",
            "kernel_sha256": kernel_sha, "smi_before": smi(), "configs": len(cfgs),
            "shapes": shapes, "group_m": GROUP_M}

    t0 = time.time()
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.workers) as pool:
        dtypes = sorted({s[3] for s in shapes})
        compiled = pool.map(_compile_one, [(c, programs, dtypes) for c in cfgs], chunksize=1)
    info["compile_s"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "compile.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(compiled[0].keys()))
        w.writeheader()
        w.writerows(compiled)
    ok = {r["config"] for r in compiled if r["status"] == "ok"}
    print(f"compiled {len(ok)}/{len(cfgs)} configs in {info['compile_s']} s", flush=True)

    triton.set_allocator(_alloc(dev))
    timer = Timer(torch)
    clocks = ClockSampler()
    clocks.start()
    rows = []
    gen = torch.Generator(device=dev)
    gen.manual_seed(20261124)
    for (M, N, K, dname) in shapes:
        dt = torch_dtype(torch, dname)
        a = torch.randn(M, K, device=dev, dtype=dt, generator=gen)
        b = torch.randn(N, K, device=dev, dtype=dt, generator=gen)
        c = torch.empty(M, N, device=dev, dtype=dt)
        ref = torch.mm(a, b.t())
        flop = 2.0 * M * N * K

        def cublas():
            torch.mm(a, b.t(), out=c)
        # Warm-up: the first cuBLAS call of a run (and of an out= variant) initializes
        # its handle and workspace; a probe that includes it is not a measurement.
        for _ in range(3):
            cublas()
        torch.cuda.synchronize()
        ts0 = time.time()
        t1 = timer.probe(cublas)
        cub_us, samples, mode = timer.measure(cublas, None, t1)
        cw = clocks.window(ts0, time.time())
        rows.append({"m": M, "n": N, "k": K, "dtype": dname, "config": "cublas",
                     "status": "ok", "us": round(cub_us, 3),
                     "tflops": round(flop / cub_us / 1e6, 2), "vs_cublas": 1.0,
                     "rel_err": 0.0, "mode": mode, "samples": len(samples),
                     "cov": cov(samples), "sm_mhz": cw[0] if cw else ""})
        best = None
        for cfg in cfgs:
            key = cfg.key()
            row = {"m": M, "n": N, "k": K, "dtype": dname, "config": key}
            if key not in ok:
                rows.append({**row, "status": "compile_error"})
                continue
            try:
                run = launcher(cfg, a, b, c, programs)
                err = verify(torch, run, c, ref)
                if not err <= REL_TOL:
                    rows.append({**row, "status": "wrong", "rel_err": err})
                    continue
                ts0 = time.time()
                t1 = timer.probe(run)
                us, samples, mode = timer.measure(run, best, t1)
                cw = clocks.window(ts0, time.time())
                best = us if best is None else min(best, us)
                rows.append({**row, "status": "ok", "us": round(us, 3),
                             "tflops": round(flop / us / 1e6, 2),
                             "vs_cublas": round(cub_us / us, 4), "rel_err": round(err, 6),
                             "mode": mode, "samples": len(samples), "cov": cov(samples),
                             "sm_mhz": cw[0] if cw else ""})
            except Exception as e:  # noqa: BLE001
                rows.append({**row, "status": "error",
                             "error": " ".join(str(e).split())[:200]})
                traceback.print_exc()
        print(f"{M}x{N}x{K} {dname}: cuBLAS {cub_us:.1f} us, best {best:.1f} us", flush=True)
    clocks.stop()
    info["smi_after"] = smi()
    info["wall_s"] = round(time.time() - t0, 1)
    fields = ["m", "n", "k", "dtype", "config", "status", "us", "tflops", "vs_cublas",
              "rel_err", "mode", "samples", "cov", "sm_mhz", "error"]
    with open(os.path.join(args.out, "probe.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "run_info.json"), "w") as f:
        json.dump(info, f, indent=2)

    # Summary: best per shape against cuBLAS; each switch's effect on/off.
    print("\nshape                    dtype  cuBLAS TF/s  best TF/s  best/cuBLAS  best config")
    by_shape = {}
    for r in rows:
        by_shape.setdefault((r["m"], r["n"], r["k"], r["dtype"]), []).append(r)
    for s, rs in by_shape.items():
        cub = next(r for r in rs if r["config"] == "cublas")
        good = [r for r in rs if r["config"] != "cublas" and r.get("status") == "ok"]
        if not good:
            continue
        b = min(good, key=lambda r: r["us"])
        print(f"{s[0]}x{s[1]}x{s[2]:<14} {s[3]:5} {cub['tflops']:11} {b['tflops']:10} "
              f"{cub['us'] / b['us']:11.3f}  {b['config']}")
    for sw in ("ws", "fl", "st"):
        ratios = []
        for s, rs in by_shape.items():
            t = {r["config"]: r["us"] for r in rs if r.get("status") == "ok"}
            for k_on, us_on in t.items():
                if f"_{sw}1" not in k_on:
                    continue
                k_off = k_on.replace(f"_{sw}1", f"_{sw}0")
                if k_off in t:
                    ratios.append(t[k_off] / us_on)
        if ratios:
            print(f"switch {sw}: on is {statistics.median(ratios):.3f}x the speed of off "
                  f"(median of {len(ratios)} pairs, min {min(ratios):.3f}, "
                  f"max {max(ratios):.3f})")
    print(f"wall {info['wall_s']} s; compiled {len(ok)}/{len(cfgs)}")


if __name__ == "__main__":
    main()
