#!/usr/bin/env python3
"""Write a Triton run in `origami-bench`'s folder layout, so that `origami-bench report`
computes every metric and plot (A/BF, A/cuBLAS, rank of the pick, Kendall tau-b,
infeasible picks) and `origami-bench refit --family triton` fits the model on it, exactly as
for this project's own runner. Nothing is computed here: the rows are the measurements.

- `configs.csv`: one row per shape x launched config (pick, brute force, GROUP_SIZE_M
  pass), the columns of `ConfigRow` in src/gemm/sweep.rs; a config that failed to compile,
  verify or was left untimed by the time budget has `passed` 0 and the reason in `note`.
- `shapes.csv`: per shape the facts `configs.csv` cannot hold (set, label, cuBLAS's time,
  SM clock, seconds); `origami-bench report` derives the rest and rewrites the file in full.

`scripts/triton_sweep.py` calls `write_folder` at the end of a run; other runners build the
rows themselves (any input type) and call `write_layout`. For a committed run
(its `measurements.csv`, `run_info.json` and inputs folder):

    python3 scripts/triton/bench_layout.py results/h200/triton-table OUT_DIR [--inputs DIR]
    origami-bench report --out OUT_DIR

A shape's set is its inputs row's `source` plus `_shapes` (`seed_shapes`, `llm_shapes`: the
stems of the shape lists, as `origami-bench sweep` names them). Standard library only.
"""
import argparse
import csv
import gzip
import json
import os
import sys

# The columns of configs.csv (`ConfigRow`, src/gemm/sweep.rs) and the facts of shapes.csv
# (`ShapeFacts`, src/gemm/shape_metrics.rs); origami-bench reads them by name.
CONFIG_COLUMNS = ["set", "m", "n", "k", "dtype", "config", "block_m", "block_n", "block_k",
                  "group_m", "num_warps", "num_stages", "is_pick", "model_rank",
                  "predicted_cycles", "predicted_us", "measured_ms", "cov", "samples", "reps",
                  "screened", "tflops", "registers", "local_bytes", "spills", "smem_bytes",
                  "rel_err", "passed", "note"]
SHAPE_COLUMNS = ["set", "label", "m", "n", "k", "dtype", "cublas_ms", "cublas_cov", "sm_mhz",
                 "seconds"]
DTYPE = "fp16"  # the sweep's kernel reads and writes fp16
NOTE = "triton_sweep.py"


def open_csv(path):
    """A CSV file, or its gzipped copy (PATH.gz: result folders gzip files over 100 kB, the
    device machine takes a working tree of at most 64 MiB)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rt", newline="")
    return open(path, newline="")


def shape_key(r):
    return int(r["M"]), int(r["N"]), int(r["K"])


def read_inputs(folder):
    """{(M, N, K): (set, label)} from an inputs folder's shapes.csv."""
    out = {}
    with open(os.path.join(folder, "shapes.csv")) as f:
        for r in csv.DictReader(f):
            source = r.get("source") or "listed"
            out.setdefault(shape_key(r), (f"{source}_shapes", r.get("label", "")))
    return out


def launches_per_sample(mode):
    """The sweep times `graphN` as N launches per sample, events and single launches as 1."""
    return int(mode[5:]) if mode.startswith("graph") else 1


def config_row(r, set_name):
    """One measurements.csv row (role pick, bf or refine) as a configs.csv row."""
    ok = r["status"] == "ok"
    spills = r.get("n_spills", "")
    samples = r.get("samples_us", "").split()
    return {
        "set": set_name, "m": r["M"], "n": r["N"], "k": r["K"], "dtype": DTYPE,
        "config": "%sx%sx%s,g%s,w%s,s%s" % (r["BLOCK_SIZE_M"], r["BLOCK_SIZE_N"],
                                            r["BLOCK_SIZE_K"], r["GROUP_SIZE_M"],
                                            r["num_warps"], r["num_stages"]),
        "block_m": r["BLOCK_SIZE_M"], "block_n": r["BLOCK_SIZE_N"], "block_k": r["BLOCK_SIZE_K"],
        "group_m": r["GROUP_SIZE_M"], "num_warps": r["num_warps"], "num_stages": r["num_stages"],
        "is_pick": 1 if r["role"] == "pick" else 0, "model_rank": r["rank"] or 0,
        "predicted_cycles": r["predicted_cycles"], "predicted_us": 0,
        "measured_ms": float(r["measured_us"]) / 1000.0 if ok else "", "cov": "",
        "samples": len(samples) if ok else 0,
        "reps": launches_per_sample(r.get("mode", "")) if ok else 0,
        "screened": 1 if ok and r.get("mode") == "single" else 0,
        "tflops": r["tflops"] if ok else "", "registers": r["n_regs"], "local_bytes": "",
        "spills": "" if spills == "" else int(int(spills) > 0),
        "smem_bytes": r["shared_bytes"] or 0, "rel_err": r["rel_err"], "passed": int(ok),
        "note": NOTE if ok else f"{NOTE}: {r['status']} {r.get('error', '')}".strip(),
    }


