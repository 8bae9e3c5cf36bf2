#!/usr/bin/env python3
"""Brute-force sweep of the `triton-tma` family: every config of a list, timed on every
shape of a list, in fp16 and/or bf16, against cuBLAS, on one GPU.

The kernel is Triton's persistent tensor-descriptor matmul of
python/origami_gemm/kernels/triton_tma.py (C = A @ B^T, A M x K, B N x K, row-major). The
pieces are tma_probe.py's (compile pool, launcher, NaN-poisoned verification, timer,
NVML clock sampler); this script adds the run around them:

  * configs: --configs FILE (a CSV whose `config` column holds the Rust model's text form,
    e.g. 128x256x64,g8,w8,s3 or 128x256x64,g8,w8,s3,flatten), else the default space:
    BM, BN in {64, 128, 256}, BK in {64, 128}, 4 or 8 warps, 3 to 5 stages, GROUP_SIZE_M 8,
    FLATTEN off and on, no warp specialization, no subtiling, less the operand rings
    (stages x (BM + BN) x BK x 2 bytes) over 232448 - 4096 bytes: 124 configs;
  * compile: every config x input type of the run, up front, in a process pool, once per
    class of the shapes' integer arguments that Triton specializes on (1, a multiple of
    16, other: M = 1 or M = 4100 compile kernels of their own); compile.csv;
  * per shape and input type: fresh random inputs (seeded by shape and type, so a resumed
    or sharded run draws the same), cuBLAS (torch.mm(A, B.t())) timed before the configs,
    every config checked against cuBLAS's result (C poisoned with NaN, relative Frobenius
    error <= 2e-3) and then timed (CUDA graphs under ~100 us, CUDA events above, median;
    a busy-wait kernel hides the launch gaps), cuBLAS timed again after the configs; the
    after/before ratio is the drift of the GPU's clocks over the shape. A config that
    fails to compile, verify or run is recorded with the reason, never dropped;
  * writes under --out: measurements.csv (one row per shape x type x config and the two
    cuBLAS rows, with NVML clocks, CoV, mode, samples), compile.csv, run_info.json
    (GPU, driver, versions, kernel sha256, command line, nvidia-smi before and after,
    power limit; one entry per run of the folder), and configs.csv + shapes.csv in
    origami-bench's layout (tma_layout.py): `origami-bench report --out DIR` reads them.

With --passes P (P > 1) each shape's launches are timed P times in alternating order
(cuBLAS before, the configs, cuBLAS after; then backward; ...) and each row keeps the
median over its passes (`us`), the passes' times (`pass_us`) and their count (`passes`);
the row's samples, CoV and clocks are its first pass's. Under the 700 W cap the large
shapes' clocks drift while they run, and a single pass ranks a launch partly by its place.
With --shuffle the passes after the first each take a random order of their own (seeded by
--seed): under the cap a launch also runs faster after a slower, lower-power one, which
forward and backward passes keep the same for every pass.

A shape's rows are written and flushed when the shape ends, so a run cut off loses at
most one shape; --resume skips the (shape, type, config) rows already in the folder and
appends. --deadline-s stops before starting a shape that would not finish in time, and
between two configs once the time is up (the shape's finished rows are kept; --resume
completes it). --shard I/N takes the shapes at positions I, I + N, ... of the list.
A shape listed twice in one set (one GEMM of two models) is timed once, its labels joined.

Example (device):
  python3 scripts/triton/tma_sweep.py --out $OUT/sweep --shapes llm --dtype fp16,bf16 \\
      --deadline-s 540
then (CPU): origami-bench report --out DIR
"""
import argparse
import csv
import hashlib
import json
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tma_probe as probe  # noqa: E402  (puts python/ and scripts/ on sys.path)
from tma_layout import (CUBLAS_AFTER, CUBLAS_BEFORE, MEAS_COLUMNS,  # noqa: E402
                        write_run_layout)

ROOT = probe.ROOT
LISTS = {"seed": "seed_shapes", "llm": "llm_shapes"}
DTYPES = ("fp16", "bf16")
# (WARP_SPECIALIZE, FLATTEN) settings of the default space.
SWEEP_SWITCHES = ((False, False), (False, True))
DEFAULT_SEED = 20261124
CLOCK_PAD_S = 0.25  # NVML's sampling period: a row's clocks come from its window +- this
# A first probe launch at or above the timer's graph threshold but under this is probed
# twice more and the fastest kept: on the device's smoke run the first cuBLAS call and the
# first Triton config of a process probed above 100 us (host-side first-call costs) and
# went to event mode at 1024^3, where events measure the host (39.5 us against 5.8 us).
REPROBE_BELOW_US = 5000.0
# A timing whose samples spread more than this (CoV) is taken again, up to RETIMES more
# times, and the one with the lowest median kept: the device's validation run of
# 2026-11-25 had launches that stalled for about a millisecond (128x256x64,g8,w8,s3 at
# 128x28672x4096 timed 1078.6 us, CoV 0.28, beside 95.7 us for the same launch at
# GROUP_SIZE_M 16); a stalled probe also leaves the timer too few samples to outvote it.
RETIME_COV = 0.1
RETIMES = 2
# The compile launch's side per class of an integer argument (a multiple of 8, so that
# N and K keep TMA's 16-byte rows).
CLASS_SIDE = {"1": 1, "16": 256, "x": 264}


