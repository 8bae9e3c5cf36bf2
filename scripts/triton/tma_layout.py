#!/usr/bin/env python3
"""The rows of a `tma_sweep.py` run (its measurements.csv) in `origami-bench`'s folder
layout: configs.csv (one row per shape x input type x config, the columns of `ConfigRow`
in src/gemm/sweep.rs) and shapes.csv (per shape and input type the facts configs.csv
cannot hold: set, label, cuBLAS's time, SM clock, seconds), written with
`bench_layout.write_layout`, so that `origami-bench report --out DIR` computes A/cuBLAS
of the best config, ranks and plots, and `refit` reads the measurements.

Nothing is computed here that the run did not measure. A shape enters the layout once the
run finished it (its `cublas_after` row exists); cuBLAS's time is the mean of its
before and after timings (the median of two), its CoV that of their pooled samples. The
sweep is a brute force with no model pick: every row has `is_pick` 0, `model_rank` 0 and no
prediction (0), so the report's pick columns stay empty.

Regenerate a run's layout (standard library only):

    python3 scripts/triton/tma_layout.py RUN_DIR [OUT_DIR]     # OUT_DIR defaults to RUN_DIR
"""
import argparse
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_layout import launches_per_sample, open_csv, write_layout  # noqa: E402

# measurements.csv, one row per shape x input type x config (or cuBLAS before / after).
MEAS_COLUMNS = ["set", "label", "m", "n", "k", "dtype", "config", "key", "spec",
                "block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages",
                "flatten", "warp_specialize", "epilogue_subtile", "status", "us", "tflops",
                "vs_cublas", "rel_err", "mode", "samples", "cov", "samples_us", "timings", "passes",
                "pass_us", "sm_mhz",
                "sm_mhz_min", "sm_mhz_max", "power_w_max", "temp_c_max", "cublas_drift",
                "registers", "spills", "shared_bytes", "check_s", "seconds", "t_start", "run",
                "error"]
CUBLAS_BEFORE = "cublas_before"
CUBLAS_AFTER = "cublas_after"
NOTE = "tma_sweep.py"


def shape_of(r):
    """The shape a measurements row belongs to: (set, label, M, N, K, dtype)."""
    return r["set"], r["label"], int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"]


def _num(v, kind=float):
    return kind(v) if v not in ("", None) else None


def config_row(r):
    """One measurements row of a config as a configs.csv row."""
    ok = r["status"] == "ok"
    spills = _num(r.get("spills"), int)
    mode = r.get("mode") or ""
    return {
        "set": r["set"], "m": r["m"], "n": r["n"], "k": r["k"], "dtype": r["dtype"],
        "config": r["config"], "block_m": r["block_m"], "block_n": r["block_n"],
        "block_k": r["block_k"], "group_m": r["group_m"], "num_warps": r["num_warps"],
        "num_stages": r["num_stages"], "is_pick": 0, "model_rank": 0,
        "predicted_cycles": 0, "predicted_us": 0,
        "measured_ms": float(r["us"]) / 1000.0 if ok else "",
        "cov": r["cov"] if ok else "", "samples": int(r["samples"] or 0) if ok else 0,
        "reps": launches_per_sample(mode) if ok else 0,
        "screened": 1 if ok and mode == "single" else 0,
        "tflops": r["tflops"] if ok else "", "registers": r.get("registers", ""),
        "local_bytes": "", "spills": "" if spills is None else int(spills > 0),
        "smem_bytes": r.get("shared_bytes") or 0, "rel_err": r.get("rel_err", ""),
        "passed": int(ok),
        "note": NOTE if ok else f"{NOTE}: {r['status']} {r.get('error', '')}".strip(),
    }


def shape_row(key, rows):
    """The shapes.csv row of one finished shape from all its measurements rows."""
    cub = [r for r in rows if r["config"] in (CUBLAS_BEFORE, CUBLAS_AFTER)
           and r["status"] == "ok"]
    pooled = [float(x) for r in cub for x in (r.get("samples_us") or "").split()]
    mhz = [float(r["sm_mhz"]) for r in rows if r.get("sm_mhz")]
    secs = [float(r["seconds"]) for r in rows if r.get("seconds")]
    return {
        "set": key[0], "label": key[1], "m": key[2], "n": key[3], "k": key[4],
        "dtype": key[5],
        "cublas_ms": statistics.mean(float(r["us"]) for r in cub) / 1000.0 if cub else "",
        "cublas_cov": round(statistics.pstdev(pooled) / statistics.mean(pooled), 4)
        if len(pooled) > 1 else "",
        "sm_mhz": int(statistics.median(mhz)) if mhz else "",
        "seconds": round(sum(secs), 3) if secs else "",
    }


def layout_rows(measurements):
    """(shapes.csv rows, configs.csv rows, unfinished shapes) from measurements rows: shapes
    in order of first appearance, each shape's config rows together in their order."""
    order, rows_of = [], {}
    for r in measurements:
        key = shape_of(r)
        if key not in rows_of:
            order.append(key)
            rows_of[key] = []
        rows_of[key].append(r)
    shapes, configs, unfinished = [], [], []
    for key in order:
        rows = rows_of[key]
        if not any(r["config"] == CUBLAS_AFTER for r in rows):
            unfinished.append(key)
            continue
        shapes.append(shape_row(key, rows))
        configs += [config_row(r) for r in rows
                    if r["config"] not in (CUBLAS_BEFORE, CUBLAS_AFTER)]
    return shapes, configs, unfinished


def read_measurements(path):
    """The complete rows of a measurements.csv (a last line cut off mid-write is left out)."""
    with open_csv(path) as f:
        return [r for r in csv.DictReader(f) if r.get("error") is not None]


def write_run_layout(run_dir, out=None):
    """Write OUT/configs.csv and OUT/shapes.csv for the run in RUN_DIR; returns (shapes,
    config rows, unfinished shapes)."""
    shapes, configs, unfinished = layout_rows(
        read_measurements(os.path.join(run_dir, "measurements.csv")))
    write_layout(out or run_dir, shapes, configs)
    return len(shapes), len(configs), unfinished


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="folder of a tma_sweep.py run (measurements.csv)")
    ap.add_argument("out", nargs="?", help="folder for configs.csv and shapes.csv "
                    "(default: the run's folder)")
    a = ap.parse_args()
    path = os.path.join(a.run, "measurements.csv")
    if not os.path.isfile(path):
        print(f"tma_layout.py: {path}: no such file", file=sys.stderr)
        return 2
    try:
        n, c, unfinished = write_run_layout(a.run, a.out)
    except (KeyError, ValueError) as e:
        print(f"tma_layout.py: {path}: not a tma_sweep.py measurements file ({e})",
              file=sys.stderr)
        return 2
    print(f"{n} shapes, {c} config rows -> {a.out or a.run}"
          + (f"; {len(unfinished)} unfinished shape(s) left out" if unfinished else ""),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
