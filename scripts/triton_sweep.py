#!/usr/bin/env python3
"""The Triton runner: times the configs of origami-select's `triton` family on a GPU, so
that `origami-bench report` and `refit --family triton` can judge and fit the model on
Triton's kernels the way `origami-bench sweep` does for this project's own kernel.

For every shape of an inputs folder (made on a CPU with `origami-select M N K --family
triton --gpu h200 --all --format csv`, one file per shape) this script

  * compiles every config the family lists as feasible (BLOCK_SIZE_M/N/K, num_warps,
    num_stages) with the tutorial-style matmul kernel below, in a process pool, and
    records what Triton reports when the kernel is loaded: registers, spills, shared
    memory, or the failure (compile error, out of resources);
  * draws fresh random fp16 inputs per shape (A row-major M x K, B stored N x K),
    computes an fp32 reference, and for each config poisons C with NaN, runs it once
    and checks ||C - ref||_F / ||ref||_F <= 2e-3;
  * times the config: kernels under ~100 us as CUDA-graph replays of back-to-back
    launches, longer ones with CUDA events around single launches; the GPU is kept busy
    with a sleep kernel while the host enqueues, so launch gaps stay out; median of the
    samples. Configs already >= 1.5x slower than the best so far and over 2 ms get one
    sample (they cannot be the best; they keep their place in the ranking);
  * times cuBLAS (torch.mm(A, B.t())) the same way;
  * writes under --out: measurements.csv (the raw log: one row per shape x launch, with
    every sample; resume and the GROUP_SIZE_M pass read it), compile.csv, run_info.json,
    log.txt, and configs.csv + shapes.csv in origami-bench's layout
    (scripts/triton/bench_layout.py). Every metric and plot then comes from
    `origami-bench report --out DIR` (A/BF, A/cuBLAS, rank of the pick, Kendall tau-b,
    infeasible picks); this script computes none.

The model's pick (rank 1 of the listing) is launched with its phase-2 GROUP_SIZE_M. Every
other listed config is launched with GROUP_SIZE_M = 8 (the tutorial's value; the listing
leaves 1 there because phase 2 only runs for the winner), so the brute force also holds
the pick's launch at GROUP_SIZE_M = 8.

Specialisation: Triton specialises integer arguments equal to 1 and multiples of 16.
M and GROUP_SIZE_M are `do_not_specialize` (M = 1, 17, 333 ... would each compile a new
variant). N, K and the strides keep the multiple-of-16 specialisation: without it Triton
cannot prove 16-byte alignment of the K-contiguous rows, loads become 2-byte scalars and
the cp.async pipeline disappears (seen in the PTX, docs/triton.md). So a config compiles
to one variant per alignment class of N and K (scripts/triton/alignment.py: `spec_key`,
what Triton's launcher keys its cache on). The compile pool builds every (config,
variant) pair the run's shapes need before any timing, so that a shape whose N or K is
not a multiple of 16 does not compile inside its time budget; the script counts compiled
variants and reports any recompile during the sweep.

Usage (device):  python3 scripts/triton_sweep.py --inputs results/h200/triton/inputs --out $OUT
      then (CPU):  origami-bench report --out $OUT
A committed run of an older version of this script (measurements.csv only):
                 python3 scripts/triton/bench_layout.py RUN_DIR OUT_DIR
"""

import argparse
import csv
import glob
import json
import math
import os
import random
import statistics
import subprocess
import sys
import threading
import time

import triton

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "triton"))
from alignment import spec_key  # noqa: E402
from bench_layout import write_folder  # noqa: E402

# The tutorial kernel the `triton` family models: one definition for the sweep and for
# origami_gemm.triton.matmul (python/origami_gemm/kernels/triton_classic.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from origami_gemm.kernels.triton_classic import matmul_kernel  # noqa: E402

REL_TOL = 2e-3
GRAPH_BELOW_US = 100.0     # probe time under which a config is timed with CUDA graphs
# A probe at or above GRAPH_BELOW_US but under this is probed twice more and the fastest
# kept (as scripts/triton/tma_sweep.py does): a first launch's host costs can push the
# probe of a kernel of a few microseconds over the graph threshold, and CUDA events around
# back-to-back launches then time the host (results/h100/triton-auto/: a pick timed at
# 87.1 us in events mode that took 9.9 us at another GROUP_SIZE_M).
REPROBE_BELOW_US = 5000.0
GRAPH_TARGET_US = 400.0    # GPU time per graph replay
EVENT_TARGET_US = 15000.0  # GPU time per config in event mode (good configs)
SLOW_FACTOR = 1.5          # slower than this x best so far ...
SLOW_MIN_US = 2000.0       # ... and longer than this: one sample only
BF_GROUP_M = 8


