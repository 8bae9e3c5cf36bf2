#!/usr/bin/env python3
"""The triton-tma family's dense config list for a brute force of the seed list (issue 11):
every config of the compiled-resource table (`data/triton_tma_sm90.csv`, Triton 3.6 on a
CPU) that compiled without spilling, at the given GROUP_SIZE_M values, as the one-column
CSV `scripts/triton/tma_sweep.py --configs` reads. The learned correction fitted on the
124-config sweep had too few launches per seed shape to learn the family's residual
(docs/correction.md); this is the list a denser sweep times.

Usage: python3 scripts/triton/tma_dense_configs.py [--table CSV] [--groups 8[,1,16]] > FILE
Exit 2 with one line when the table cannot be read.
"""
import argparse
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))

from origami_gemm.kernels.triton_tma import TmaConfig  # noqa: E402


def clean_configs(table_path, groups):
    """The table's clean rows as TmaConfigs, once per group: compiled, and no spill bytes
    (stores plus loads, as the model's reader of the table counts them:
    crates/origami-core/src/model/family/triton_persistent/)."""
    with open(table_path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    out = []
    for r in rows:
        if r["status"] != "ok" or int(r["spill_store_bytes"]) + int(r["spill_load_bytes"]) != 0:
            continue
        for g in groups:
            out.append(TmaConfig(int(r["bm"]), int(r["bn"]), int(r["bk"]), g, int(r["w"]),
                                 int(r["s"]), WARP_SPECIALIZE=r["ws"] == "1",
                                 FLATTEN=r["flatten"] == "1", EPILOGUE_SUBTILE=r["subtile"] == "1"))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", default=os.path.join(ROOT, "data", "triton_tma_sm90.csv"),
                    help="the compiled-resource table (default: data/triton_tma_sm90.csv)")
    ap.add_argument("--groups", default="8",
                    help="GROUP_SIZE_M values, comma-separated (default: 8)")
    a = ap.parse_args(argv)
    try:
        groups = [int(g) for g in a.groups.split(",")]
        if any(g < 1 for g in groups):
            raise ValueError("a group size must be at least 1")
        configs = clean_configs(a.table, groups)
    except (OSError, KeyError, ValueError) as e:
        print(f"tma_dense_configs.py: {e}", file=sys.stderr)
        return 2
    w = csv.writer(sys.stdout)
    w.writerow(["config"])
    for c in configs:
        w.writerow([c.text()])
    print(f"tma_dense_configs.py: {len(configs)} configs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
