#!/usr/bin/env python3
"""Is a triton-tma launch's time bimodal, and what decides the mode? (issue 11: on the
one-wave shape 4100x576x7168 the pick 128x256x64 ran 78 us in some passes and 100-110 us in
others at a steady clock, `results/h100/triton-tma/README.md`.) For each config, ROUNDS
rounds: fresh A, B and C buffers (new allocations, or the same ones with --keep), then the
launch timed with CUDA events (median of REPS back-to-back launches after a warm-up), with
the buffers' device addresses and the SM clock (NVML) beside it. One CSV row per round.
--keep --refill keeps the buffers and draws new values into them each round (content
apart from placement).

Usage (device): python3 scripts/triton/tma_bimodal.py M N K CONFIG [CONFIG ...]
                [--rounds 24] [--reps 20] [--dtype fp16|bf16] [--keep [--refill]] > rounds.csv
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))


def bad_input(why):
    """One line on stderr and exit 2, the project's code for bad input."""
    print(f"tma_bimodal: {why}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("m", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("configs", nargs="+", help="BMxBNxBK,gG,wW,sS[,switch...]")
    ap.add_argument("--rounds", type=int, default=24)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16")
    ap.add_argument("--keep", action="store_true", help="the same buffers in every round")
    ap.add_argument("--refill", action="store_true",
                    help="with --keep: new random values in the same buffers every round")
    a = ap.parse_args()
    if min(a.m, a.n, a.k, a.rounds, a.reps) < 1:
        bad_input("M, N, K, --rounds and --reps must be positive")
    import torch
    from origami_gemm.kernels.triton_tma import matmul, parse_text
    try:
        cfgs = [(text, parse_text(text)) for text in a.configs]
    except ValueError as e:
        bad_input(e)
    try:
        import pynvml
        pynvml.nvmlInit()
        nvml = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    except Exception:  # noqa: BLE001  (no NVML: no clock column)
        nvml = None
    dt = torch.float16 if a.dtype == "fp16" else torch.bfloat16
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    bufs = None
    print("round,config,us,us_min,us_max,a_addr,b_addr,sm_mhz")
    for rnd in range(a.rounds):
        if bufs is None or not a.keep:
            # a spacer of a round-dependent size moves the next allocations
            spacer = torch.empty((rnd % 7 + 1) * (1 << 20), device="cuda", dtype=torch.uint8)
            x = torch.randn(a.m, a.k, device="cuda", dtype=dt, generator=gen)
            w = torch.randn(a.n, a.k, device="cuda", dtype=dt, generator=gen)
            bufs = (x, w, spacer)
        x, w, _ = bufs
        if a.keep and a.refill and rnd > 0:
            x.normal_(generator=gen)
            w.normal_(generator=gen)
        for text, cfg in cfgs:
            matmul(x, w, cfg)
            torch.cuda.synchronize()
            times = []
            for _ in range(a.reps):
                # ten launches between two events: the queue stays ahead of the GPU, so
                # the host's launch cost is not timed (a launch here is 30 us or more)
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                for _ in range(10):
                    matmul(x, w, cfg)
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e) * 100.0)
            mhz = (pynvml.nvmlDeviceGetClockInfo(nvml, pynvml.NVML_CLOCK_SM)
                   if nvml is not None else "")
            print(f"{rnd},\"{text}\",{statistics.median(times):.2f},{min(times):.2f},"
                  f"{max(times):.2f},{x.data_ptr():#x},{w.data_ptr():#x},{mhz}", flush=True)


if __name__ == "__main__":
    main()