def write_layout(out, shape_rows, config_rows):
    """Write OUT/configs.csv and OUT/shapes.csv from rows that are already in the layout
    (dicts keyed by CONFIG_COLUMNS and SHAPE_COLUMNS, any input type), in their order: each
    shape's config rows together, shapes in the order of shapes.csv. A runner of another
    kernel (scripts/triton/tma_sweep.py) builds the rows and calls this."""
    os.makedirs(out, exist_ok=True)
    for name, columns, rows in (("configs.csv", CONFIG_COLUMNS, config_rows),
                                ("shapes.csv", SHAPE_COLUMNS, shape_rows)):
        with open(os.path.join(out, name), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=columns)
            w.writeheader()
            w.writerows(rows)


def write_folder(out, measurements, inputs, run_info=None):
    """Write OUT/configs.csv and OUT/shapes.csv from measurements.csv rows (cuBLAS rows
    give the shape's cuBLAS time). Shapes keep their order of first appearance; each
    shape's config rows stay together, in their order. Returns (shapes, config rows)."""
    listed = read_inputs(inputs)
    timing = {(int(s["M"]), int(s["N"]), int(s["K"])): s
              for s in (run_info or {}).get("shape_timing", [])}
    order, rows_of, cublas = [], {}, {}
    for r in measurements:
        key = shape_key(r)
        if key not in rows_of:
            order.append(key)
            rows_of[key] = []
        if r["role"] == "cublas":
            cublas[key] = r
        else:
            rows_of[key].append(r)
    config_rows = [config_row(r, listed.get(key, ("listed_shapes", ""))[0])
                   for key in order for r in rows_of[key]]
    shape_rows = []
    for key in order:
        set_name, label = listed.get(key, ("listed_shapes", ""))
        c = cublas.get(key)
        t = timing.get(key, {})
        shape_rows.append({
            "set": set_name, "label": label, "m": key[0], "n": key[1], "k": key[2],
            "dtype": DTYPE,
            "cublas_ms": float(c["measured_us"]) / 1000.0 if c and c["status"] == "ok" else "",
            "cublas_cov": "",
            "sm_mhz": int(t["sm_clock_mhz_median"]) if "sm_clock_mhz_median" in t else "",
            "seconds": round(t["t1"] - t["t0"], 3) if "t1" in t else "",
        })
    write_layout(out, shape_rows, config_rows)
    return len(order), len(config_rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="folder of a triton_sweep.py run (measurements.csv)")
    ap.add_argument("out", help="folder to write configs.csv and shapes.csv into")
    ap.add_argument("--inputs", help="the run's inputs folder (default: the one its "
                    "run_info.json names, else RUN/inputs)")
    a = ap.parse_args()
    run_info = None
    p = os.path.join(a.run, "run_info.json")
    if os.path.exists(p):
        with open(p) as f:
            run_info = json.load(f)
    inputs = a.inputs
    if not inputs:
        named = ((run_info or {}).get("args") or {}).get("inputs")
        inputs = named if named and os.path.isdir(named) else os.path.join(a.run, "inputs")
    with open_csv(os.path.join(a.run, "measurements.csv")) as f:
        rows = list(csv.DictReader(f))
    shapes, configs = write_folder(a.out, rows, inputs, run_info)
    print(f"{shapes} shapes, {configs} config rows -> {a.out} "
          f"(next: origami-bench report --out {a.out})", file=sys.stderr)


if __name__ == "__main__":
    main()