# ----------------------------------------------------------------------------- inputs

def cfg_key(bm, bn, bk, g, w, s):
    return f"{bm}x{bn}x{bk}_g{g}_w{w}_s{s}"


ALIGNED_SPEC = spec_key(16, 16)


def compile_key(bm, bn, bk, w, s, spec=ALIGNED_SPEC):
    """A compiled variant: the config, and the shape's specialisation of N and K when it
    is not the aligned one (the aligned key keeps its earlier form)."""
    base = f"{bm}x{bn}x{bk}_w{w}_s{s}"
    return base if spec == ALIGNED_SPEC else f"{base}_{spec}"


def shape_spec(sh):
    return spec_key(sh["N"], sh["K"])


def compile_keys(shapes):
    """Every (BM, BN, BK, warps, stages, spec) the shapes' feasible configs need."""
    return sorted({(r["bm"], r["bn"], r["bk"], r["w"], r["s"], shape_spec(sh))
                   for sh in shapes for r in sh["rows"] if r["feasible"]})


_SPEC_DIM = {"D": 64, "": 40, "1": 1}


def spec_dims(spec):
    """(N, K) of a small problem that Triton specialises as `spec` (a spec_key)."""
    n, k = spec.split("_")
    return _SPEC_DIM[n[1:]], _SPEC_DIM[k[1:]]


def tiny_operands(torch, spec, m=64):
    """Small contiguous A (m x K), B (N x K), C (m x N) whose launch loads the `spec` variant."""
    n, k = spec_dims(spec)
    return (torch.randn((m, k), dtype=torch.float16, device="cuda"),
            torch.randn((n, k), dtype=torch.float16, device="cuda"),
            torch.empty((m, n), dtype=torch.float16, device="cuda"), m, n, k)


def load_inputs(folder, only=None):
    """shapes.csv (M,N,K,source,label) + one M_N_K.csv per shape (origami-select --all)."""
    shapes = []
    with open(os.path.join(folder, "shapes.csv")) as f:
        for r in csv.DictReader(f):
            M, N, K = int(r["M"]), int(r["N"]), int(r["K"])
            if only and (M, N, K) not in only:
                continue
            rows = []
            with open(os.path.join(folder, f"{M}_{N}_{K}.csv")) as g:
                for c in csv.DictReader(g):
                    rows.append({
                        "rank": int(c["rank"]) if c["rank"] else 10**6,
                        "bm": int(c["BLOCK_SIZE_M"]), "bn": int(c["BLOCK_SIZE_N"]),
                        "bk": int(c["BLOCK_SIZE_K"]), "g": int(c["GROUP_SIZE_M"]),
                        "w": int(c["num_warps"]), "s": int(c["num_stages"]),
                        "pred": float(c["predicted_cycles"]) if c["predicted_cycles"] else None,
                        "feasible": c["feasible"] == "true",
                        "reason": c["reason"],
                        "model_regs": c["registers"],
                        "smem": c["smem_bytes"],
                    })
            shapes.append({"M": M, "N": N, "K": K, "source": r.get("source", ""),
                           "label": r.get("label", ""), "rows": rows})
    return shapes


# -------------------------------------------------------------------------- compile pool

def _pool_init():
    import torch
    torch.cuda.set_device(0)


def _compile_one(ck):
    import torch
    bm, bn, bk, w, s, spec = ck
    t0 = time.time()
    out = {"compile_key": compile_key(*ck), "bm": bm, "bn": bn, "bk": bk, "w": w, "s": s,
           "spec": spec}
    try:
        a, b, c, m, n, kk = tiny_operands(torch, spec, m=16)
        k = matmul_kernel.warmup(a, b, c, m, n, kk, kk, kk, n, 8,
                                 BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                                 num_warps=w, num_stages=s, grid=(1,))
        out["shared_bytes"] = k.metadata.shared
        k._init_handles()
        out.update(status="ok", n_regs=k.n_regs, n_spills=k.n_spills, error="")
    except Exception as e:  # noqa: BLE001
        name = type(e).__name__
        out.update(status="out_of_resources" if "OutOfResources" in name else "compile_error",
                   n_regs="", n_spills="", error=f"{name}: {str(e)[:200]}")
    out["compile_s"] = round(time.time() - t0, 3)
    return out