START = time.time()


def log(msg):
    """A progress line on stderr, with the seconds since the script started."""
    print(f"[tma_sweep {time.time() - START:7.1f} s] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- the plan

def default_configs():
    """The default space (see the module docstring): 124 configs."""
    return probe.wide_configs(SWEEP_SWITCHES)


def read_config_file(path):
    """The configs of a CSV with a `config` column (the Rust model's text form; '#' lines
    are comments, other columns ignored), in order, duplicates dropped. ValueError (one
    line, naming file and line) for a bad file or config."""
    from origami_gemm.kernels.triton_tma import parse_text
    try:
        with open(path, newline="") as f:
            lines = [(i + 1, line) for i, line in enumerate(f)
                     if line.strip() and not line.lstrip().startswith("#")]
    except OSError as e:
        raise ValueError(f"--configs {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError(f"--configs {path}: not a text file") from None
    if not lines:
        raise ValueError(f"--configs {path}: empty (expected a header with a 'config' column)")
    reader = csv.reader(line for _, line in lines)
    header = [h.strip() for h in next(reader)]
    if "config" not in header:
        raise ValueError(f"--configs {path} line {lines[0][0]}: no 'config' column in the "
                         f"header {header}")
    col = header.index("config")
    out, seen = [], set()
    for (lineno, _), row in zip(lines[1:], reader):
        if len(header) == 1:  # one column: the whole line is the config, quoted or not
            text = ",".join(row)
        elif len(row) != len(header):
            raise ValueError(f"--configs {path} line {lineno}: {len(row)} fields, the header "
                             f"has {len(header)} (quote the config: its text holds commas)")
        else:
            text = row[col]
        try:
            c = parse_text(text)
        except ValueError as e:
            raise ValueError(f"--configs {path} line {lineno}: {e}") from None
        if c not in seen:
            seen.add(c)
            out.append(c)
    if not out:
        raise ValueError(f"--configs {path}: no config rows")
    return out


def parse_shape(text):
    """(M, N, K) from MxNxK; N and K must be multiples of 8 (TMA's 16-byte rows)."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"--shape '{text}': expected MxNxK with positive whole numbers")
    m, n, k = (int(p) for p in parts)
    check_tma_shape(m, n, k, f"--shape '{text}'")
    return m, n, k


def check_tma_shape(m, n, k, where):
    for name, v in (("N", n), ("K", k)):
        if v % 8:
            raise ValueError(f"{where}: {name} = {v} is not a multiple of 8 (TMA needs "
                             "16-byte rows of fp16/bf16)")


def parse_dtypes(values):
    """The input types of --dtype (repeatable, comma lists), in the order first named."""
    out = []
    for v in values or ["fp16"]:
        for d in v.split(","):
            d = d.strip()
            if d not in DTYPES:
                raise ValueError(f"--dtype '{d}': expected fp16 or bf16")
            if d not in out:
                out.append(d)
    return out


def parse_shard(text):
    """(I, N) from I/N, 0 <= I < N (the shapes at positions I, I + N, ...)."""
    i, sep, n = (text or "").partition("/")
    if not sep or not i.strip().isdigit() or not n.strip().isdigit():
        raise ValueError(f"--shard '{text}': expected I/N (shard I of N, numbered from 0)")
    i, n = int(i), int(n)
    if n < 1 or i >= n:
        raise ValueError(f"--shard '{text}': need 0 <= I < N")
    return i, n


def list_entries(name):
    """The shapes of data/<name>.csv as entries (set, label, M, N, K): label is
    model/layer where the list has them; a shape listed twice is one entry, labels joined."""
    entries, index = [], {}
    for lineno, r in enumerate(probe.shape_list(ROOT, name), start=2):
        try:
            m, n, k = int(r["M"]), int(r["N"]), int(r["K"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"data/{name}.csv row {lineno}: M, N, K must be whole numbers") \
                from None
        check_tma_shape(m, n, k, f"data/{name}.csv {m}x{n}x{k}")
        label = "/".join(x for x in (r.get("model"), r.get("layer")) if x)
        if (m, n, k) in index:
            e = entries[index[(m, n, k)]]
            e["label"] = "; ".join(x for x in (e["label"], label) if x)
            continue
        index[(m, n, k)] = len(entries)
        entries.append({"set": name, "label": label, "m": m, "n": n, "k": k})
    return entries


def plan_shapes(lists, shapes, shard):
    """The run's shape entries: the lists in order, then the --shape ones (set 'listed'),
    then this shard's share."""
    entries = []
    for name in lists:
        entries += list_entries(LISTS[name])
    seen = set()
    for text in shapes:
        m, n, k = parse_shape(text)
        if (m, n, k) not in seen:
            seen.add((m, n, k))
            entries.append({"set": "listed", "label": "", "m": m, "n": n, "k": k})
    if not entries:
        raise ValueError("no shapes: give --shapes seed|llm or --shape MxNxK")
    i, n = shard
    return [e for pos, e in enumerate(entries) if pos % n == i]


def spec_class(v):
    """How Triton specializes an integer argument: '1' (equal to 1), '16' (a multiple of
    16) or 'x' (anything else)."""
    return "1" if v == 1 else ("16" if v % 16 == 0 else "x")


def shape_spec(m, n, k):
    """The compile class of a shape, e.g. M16N16K16: the kernel's integer arguments are
    M, N, K and the row strides K, K, N, so these three decide its specialization."""
    return f"M{spec_class(m)}N{spec_class(n)}K{spec_class(k)}"


def spec_shape(spec):
    """A small (M, N, K) of a compile class, for the compile launch."""
    m = re.fullmatch(r"M(1|16|x)N(1|16|x)K(1|16|x)", spec)
    if not m:
        raise ValueError(f"compile class '{spec}': expected M<c>N<c>K<c>, c in 1, 16, x")
    return tuple(CLASS_SIDE[x] for x in m.groups())


def row_key(r):
    return (r["set"], r["label"], int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"],
            r["config"])


# ------------------------------------------------------------------------ the output folder

def repair_tail(path):
    """Cut a last line written only in part (a run killed mid-write) so appends stay CSV."""
    with open(path, "rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)
            return True
    return False


def read_done(path):
    """{row key: row} of an earlier run's measurements.csv."""
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        if r.fieldnames != MEAS_COLUMNS:
            raise ValueError(f"{path}: not a measurements.csv of this script (columns "
                             f"{r.fieldnames})")
        return {row_key(x): x for x in r if x.get("error") is not None}


def read_compile_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def git_commit():
    try:
        r = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                           text=True, timeout=10)
        return r.stdout.strip() if r.returncode == 0 else ""
    except Exception:  # noqa: BLE001
        return ""


# ------------------------------------------------------------------------------ the run

def _compile_job(args):
    """In a worker: tma_probe's compile launch for one (config, class), timed."""
    cfg, programs, dtypes, spec = args
    t0 = time.time()
    row = probe._compile_one((cfg, programs, dtypes, spec_shape(spec)))
    return {"config": cfg.text(), "key": cfg.key(), "spec": spec,
            "compile_shape": "x".join(map(str, spec_shape(spec))), "dtypes": ",".join(dtypes),
            "status": row["status"], "registers": row["registers"], "spills": row["spills"],
            "shared_bytes": row["shared_bytes"], "seconds": round(time.time() - t0, 3),
            "error": row["error"]}


def clock_stats(samples, t0, t1):
    """NVML samples with the GPU busy from t0 - pad to t1 + pad: SM clock median, min,
    max; power and temperature maxima."""
    xs = [s for s in list(samples) if t0 - CLOCK_PAD_S <= s[0] <= t1 + CLOCK_PAD_S
          and s[5] > 0]
    if not xs:
        return {}
    sm = [s[1] for s in xs]
    return {"sm_mhz": statistics.median(sm), "sm_mhz_min": min(sm), "sm_mhz_max": max(sm),
            "power_w_max": round(max(s[3] for s in xs), 1), "temp_c_max": max(s[4] for s in xs)}


def estimate_s(entry, n_configs):
    """Rough seconds a shape takes: per config a check and about 12 launches at
    300 TFLOP/s, plus 30 ms of host work (corrected by the run's own shapes)."""
    launch = 2.0 * entry["m"] * entry["n"] * entry["k"] / 300e12
    return (n_configs + 2) * (0.03 + 12 * launch)


def timed_row(base, timer, clocks, run, best, flop, err, graph_below_us):
    """Time one launch closure (verified: its error `err`; None for cuBLAS, the
    reference) with tma_probe's timer; the measurements row. The timer picks CUDA graphs
    when its probe launch ran under `graph_below_us`; a probe between that and
    REPROBE_BELOW_US is repeated twice and the fastest of the three decides. A timing
    with a CoV above RETIME_COV is taken again (probe and all), at most RETIMES times, and
    the lowest median kept; `timings` counts them."""
    t0 = time.time()

    def one_timing():
        t1 = timer.probe(run)
        if graph_below_us <= t1 < REPROBE_BELOW_US:
            t1 = min([t1] + [timer.probe(run) for _ in range(2)])
        return timer.measure(run, best, t1)

    us, samples, mode = one_timing()
    timings = 1
    while timings <= RETIMES and (probe.cov(samples) or 0.0) > RETIME_COV:
        again = one_timing()
        timings += 1
        if again[0] < us:
            us, samples, mode = again
    t_end = time.time()
    return {**base, "status": "ok", "us": round(us, 3), "tflops": round(flop / us / 1e6, 2),
            "rel_err": "" if err is None else f"{err:.3e}", "mode": mode, "samples": len(samples),
            "cov": probe.cov(samples), "samples_us": " ".join(f"{x:.3f}" for x in samples),
            "timings": timings,
            **clock_stats(clocks.samples, t0, t_end), "seconds": round(t_end - t0, 3)}


def pass_order(n_items, pass_no, shuffle_seed=None):
    """The order of a shape's timed launches (cuBLAS before, the configs, cuBLAS after) in
    pass `pass_no` (1, 2, ...): forward in odd passes, backward in even ones. Under the
    power cap a shape's clocks drift while it runs (cuBLAS's after/before ratio reached
    1.06-1.09 on the largest shapes), and a launch's time follows its place in the run;
    with alternating passes a steady drift adds the same to every launch's median over
    an even number of passes (its place, summed over the passes, is the same). It also
    follows the launch before it (a config after a slower, lower-power one runs faster:
    results/h100/triton-tma/flatten-twins/), which alternating keeps the same pass after
    pass; with `shuffle_seed` (--shuffle) every pass after the first is a permutation of
    its own, drawn from the seed and the pass number."""
    if shuffle_seed is not None:
        order = list(range(n_items))
        random.Random(f"{shuffle_seed}:{pass_no}").shuffle(order)
        return order
    return list(range(n_items)) if pass_no % 2 == 1 else list(range(n_items - 1, -1, -1))


def interleaved_passes(n_items, passes, time_one, out_of_time, shuffle_seed=None):
    """Passes 2..`passes` over `n_items` already timed once (pass 1): time_one(i) -> us
    for item i in each pass's order (`pass_order`); stops when out_of_time() says so
    (before an item). Returns, per item, the list of its later passes' times."""
    extra = [[] for _ in range(n_items)]
    for p in range(2, passes + 1):
        for i in pass_order(n_items, p, shuffle_seed):
            if out_of_time():
                return extra
            extra[i].append(time_one(i))
    return extra


def with_passes(row, later_us, flop):
    """A timed row whose `us` becomes the median over its passes (the first pass's timing
    and `later_us`); `pass_us` lists them in pass order, `passes` counts them."""
    times = [float(row["us"])] + [float(x) for x in later_us if x is not None]
    us = statistics.median(times)
    return {**row, "us": round(us, 3), "tflops": round(flop / us / 1e6, 2),
            "passes": len(times), "pass_us": " ".join(f"{x:.3f}" for x in times)}


def run_shape(ctx, entry, dname, configs, done, deadline):
    """Time cuBLAS, every config not yet done, cuBLAS again. Returns (rows, cut at the
    deadline, (cuBLAS before row, cuBLAS after row or None, best config's us or None))."""
    torch, timer, clocks = ctx["torch"], ctx["timer"], ctx["clocks"]
    M, N, K = entry["m"], entry["n"], entry["k"]
    spec = shape_spec(M, N, K)
    flop = 2.0 * M * N * K
    dev = ctx["dev"]
    dt = probe.torch_dtype(torch, dname)
    gen = torch.Generator(device=dev)
    gen.manual_seed(zlib.crc32(f"{ctx['seed']}:{M}x{N}x{K}:{dname}".encode()))
    a = torch.randn(M, K, device=dev, dtype=dt, generator=gen)
    b = torch.randn(N, K, device=dev, dtype=dt, generator=gen)
    c = torch.empty(M, N, device=dev, dtype=dt)
    ref = torch.mm(a, b.t())
    shape = {"set": entry["set"], "label": entry["label"], "m": M, "n": N, "k": K,
             "dtype": dname}

    def key(config):
        return (entry["set"], entry["label"], M, N, K, dname, config)

    def cublas():
        torch.mm(a, b.t(), out=c)

    def time_cublas(name):
        # Warm-up: a first call (and a first out= call) sets up cuBLAS's handle and
        # workspace; a timing that includes it is no measurement.
        for _ in range(3):
            cublas()
        torch.cuda.synchronize()
        return timed_row({**shape, "config": name, "t_start": round(time.time(), 3),
                          "run": ctx["run"], "error": ""},
                         timer, clocks, cublas, None, flop, None, ctx["graph_below_us"])

    rows = []
    timed = []  # (index in rows, launch) of the rows timed in this run, in pass-1 order
    before = done.get(key(CUBLAS_BEFORE))
    if before is None:
        before = time_cublas(CUBLAS_BEFORE)
        rows.append(before)
        timed.append((len(rows) - 1, cublas))
    best = min((float(done[key(cf.text())]["us"]) for cf in configs
                if key(cf.text()) in done and done[key(cf.text())]["status"] == "ok"),
               default=None)
    stopped = False
    for cfg in configs:
        text = cfg.text()
        if key(text) in done:
            continue
        if time.time() > deadline:
            stopped = True
            break
        comp = ctx["compiled"].get((text, spec), {})
        base = {**shape, "config": text, "key": cfg.key(), "spec": spec,
                "block_m": cfg.BLOCK_SIZE_M, "block_n": cfg.BLOCK_SIZE_N,
                "block_k": cfg.BLOCK_SIZE_K, "group_m": cfg.GROUP_SIZE_M,
                "num_warps": cfg.num_warps, "num_stages": cfg.num_stages,
                "flatten": int(cfg.FLATTEN), "warp_specialize": int(cfg.WARP_SPECIALIZE),
                "epilogue_subtile": int(cfg.EPILOGUE_SUBTILE),
                "registers": comp.get("registers", ""), "spills": comp.get("spills", ""),
                "shared_bytes": comp.get("shared_bytes", ""),
                "t_start": round(time.time(), 3), "run": ctx["run"], "error": ""}
        if comp.get("status") != "ok":
            rows.append({**base, "status": "compile_error",
                         "error": comp.get("error") or "not compiled"})
            continue
        try:
            run = probe.launcher(cfg, a, b, c, ctx["programs"])
            t0 = time.time()
            err = probe.verify(torch, run, c, ref)
            base["check_s"] = round(time.time() - t0, 3)
            if not err <= probe.REL_TOL:
                rows.append({**base, "status": "wrong", "rel_err": f"{err:.3e}",
                             "error": f"relative error {err:.3e} > {probe.REL_TOL}"})
                continue
            row = timed_row(base, timer, clocks, run, best, flop, err, ctx["graph_below_us"])
        except Exception as e:  # noqa: BLE001  (recorded, the sweep goes on)
            rows.append({**base, "status": "run_error",
                         "error": f"{type(e).__name__}: " + " ".join(str(e).split())[:300]})
            continue
        best = row["us"] if best is None else min(best, row["us"])
        rows.append(row)
        timed.append((len(rows) - 1, run))
    after = done.get(key(CUBLAS_AFTER))
    if not stopped and after is None:
        after = time_cublas(CUBLAS_AFTER)
        rows.append(after)
        timed.append((len(rows) - 1, cublas))
    passes = ctx.get("passes", 1)
    if passes > 1 and not stopped:
        def time_one(i):
            idx, launch = timed[i]
            try:
                return timed_row(rows[idx], timer, clocks, launch, best, flop, None,
                                 ctx["graph_below_us"])["us"]
            except Exception:  # noqa: BLE001  (its first pass stands; the pass is skipped)
                return None
        extra = interleaved_passes(len(timed), passes, time_one,
                                   lambda: time.time() > deadline, ctx.get("shuffle_seed"))
        for (idx, _), later in zip(timed, extra):
            rows[idx] = with_passes(rows[idx], later, flop)
        before = rows[0] if rows and rows[0]["config"] == CUBLAS_BEFORE else before
        if after is not None and rows and rows[-1]["config"] == CUBLAS_AFTER:
            after = rows[-1]
        best = min((r["us"] for r in rows if r["status"] == "ok"
                    and r["config"] not in (CUBLAS_BEFORE, CUBLAS_AFTER)), default=best)
    if (after is not None and after.get("status") == "ok" and before
            and before.get("status") == "ok" and "cublas_drift" not in after):
        after["cublas_drift"] = round(float(after["us"]) / float(before["us"]), 4)
    # Each config against cuBLAS's median of before and after (before alone if cut off).
    cubs = [float(x["us"]) for x in (before, after) if x and x.get("status") == "ok"]
    ref_us = statistics.mean(cubs) if cubs else None
    for r in rows:
        if r["status"] == "ok" and ref_us and r["config"] not in (CUBLAS_BEFORE, CUBLAS_AFTER):
            r["vs_cublas"] = round(ref_us / r["us"], 4)
    return rows, stopped, (before, after, best)


def _worker_init(log_path):
    """A compile worker writes its stderr (Triton's MLIR dumps of failed compiles) to
    `log_path` instead of the run's progress stream."""
    f = open(log_path, "a")
    os.dup2(f.fileno(), 2)
    sys.stderr = f


def warm_up(torch, timer, dev, dtypes):
    """Untimed cuBLAS calls, plain and captured in a CUDA graph, in each input type: a
    process's first calls pay for handles, workspaces and graph set-up."""
    for name in dtypes:
        x = torch.randn(1024, 1024, device=dev, dtype=probe.torch_dtype(torch, name))
        y = torch.empty_like(x)

        def mm():
            torch.mm(x, x.t(), out=y)
        for _ in range(10):
            mm()
        torch.cuda.synchronize()
        timer.graph(mm, 10.0, replays=1)
    torch.cuda.synchronize()


def compile_all(configs, dtypes, specs, programs, workers, log_path):
    import multiprocessing as mp
    jobs = [(cfg, programs, dtypes, spec) for spec in specs for cfg in configs]
    out = []
    t0 = time.time()
    with mp.get_context("spawn").Pool(workers, initializer=_worker_init,
                                      initargs=(log_path,)) as pool:
        for i, r in enumerate(pool.imap_unordered(_compile_job, jobs, chunksize=1)):
            out.append(r)
            if (i + 1) % 50 == 0 or i + 1 == len(jobs):
                log(f"compiled {i + 1}/{len(jobs)} (config x class, {len(dtypes)} type(s) "
                    f"each) in {time.time() - t0:.0f} s")
    return out, time.time() - t0


def run(args, plan):
    """The sweep on the GPU; returns the exit status."""
    import torch
    import triton
    from triton_sweep import GRAPH_BELOW_US, ClockSampler, Timer, smi
    from origami_gemm.kernels import triton_tma
    from origami_gemm.kernels.triton_tma import _alloc

    t_start = time.time()
    deadline = t_start + args.deadline_s if args.deadline_s else float("inf")
    if not torch.cuda.is_available():
        print("tma_sweep.py: no CUDA device", file=sys.stderr)
        return 1
    out = args.out
    meas_path = os.path.join(out, "measurements.csv")
    comp_path = os.path.join(out, "compile.csv")
    info_path = os.path.join(out, "run_info.json")
    os.makedirs(out, exist_ok=True)
    done = {}
    if os.path.exists(meas_path):
        if repair_tail(meas_path):
            log("measurements.csv ended mid-row: the partial row was cut")
        done = read_done(meas_path)
    old_info = {}
    if os.path.exists(info_path):
        with open(info_path) as f:
            old_info = json.load(f)
    runs = old_info.get("runs", [])
    run_no = len(runs)

    entries, dtypes, configs = plan["entries"], plan["dtypes"], plan["configs"]
    texts = [c.text() for c in configs]
    work = []  # (entry, dtype) with something left to do
    for e in entries:
        for d in dtypes:
            ks = [(e["set"], e["label"], e["m"], e["n"], e["k"], d, t)
                  for t in texts + [CUBLAS_BEFORE, CUBLAS_AFTER]]
            if not all(k in done for k in ks):
                work.append((e, d))
    log(f"{len(entries)} shapes x {len(dtypes)} type(s) x {len(configs)} configs; "
        f"{len(work)} shape-type pairs to do ({len(entries) * len(dtypes) - len(work)} done)")

    dev = torch.device("cuda")
    programs = torch.cuda.get_device_properties(dev).multi_processor_count
    this = {"run": run_no, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "argv": sys.argv, "command": shlex.join(["python3"] + sys.argv),
            "gpu": torch.cuda.get_device_name(dev), "sms": programs,
            "capability": ".".join(map(str, torch.cuda.get_device_capability(dev))),
            "torch": torch.__version__, "torch_cuda": torch.version.cuda,
            "triton": triton.__version__, "python": sys.version.split()[0],
            "git_commit": git_commit(),
            "kernel_file": "python/origami_gemm/kernels/triton_tma.py",
            "kernel_sha256": sha256(triton_tma.__file__),
            "script_sha256": sha256(os.path.abspath(__file__)),
            "smi_before": smi(),
            "power_limit": smi("power.limit,power.default_limit,power.max_limit"),
            "driver": smi("driver_version"),
            "dtypes": dtypes, "configs": texts, "configs_file": args.configs or "",
            "shard": args.shard, "deadline_s": args.deadline_s, "seed": args.seed,
            "passes": args.passes, "pass_order": "shuffled" if args.shuffle else "alternating",
            "shapes": [f"{e['set']}:{e['m']}x{e['n']}x{e['k']}" for e in entries]}

    specs = sorted({shape_spec(e["m"], e["n"], e["k"]) for e, _ in work})
    work_dtypes = [d for d in dtypes if any(d == wd for _, wd in work)]
    compiled = {}
    comp_rows = read_compile_rows(comp_path)
    if work:
        new, secs = compile_all(configs, work_dtypes, specs, programs, args.workers,
                                os.path.join(out, "compile_log.txt"))
        this["compile_s"] = round(secs, 1)
        new_keys = {(r["config"], r["spec"]) for r in new}
        comp_rows = [r for r in comp_rows if (r["config"], r["spec"]) not in new_keys] + \
            sorted(new, key=lambda r: (r["spec"], texts.index(r["config"])))
        with open(comp_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(new[0].keys()))
            w.writeheader()
            w.writerows(comp_rows)
        compiled = {(r["config"], r["spec"]): r for r in new}
        n_ok = sum(r["status"] == "ok" for r in new)
        log(f"compiled {n_ok}/{len(new)} (config, class) pairs of classes {specs} "
            f"for {work_dtypes} in {secs:.1f} s")

    triton.set_allocator(_alloc(dev))
    clocks = ClockSampler()
    clocks.start()
    ctx = {"torch": torch, "timer": Timer(torch), "clocks": clocks, "dev": dev,
           "programs": programs, "compiled": compiled, "seed": args.seed, "run": run_no,
           "graph_below_us": GRAPH_BELOW_US, "passes": args.passes,
           "shuffle_seed": args.seed if args.shuffle else None}
    if work:
        warm_up(torch, ctx["timer"], dev, work_dtypes)
    new_file = not os.path.exists(meas_path) or os.path.getsize(meas_path) == 0
    meas = open(meas_path, "a", newline="")
    writer = csv.DictWriter(meas, fieldnames=MEAS_COLUMNS)
    if new_file:
        writer.writeheader()
    shape_log, stopped, calib = [], False, []
    for i, (entry, dname) in enumerate(work):
        name = f"{entry['m']}x{entry['n']}x{entry['k']} {dname}"
        est = estimate_s(entry, len(configs)) * args.passes * \
            (statistics.median(calib) if calib else 1.0)
        if time.time() + est > deadline:
            log(f"deadline: {name} (about {est:.0f} s) not started; {len(work) - i} "
                "shape-type pair(s) left for --resume")
            stopped = True
            break
        t0 = time.time()
        rows, cut, (before, after, best) = run_shape(ctx, entry, dname, configs, done,
                                                     deadline)
        torch.cuda.empty_cache()  # the shape's inputs went with run_shape's frame
        for r in rows:
            writer.writerow({k: r.get(k, "") for k in MEAS_COLUMNS})
        meas.flush()
        os.fsync(meas.fileno())
        secs = time.time() - t0
        calib.append(max(1.0, secs / (estimate_s(entry, len(configs)) * args.passes)))
        cfg_rows = [r for r in rows if r["config"] not in (CUBLAS_BEFORE, CUBLAS_AFTER)]
        n_ok = sum(r["status"] == "ok" for r in cfg_rows)
        drift = after.get("cublas_drift", "") if after else ""
        b_us, a_us = before.get("us", ""), (after or {}).get("us", "")
        summary = {"set": entry["set"], "label": entry["label"], "m": entry["m"],
                   "n": entry["n"], "k": entry["k"], "dtype": dname, "seconds": round(secs, 1),
                   "cublas_before_us": b_us, "cublas_after_us": a_us, "cublas_drift": drift,
                   "best_us": best, "timed": n_ok, "failed": len(cfg_rows) - n_ok,
                   "cut_at_deadline": cut,
                   **clock_stats(clocks.samples, t0, time.time())}
        shape_log.append(summary)
        cubs = [float(x) for x in (b_us, a_us) if x != ""]
        vs = f", best {statistics.mean(cubs) / best:.3f}x cuBLAS" if best and cubs else ""
        log(f"shape {i + 1}/{len(work)} {name}: cuBLAS {b_us} -> {a_us} us (drift {drift}), "
            f"{n_ok} timed, {len(cfg_rows) - n_ok} failed{vs}, {secs:.1f} s"
            + (" -- cut at the deadline" if cut else ""))
        if cut:
            stopped = True
            log(f"deadline reached inside {name}: its finished rows are kept; --resume "
                "completes it")
            break
    meas.close()
    clocks.stop()
    sm = [s[1] for s in clocks.samples if s[5] > 0]
    this.update({
        "smi_after": smi(), "wall_s": round(time.time() - t_start, 1),
        "stopped_at_deadline": stopped, "shapes_run": shape_log,
        "sm_mhz_busy": {"median": statistics.median(sm), "min": min(sm), "max": max(sm),
                        "samples": len(sm)} if sm else None,
        "nvml": "ok" if clocks.ok else f"unavailable: {getattr(clocks, 'err', '')}",
    })
    with open(info_path, "w") as f:
        json.dump({"runs": runs + [this]}, f, indent=1, default=str)
    n, c, unfinished = write_run_layout(out)
    log(f"origami-bench layout: {n} shapes, {c} config rows in {out}/configs.csv, "
        f"shapes.csv" + (f" ({len(unfinished)} unfinished shape(s) left out)"
                         if unfinished else "") + f"; next: origami-bench report --out {out}")
    print(f"tma_sweep: {len(shape_log)} shape-type pairs run, "
          f"{'stopped at the deadline' if stopped else 'complete'}, "
          f"wall {this['wall_s']} s, out {out}")
    return 0


# ------------------------------------------------------------------------------- the CLI

def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        prog="tma_sweep.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder (created)")
    ap.add_argument("--shapes", action="append", choices=sorted(LISTS), default=[],
                    help="a shape list: seed (data/seed_shapes.csv) or llm "
                         "(data/llm_shapes.csv), every row; repeatable")
    ap.add_argument("--shape", action="append", default=[], metavar="MxNxK",
                    help="one more shape (set 'listed'); repeatable")
    ap.add_argument("--dtype", action="append", metavar="fp16|bf16",
                    help="input type(s): repeatable or a comma list (default fp16)")
    ap.add_argument("--configs", metavar="FILE",
                    help="CSV with a 'config' column in the Rust model's text form, e.g. "
                         "128x256x64,g8,w8,s3,flatten (default: the 124-config space)")
    ap.add_argument("--resume", action="store_true",
                    help="keep --out's measurements.csv, skip its (shape, type, config) "
                         "rows and append (without it, an existing one is refused)")
    ap.add_argument("--deadline-s", type=float, default=0.0, metavar="S",
                    help="stop cleanly S seconds after the start (0: no deadline); leave "
                         "~20 s for the closing writes under an outer limit")
    ap.add_argument("--shard", default="0/1", metavar="I/N",
                    help="take the shapes at positions I, I+N, ... (from 0; default 0/1)")
    ap.add_argument("--passes", type=int, default=1, metavar="P",
                    help="time each shape's launches (cuBLAS and the configs) P times, in "
                         "alternating order (forward, backward, ...), and keep each one's "
                         "median over the passes: a clock drift under the power cap then "
                         "costs every launch alike (even P); default 1, at most 8")
    ap.add_argument("--shuffle", action="store_true",
                    help="with --passes: time passes 2..P each in a random order of its own "
                         "(seeded by --seed) instead of backward and forward, so that no "
                         "launch always follows the same one")
    ap.add_argument("--workers", type=int, default=15, help="compile processes (default 15)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED,
                    help="base seed of the random inputs")
    return ap.parse_args(argv)


def build_plan(args):
    """Everything that can be checked before the GPU: ValueError (one line) if bad."""
    if not 1 <= args.passes <= 8:
        raise ValueError(f"--passes {args.passes}: must be 1 to 8")
    if args.shuffle and args.passes < 2:
        raise ValueError("--shuffle orders the passes after the first: give --passes 2 or more")
    if args.workers < 1:
        raise ValueError(f"--workers {args.workers}: must be at least 1")
    if args.deadline_s < 0 or args.deadline_s != args.deadline_s:
        raise ValueError(f"--deadline-s {args.deadline_s}: must be >= 0")
    meas = os.path.join(args.out, "measurements.csv")
    if os.path.exists(meas) and not args.resume:
        raise ValueError(f"{meas} exists: give --resume to continue it, or another --out")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ValueError(f"--out {args.out}: not a folder")
    plan = {"dtypes": parse_dtypes(args.dtype),
            "entries": plan_shapes(args.shapes, args.shape, parse_shard(args.shard))}
    plan["configs"] = read_config_file(args.configs) if args.configs else default_configs()
    return plan


def main(argv=None):
    args = parse_args(argv)
    try:
        plan = build_plan(args)
        if args.resume and os.path.exists(os.path.join(args.out, "measurements.csv")):
            read_done(os.path.join(args.out, "measurements.csv"))
    except (ValueError, OSError) as e:
        print(f"tma_sweep.py: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"tma_sweep.py: needs Triton 3.6 (and torch with CUDA to run): {e}",
              file=sys.stderr)
        return 1
    return run(args, plan)


if __name__ == "__main__":
    sys.exit(main())
