#!/usr/bin/env python3
"""The device check of the hopper family's learned correction: for every shape of the
held-out sweeps, the model's pick (`origami-select --no-correction`), the corrected pick
(`origami-select`) and the sweep's two fastest launches, one line per shape and type:
"DTYPE M N K MODEL_PICK CORRECTED_PICK FASTEST SECOND" (the two picks may be the same
launch; scripts/correction/validate.sh times each launch once).

Usage: validate_jobs.py SWEEP.csv.gz... [--select target/release/origami-select] > JOBS"""
import argparse
import csv
import gzip
import os
import subprocess
import sys
import tempfile


def bad(why):
    print(f"validate_jobs: {why}", file=sys.stderr)
    sys.exit(2)


def fastest_two(path):
    """(dtype, m, n, k) -> the two fastest verified launches of a sweep."""
    rows = {}
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            if r.get("passed") != "1" or not r.get("measured_ms"):
                continue
            key = (r["dtype"], int(r["m"]), int(r["n"]), int(r["k"]))
            rows.setdefault(key, []).append((float(r["measured_ms"]), r["config"]))
    return {k: [c for _, c in sorted(v)[:2]] for k, v in rows.items()}


def picks(select, shapes, dtype, correction):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("M,N,K\n" + "".join(f"{m},{n},{k}\n" for m, n, k in shapes))
    try:
        out = subprocess.run(
            [select, "--shapes", f.name, "--family", "hopper", "--gpu", "h100-sxm", "--dtype",
             dtype, "--format", "csv"] + ([] if correction else ["--no-correction"]),
            capture_output=True, text=True, check=True).stdout
    except subprocess.CalledProcessError as e:
        bad(f"{select}: {e.stderr.strip()}")
    finally:
        os.unlink(f.name)
    got = {}
    for r in csv.DictReader(out.splitlines()):
        c = (f"{r['BLOCK_SIZE_M']}x{r['BLOCK_SIZE_N']}x{r['BLOCK_SIZE_K']},g{r['GROUP_SIZE_M']},"
             f"w{r['num_warps']},s{r['num_stages']}")
        if r.get("SWAP") == "true":
            c += ",swap"
        if r.get("SPLIT_K") not in (None, "", "1"):
            c += f",k{r['SPLIT_K']}"
        got[(int(r["M"]), int(r["N"]), int(r["K"]))] = c
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("--select", default="target/release/origami-select")
    a = ap.parse_args()
    if not os.access(a.select, os.X_OK):
        bad(f"--select {a.select}: no such program (cargo build --release)")
    best = {}
    for p in a.sweeps:
        try:
            best.update(fastest_two(p))
        except (OSError, gzip.BadGzipFile, csv.Error, KeyError, ValueError) as e:
            bad(f"{p}: {e}")
    for dtype in ("fp16", "bf16"):
        shapes = sorted(k[1:] for k in best if k[0] == dtype)
        if not shapes:
            continue
        plain = picks(a.select, shapes, dtype, False)
        corrected = picks(a.select, shapes, dtype, True)
        for s in shapes:
            if s not in plain or s not in corrected:
                bad(f"no pick for {s} {dtype}")
            extra = [c for c in best[(dtype, *s)] if c not in (plain[s], corrected[s])]
            print(dtype, *s, plain[s], corrected[s], *extra)


if __name__ == "__main__":
    main()