def compile_all(keys, workers, log):
    import multiprocessing as mp
    t0 = time.time()
    res = []
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_pool_init) as pool:
        for i, r in enumerate(pool.imap_unordered(_compile_one, keys, chunksize=1)):
            res.append(r)
            if (i + 1) % 100 == 0:
                log(f"  compiled {i + 1}/{len(keys)} ({time.time() - t0:.0f} s)")
    log(f"compiled {len(keys)} configs in {time.time() - t0:.1f} s with {workers} workers: "
        + ", ".join(f"{st} {sum(r['status'] == st for r in res)}"
                    for st in ("ok", "out_of_resources", "compile_error")))
    return res


# ------------------------------------------------------------------------------ clocks

class ClockSampler:
    """Reads SM/memory clocks, power and temperature with NVML every `period` s."""

    def __init__(self, period=0.25):
        self.samples = []
        self.period = period
        self._stop = threading.Event()
        self.ok = False
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.ok = True
        except Exception as e:  # noqa: BLE001
            self.err = str(e)

    def start(self):
        if self.ok:
            self.t = threading.Thread(target=self._run, daemon=True)
            self.t.start()

    def _run(self):
        nv, h = self.nv, self.h
        while not self._stop.is_set():
            try:
                self.samples.append((
                    time.time(),
                    nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                    nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
                    nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
                    nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
                    nv.nvmlDeviceGetUtilizationRates(h).gpu,
                ))
            except Exception:  # noqa: BLE001
                pass
            self._stop.wait(self.period)

    def stop(self):
        self._stop.set()

    def window(self, t0, t1):
        """(median, min, max) SM clock over samples in [t0, t1] with the GPU busy."""
        xs = [s[1] for s in self.samples if t0 <= s[0] <= t1 and s[5] > 0]
        if not xs:
            return None
        return statistics.median(xs), min(xs), max(xs)


def smi(query="name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,"
              "power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active"):
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv"],
                           capture_output=True, text=True, timeout=20)
        return r.stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"error: {e}"


def make_launcher(ck, g, A, B, C, M, N, K):
    """A closure that launches config ck = (BM, BN, BK, warps, stages[, spec]) with
    GROUP_SIZE_M g (the spec is the shape's own; it only names the variant)."""
    bm, bn, bk, w, s = ck[:5]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    sa, sb, sc = A.stride(0), B.stride(0), C.stride(0)

    def run():
        matmul_kernel[grid](A, B, C, M, N, K, sa, sb, sc, g,
                            BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                            num_warps=w, num_stages=s)
    return run


# ------------------------------------------------------------------------------ timing

class Timer:
    def __init__(self, torch):
        self.torch = torch
        self.sleep_cycles = int(200e-6 * 1.98e9)  # ~200 us of GPU busy-wait

    def _ev(self, n):
        return [self.torch.cuda.Event(enable_timing=True) for _ in range(n)]

    def probe(self, run):
        e = self._ev(2)
        self.torch.cuda._sleep(self.sleep_cycles)
        e[0].record()
        run()
        e[1].record()
        self.torch.cuda.synchronize()
        return e[0].elapsed_time(e[1]) * 1000.0

    def graph(self, run, t1, replays=3):
        torch = self.torch
        n = max(2, min(64, math.ceil(GRAPH_TARGET_US / max(t1, 2.0))))
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            with torch.cuda.graph(g, stream=s):
                for _ in range(n):
                    run()
        torch.cuda.current_stream().wait_stream(s)
        g.replay()
        torch.cuda.synchronize()
        e = self._ev(replays + 1)
        torch.cuda._sleep(self.sleep_cycles)
        e[0].record()
        for i in range(replays):
            g.replay()
            e[i + 1].record()
        torch.cuda.synchronize()
        ts = [e[i].elapsed_time(e[i + 1]) * 1000.0 / n for i in range(replays)]
        g.reset()
        del g
        return statistics.median(ts), ts, n

    def events(self, run, reps):
        torch = self.torch
        e = self._ev(reps + 1)
        torch.cuda._sleep(self.sleep_cycles)
        e[0].record()
        for i in range(reps):
            run()
            e[i + 1].record()
        torch.cuda.synchronize()
        return [e[i].elapsed_time(e[i + 1]) * 1000.0 for i in range(reps)]

    def measure(self, run, best_us, t1):
        """(median us, samples, mode) after a probe launch that took t1 us."""
        if GRAPH_BELOW_US <= t1 < REPROBE_BELOW_US:
            t1 = min([t1] + [self.probe(run) for _ in range(2)])
        if t1 < GRAPH_BELOW_US:
            us, ts, n = self.graph(run, t1)
            return us, ts, f"graph{n}"
        if best_us and t1 > SLOW_FACTOR * best_us and t1 > SLOW_MIN_US:
            return t1, [t1], "single"
        if best_us and t1 > SLOW_FACTOR * best_us:
            reps = 2
        else:
            reps = max(2, min(10, round(EVENT_TARGET_US / t1)))
        ts = self.events(run, reps) + [t1]
        return statistics.median(ts), ts, f"events{reps}"


# ---------------------------------------------------------------------------- the sweep

def flops(M, N, K):
    return 2.0 * M * N * K


MEAS_FIELDS = ["M", "N", "K", "config", "role", "rank", "BLOCK_SIZE_M", "BLOCK_SIZE_N",
               "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages", "predicted_cycles",
               "measured_us", "tflops", "status", "rel_err", "mode", "samples_us",
               "n_regs", "n_spills", "shared_bytes", "error"]


def run_sweep(args):
    import torch
    t_start = time.time()
    deadline = t_start + args.deadline_s
    os.makedirs(args.out, exist_ok=True)
    logf = open(os.path.join(args.out, "log.txt"), "a")

    def log(msg):
        line = f"[{time.time() - t_start:6.1f}s] {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    only = None
    if args.shapes:
        only = {tuple(int(v) for v in s.split(",")) for s in args.shapes.split(";")}
    shapes = load_inputs(args.inputs, only)
    shapes.sort(key=lambda s: flops(s["M"], s["N"], s["K"]))
    rng = random.Random(args.seed)
    if args.max_configs:  # smoke test: the pick plus a sample
        for sh in shapes:
            feas = [r for r in sh["rows"] if r["feasible"]]
            keep = feas[:1] + rng.sample(feas[1:], min(len(feas) - 1, args.max_configs - 1))
            sh["rows"] = keep
    log(f"{len(shapes)} shapes; triton {triton.__version__}, torch {torch.__version__}, "
        f"{torch.cuda.get_device_name(0)}")
    log("nvidia-smi at start:\n" + smi())

    # Resume: (shape, config, role) rows already measured.
    done = {}
    meas_path = os.path.join(args.out, "measurements.csv")
    prev_rows = []
    if args.resume:
        for p in glob.glob(os.path.join(args.resume, "measurements.csv")):
            with open(p) as f:
                prev_rows = list(csv.DictReader(f))
        for r in prev_rows:
            done[(int(r["M"]), int(r["N"]), int(r["K"]), r["config"], r["role"])] = r
        log(f"resume: {len(prev_rows)} rows from {args.resume}")
    fresh = not os.path.exists(meas_path)
    meas_f = open(meas_path, "a", newline="")
    meas_w = csv.DictWriter(meas_f, fieldnames=MEAS_FIELDS)
    if fresh:
        meas_w.writeheader()
        for r in prev_rows:
            meas_w.writerow({k: r.get(k, "") for k in MEAS_FIELDS})
        meas_f.flush()

    clocks = ClockSampler()
    clocks.start()

    # 1. compile every feasible config once per variant the shapes need.
    ckeys = compile_keys(shapes)
    specs = sorted({k[5] for k in ckeys})
    log(f"{len(ckeys)} compiled variants needed: {len(specs)} specialisation(s) {specs}")
    comp = {}
    comp_path = os.path.join(args.out, "compile.csv")
    if args.resume and os.path.exists(os.path.join(args.resume, "compile.csv")):
        with open(os.path.join(args.resume, "compile.csv")) as f:
            for r in csv.DictReader(f):
                comp[(int(r["bm"]), int(r["bn"]), int(r["bk"]), int(r["w"]), int(r["s"]),
                      r.get("spec") or ALIGNED_SPEC)] = r
    todo = [k for k in ckeys if k not in comp]
    # Compile the biggest tiles first (slowest compiles) to balance the pool.
    todo.sort(key=lambda k: -(k[0] * k[1] * k[4] + k[0] * k[2] + k[1] * k[2]))
    if todo:
        for r in compile_all(todo, args.workers, log):
            comp[(r["bm"], r["bn"], r["bk"], r["w"], r["s"], r["spec"])] = r
    comp_fields = ["compile_key", "bm", "bn", "bk", "w", "s", "spec", "status", "n_regs",
                   "n_spills", "shared_bytes", "compile_s", "error"]
    with open(comp_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=comp_fields)
        w.writeheader()
        for k in sorted(comp):
            w.writerow({c: comp[k].get(c, "") for c in comp_fields})

    # 2. load every good module in this process (tiny launch), count variants.
    torch.cuda.set_device(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    tiny = [torch.randn((64, 64), dtype=torch.float16, device="cuda") for _ in range(3)]
    tiny_by_spec = {sp: tiny_operands(torch, sp) for sp in specs}

    launcher = make_launcher

    t0 = time.time()
    for ck in ckeys:
        if comp[ck]["status"] != "ok":
            continue
        try:
            launcher(ck, 8, *tiny_by_spec[ck[5]])()
        except Exception as e:  # noqa: BLE001
            comp[ck]["status"] = "launch_error"
            comp[ck]["error"] = f"{type(e).__name__}: {str(e)[:200]}"
    torch.cuda.synchronize()
    log(f"loaded modules in {time.time() - t0:.1f} s")

    def n_variants():
        try:
            return sum(len(c[0]) for c in matmul_kernel.device_caches.values())
        except Exception:  # noqa: BLE001
            return -1
    variants0 = n_variants()

    timer = Timer(torch)

    # 3. launch floors (64^3 with the first good config): eager events vs graph replay.
    floors = {}
    good = [ck for ck in ckeys if comp[ck]["status"] == "ok"]
    if good:
        ck = (64, 64, 64, 4, 2, ALIGNED_SPEC)
        ck = ck if ck in good else good[0]
        run = launcher(ck, 8, *tiny_by_spec.get(ck[5], tiny_operands(torch, ck[5])))
        for _ in range(20):
            run()
        torch.cuda.synchronize()
        e = timer._ev(2)
        e[0].record()
        for _ in range(200):
            run()
        e[1].record()
        torch.cuda.synchronize()
        floors["triton_eager_us_per_launch"] = e[0].elapsed_time(e[1]) * 1000 / 200
        floors["triton_graph_us_per_launch"] = timer.graph(run, 1.0, replays=5)[0]
        cb = lambda: torch.mm(tiny[0], tiny[1].t(), out=tiny[2])  # noqa: E731
        for _ in range(20):
            cb()
        torch.cuda.synchronize()
        e[0].record()
        for _ in range(200):
            cb()
        e[1].record()
        torch.cuda.synchronize()
        floors["cublas_eager_us_per_launch"] = e[0].elapsed_time(e[1]) * 1000 / 200
        floors["cublas_graph_us_per_launch"] = timer.graph(cb, 1.0, replays=5)[0]
        floors["floor_config"] = compile_key(*ck)
        log(f"launch floors (64^3): {floors}")

    # 4. the shapes.
    def est_cost(s):  # rough seconds: per-config overhead + ~2 launches at ~150 TFLOP/s
        n = sum(1 for r in s["rows"] if r["feasible"])
        return n * (0.004 + 2.0 * flops(s["M"], s["N"], s["K"]) / 150e12)
    prev_perf = {}  # compile key -> TFLOP/s on the previous shape (ordering only)
    shape_info = []
    stopped = False
    for si, sh in enumerate(shapes):
        M, N, K = sh["M"], sh["N"], sh["K"]
        fl = flops(M, N, K)
        now = time.time()
        remaining_w = sum(est_cost(s) for s in shapes[si:])
        budget = (deadline - now) * est_cost(sh) / remaining_w
        shape_deadline = min(deadline, now + budget)
        info = {"M": M, "N": N, "K": K, "source": sh["source"], "label": sh["label"],
                "t0": now, "budget_s": round(budget, 1)}
        if now > deadline - 5:
            log(f"deadline: {M}x{N}x{K} not started")
            info["skipped"] = True
            shape_info.append(info)
            stopped = True
            continue
        torch.manual_seed(args.seed * 1000003 + M * 31 + N * 7 + K)
        A = torch.randn((M, K), dtype=torch.float16, device="cuda")
        B = torch.randn((N, K), dtype=torch.float16, device="cuda")
        C = torch.empty((M, N), dtype=torch.float16, device="cuda")
        assert M * K < 2**31 and N * K < 2**31 and M * N < 2**31, "int32 offsets"
        ref = torch.matmul(A.float(), B.float().t())
        ref_norm = torch.linalg.norm(ref).item()

        def check():
            return (torch.linalg.norm(C.float() - ref).item() / ref_norm)

        def emit(row):
            meas_w.writerow({k: row.get(k, "") for k in MEAS_FIELDS})

        # cuBLAS
        key0 = (M, N, K, "cublas", "cublas")
        if key0 not in done:
            cb = lambda: torch.mm(A, B.t(), out=C)  # noqa: E731
            cb()
            torch.cuda.synchronize()
            C.fill_(float("nan"))
            t1 = timer.probe(cb)
            err = check()
            us, ts, mode = timer.measure(cb, None, t1)
            emit({"M": M, "N": N, "K": K, "config": "cublas", "role": "cublas",
                  "measured_us": f"{us:.3f}", "tflops": f"{fl / us / 1e6:.3f}",
                  "status": "ok" if err <= REL_TOL else "wrong", "rel_err": f"{err:.3e}",
                  "mode": mode, "samples_us": " ".join(f"{t:.2f}" for t in ts)})

        spec = shape_spec(sh)
        feas = [r for r in sh["rows"] if r["feasible"]]
        pick = min(sh["rows"], key=lambda r: r["rank"])
        jobs = [(pick, "pick", pick["g"])]
        order = sorted(feas, key=lambda r: (-prev_perf.get((r["bm"], r["bn"], r["bk"], r["w"], r["s"], spec), -1.0), r["rank"]))
        jobs += [(r, "bf", BF_GROUP_M) for r in order]
        best_us = None
        n_done = n_skip = 0
        for r, role, g in jobs:
            ck = (r["bm"], r["bn"], r["bk"], r["w"], r["s"], spec)
            key = cfg_key(r["bm"], r["bn"], r["bk"], g, r["w"], r["s"])
            base = {"M": M, "N": N, "K": K, "config": key, "role": role, "rank": r["rank"],
                    "BLOCK_SIZE_M": r["bm"], "BLOCK_SIZE_N": r["bn"], "BLOCK_SIZE_K": r["bk"],
                    "GROUP_SIZE_M": g, "num_warps": r["w"], "num_stages": r["s"],
                    "predicted_cycles": r["pred"]}
            if (M, N, K, key, role) in done:
                d = done[(M, N, K, key, role)]
                if d["status"] == "ok":
                    us = float(d["measured_us"])
                    best_us = us if best_us is None else min(best_us, us)
                continue
            cinfo = comp.get(ck, {"status": "not_compiled", "error": "infeasible in listing"})
            base.update(n_regs=cinfo.get("n_regs", ""), n_spills=cinfo.get("n_spills", ""),
                        shared_bytes=cinfo.get("shared_bytes", ""))
            if cinfo["status"] != "ok":
                base.update(status=cinfo["status"], error=cinfo.get("error", ""))
                emit(base)
                continue
            if time.time() > shape_deadline and role != "pick":
                n_skip += 1
                base.update(status="not_timed_budget")
                emit(base)
                continue
            run = launcher(ck, g, A, B, C, M, N, K)
            try:
                C.fill_(float("nan"))  # poison; the timed probe launch is also the check
                t1 = timer.probe(run)
                err = check()
                if not err <= REL_TOL:
                    base.update(status="wrong", rel_err=f"{err:.3e}")
                    emit(base)
                    continue
                us, ts, mode = timer.measure(run, best_us, t1)
            except Exception as e:  # noqa: BLE001
                base.update(status="run_error", error=f"{type(e).__name__}: {str(e)[:200]}")
                emit(base)
                continue
            best_us = us if best_us is None else min(best_us, us)
            if role == "bf":
                prev_perf[ck] = fl / us / 1e6
            n_done += 1
            base.update(measured_us=f"{us:.3f}", tflops=f"{fl / us / 1e6:.3f}", status="ok",
                        rel_err=f"{err:.3e}", mode=mode,
                        samples_us=" ".join(f"{t:.2f}" for t in ts))
            emit(base)
        meas_f.flush()
        info["t1"] = time.time()
        info["n_timed_now"] = n_done
        info["n_not_timed_budget"] = n_skip
        cw = clocks.window(info["t0"], info["t1"])
        if cw:
            info["sm_clock_mhz_median"], info["sm_clock_mhz_min"], info["sm_clock_mhz_max"] = cw
        shape_info.append(info)
        log(f"{M}x{N}x{K}: {info['t1'] - info['t0']:.1f} s (budget {budget:.1f}), "
            f"timed {n_done}, budget-skipped {n_skip}; SM clock {cw}")
        del A, B, C, ref
        torch.cuda.empty_cache()

    variants1 = n_variants()
    clocks.stop()
    meas_f.close()
    log("nvidia-smi at end:\n" + smi())
    sm = [x[1] for x in clocks.samples if x[5] > 0]
    run_info = {
        "triton": triton.__version__, "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0), "nvidia_smi_start_end": "see log.txt",
        "launch_floors": floors,
        "compiled_variants_after_load": variants0, "compiled_variants_at_end": variants1,
        "recompiles_during_sweep": (variants1 - variants0) if variants0 >= 0 else None,
        "sm_clock_mhz_busy": ({"median": statistics.median(sm), "min": min(sm), "max": max(sm),
                               "n": len(sm)} if sm else None),
        "mem_clock_mhz_busy": (statistics.median([x[2] for x in clocks.samples if x[5] > 0])
                               if sm else None),
        "power_w_busy_max": max([x[3] for x in clocks.samples if x[5] > 0], default=None),
        "temp_c_max": max([x[4] for x in clocks.samples], default=None),
        "stopped_at_deadline": stopped,
        "wall_s": round(time.time() - t_start, 1),
        "shape_timing": shape_info,
        "args": vars(args),
    }
    with open(os.path.join(args.out, "run_info.json"), "w") as f:
        json.dump(run_info, f, indent=1, default=str)
    with open(meas_path) as f:
        rows = list(csv.DictReader(f))
    write_bench_folder(args.out, rows, args.inputs, run_info, log)



# ------------------------------------------------------------------ GROUP_SIZE_M refinement

def refine_groups(grid_m, groups):
    """GROUP_SIZE_M values that order a grid of grid_m tile rows differently (every G >=
    grid_m gives the same order: keep the smallest), always with 8 (the repeat)."""
    gs = [g for g in groups if g < grid_m]
    ge = [g for g in groups if g >= grid_m]
    if ge:
        gs.append(min(ge))
    if 8 not in gs:
        gs.append(8)
    return sorted(set(gs))


def run_refine(args):
    """Second pass: for each shape, the pick's launch and the `--top` fastest brute-force
    configs of a previous run, timed again at every GROUP_SIZE_M of phase 2's candidate
    list (those a shape's tile grid can tell apart). The G = 8 rows repeat the first pass
    on fresh inputs (repeatability); the others complete the brute force over GROUP_SIZE_M
    for the contenders."""
    import torch
    t_start = time.time()
    deadline = t_start + args.deadline_s
    os.makedirs(args.out, exist_ok=True)
    logf = open(os.path.join(args.out, "log.txt"), "a")

    def log(msg):
        line = f"[{time.time() - t_start:6.1f}s] {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    with open(os.path.join(args.refine, "measurements.csv")) as f:
        prev = list(csv.DictReader(f))
    groups = [int(g) for g in args.groups.split(",")]
    by = {}
    for r in prev:
        by.setdefault((int(r["M"]), int(r["N"]), int(r["K"])), []).append(r)
    plan = []
    for (M, N, K), rs in by.items():
        ok = sorted((r for r in rs if r["role"] == "bf" and r["status"] == "ok"),
                    key=lambda r: float(r["measured_us"]))
        pick = [r for r in rs if r["role"] == "pick"][0]
        cks = []
        for r in [pick] + ok:
            ck = (int(r["BLOCK_SIZE_M"]), int(r["BLOCK_SIZE_N"]), int(r["BLOCK_SIZE_K"]),
                  int(r["num_warps"]), int(r["num_stages"]), spec_key(N, K))
            if ck not in [c for c, _ in cks]:
                cks.append((ck, r))
            if len(cks) >= args.top + 1:
                break
        plan.append(((M, N, K), cks, float(ok[0]["measured_us"])))
    plan.sort(key=lambda p: flops(*p[0]))
    ckeys = sorted({ck for _, cks, _ in plan for ck, _ in cks})
    log(f"refine: {len(plan)} shapes, {len(ckeys)} configs, groups {groups}; "
        f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    log("nvidia-smi at start:\n" + smi())
    clocks = ClockSampler()
    clocks.start()
    comp = {(r["bm"], r["bn"], r["bk"], r["w"], r["s"], r["spec"]): r
            for r in compile_all(ckeys, args.workers, log)}
    torch.cuda.set_device(0)
    tiny_by_spec = {sp: tiny_operands(torch, sp) for sp in {ck[5] for ck in ckeys}}
    for ck in ckeys:
        if comp[ck]["status"] == "ok":
            make_launcher(ck, 8, *tiny_by_spec[ck[5]])()
    torch.cuda.synchronize()
    timer = Timer(torch)
    fields = MEAS_FIELDS + ["first_pass_us"]
    out_f = open(os.path.join(args.out, "refine.csv"), "w", newline="")
    w = csv.DictWriter(out_f, fieldnames=fields)
    w.writeheader()
    for (M, N, K), cks, best_prev in plan:
        if time.time() > deadline:
            log(f"deadline: {M}x{N}x{K} not refined")
            continue
        t0 = time.time()
        fl = flops(M, N, K)
        torch.manual_seed(args.seed * 7919 + M * 131 + N * 17 + K)
        A = torch.randn((M, K), dtype=torch.float16, device="cuda")
        B = torch.randn((N, K), dtype=torch.float16, device="cuda")
        C = torch.empty((M, N), dtype=torch.float16, device="cuda")
        ref = torch.matmul(A.float(), B.float().t())
        ref_norm = torch.linalg.norm(ref).item()
        best_us = best_prev
        n = 0
        for ck, r0 in cks:
            for g in refine_groups(triton.cdiv(M, ck[0]), groups):
                row = {"M": M, "N": N, "K": K, "config": cfg_key(*ck[:3], g, *ck[3:5]),
                       "role": "refine", "rank": r0["rank"], "BLOCK_SIZE_M": ck[0],
                       "BLOCK_SIZE_N": ck[1], "BLOCK_SIZE_K": ck[2], "GROUP_SIZE_M": g,
                       "num_warps": ck[3], "num_stages": ck[4],
                       "predicted_cycles": r0["predicted_cycles"],
                       "n_regs": comp[ck].get("n_regs", ""), "n_spills": comp[ck].get("n_spills", ""),
                       "shared_bytes": comp[ck].get("shared_bytes", "")}
                first = [x for x in by[(M, N, K)] if x["config"] == row["config"] and x["role"] == "bf"]
                row["first_pass_us"] = first[0]["measured_us"] if first else ""
                if comp[ck]["status"] != "ok":
                    row.update(status=comp[ck]["status"], error=comp[ck].get("error", ""))
                    w.writerow({k: row.get(k, "") for k in fields})
                    continue
                run = make_launcher(ck, g, A, B, C, M, N, K)
                C.fill_(float("nan"))
                t1 = timer.probe(run)
                err = torch.linalg.norm(C.float() - ref).item() / ref_norm
                if not err <= REL_TOL:
                    row.update(status="wrong", rel_err=f"{err:.3e}")
                    w.writerow({k: row.get(k, "") for k in fields})
                    continue
                us, ts, mode = timer.measure(run, best_us, t1)
                best_us = min(best_us, us)
                n += 1
                row.update(measured_us=f"{us:.3f}", tflops=f"{fl / us / 1e6:.3f}", status="ok",
                           rel_err=f"{err:.3e}", mode=mode,
                           samples_us=" ".join(f"{t:.2f}" for t in ts))
                w.writerow({k: row.get(k, "") for k in fields})
        out_f.flush()
        cw = clocks.window(t0, time.time())
        log(f"{M}x{N}x{K}: {n} timed in {time.time() - t0:.1f} s; SM clock {cw}")
        del A, B, C, ref
        torch.cuda.empty_cache()
    out_f.close()
    clocks.stop()
    log("nvidia-smi at end:\n" + smi())
    sm = [x[1] for x in clocks.samples if x[5] > 0]
    if sm:
        log(f"SM clock while busy: median {statistics.median(sm)}, min {min(sm)}, max {max(sm)} MHz")
    # The first pass and this one together, in origami-bench's layout.
    with open(os.path.join(args.out, "refine.csv")) as g:
        rows = prev + list(csv.DictReader(g))
    ri = None
    p = os.path.join(args.refine, "run_info.json")
    if os.path.exists(p):
        with open(p) as f:
            ri = json.load(f)
    inputs = ((ri or {}).get("args") or {}).get("inputs") or args.inputs
    write_bench_folder(args.out, rows, inputs, ri, log)


def write_bench_folder(out, rows, inputs, run_info, log):
    """configs.csv + shapes.csv for `origami-bench report` (scripts/triton/bench_layout.py)."""
    shapes, configs = write_folder(out, rows, inputs, run_info)
    log(f"{shapes} shapes, {configs} config rows in origami-bench's layout; metrics and "
        f"plots: origami-bench report --out {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", default="results/h200/triton/inputs")
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", help="only these shapes: 'M,N,K;M,N,K'")
    ap.add_argument("--max-configs", type=int, default=0, help="smoke test: pick + a sample")
    ap.add_argument("--workers", type=int, default=15)
    ap.add_argument("--deadline-s", type=float, default=500.0)
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--resume", help="folder with a previous measurements.csv/compile.csv")
    ap.add_argument("--refine", help="second pass over GROUP_SIZE_M for the contenders of "
                    "the first pass whose measurements.csv is in this folder")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--groups", default="1,2,4,8,16")
    args = ap.parse_args()
    if args.refine:
        run_refine(args)
        return
    run_sweep(args)


if __name__ == "__main__":
    main()
