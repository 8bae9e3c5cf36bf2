#!/usr/bin/env python3
"""Where a family's Kendall tau is lost, from a committed sweep (CPU only): the model's
prediction of every timed config (`origami-select --shapes ... --top 100000 --format csv`,
the committed model), then per list:
  * tau-b per shape over the configs timed (the mean is what `origami-bench refit` reports);
  * the ceiling that timing noise alone leaves: tau of the measured times against
    themselves with a log-normal noise of sigma (1, 2, 3, 5 %) added (seeded);
  * tau between tiles (each tile's fastest launch, measured and predicted) and the share of
    pairs within a tile (launches of one tile) that the model orders right;
  * the residual log(predicted / measured) less its shape median, by stages x BLOCK_K and by
    tile (mean, spread, count): structure the model's form misses.
Configs are matched without their GROUP_SIZE_M (the listing's phase-1 group and the sweep's
may differ), their launch words in one order. The environment can rank by another
objective: TAU_OBJECTIVE (origami-select's --objective, e.g. sustained) and TAU_COLUMN (the
listing's column to rank by, e.g. sustained_us; default predicted_us).
Usage: tau_analysis.py --family FAMILY --gpu GPU [--dtype fp16] SWEEP.csv[.gz]..."""
import argparse
import collections
import csv
import gzip
import io
import math
import os
import random
import re
import statistics
import subprocess
import tempfile


def taub(xs, ys):
    c = d = tx = ty = 0
    n = len(xs)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = xs[i] - xs[j], ys[i] - ys[j]
            if a == 0 and b == 0:
                continue
            if a == 0:
                tx += 1
            elif b == 0:
                ty += 1
            elif (a > 0) == (b > 0):
                c += 1
            else:
                d += 1
    den = math.sqrt((c + d + tx) * (c + d + ty))
    return (c - d) / den if den else 0.0


def key_of(config):
    """A config's name without its GROUP_SIZE_M, its launch words in one order."""
    tile, *launch = config.split(",")
    return ",".join([tile] + sorted(w for w in launch if not re.fullmatch(r"g\d+|k1", w)))


def measured(path, dtype):
    raw = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    out = collections.defaultdict(dict)
    for r in csv.DictReader(io.StringIO(raw.read())):
        if r["dtype"] != dtype or r.get("passed") != "1" or not r.get("measured_ms"):
            continue
        shape = (int(r["m"]), int(r["n"]), int(r["k"]))
        k = key_of(r["config"])
        out[shape][k] = min(float(r["measured_ms"]) * 1e3, out[shape].get(k, math.inf))
    return out


def predicted(shapes, family, gpu, dtype, select):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("M,N,K\n" + "".join(f"{m},{n},{k}\n" for m, n, k in shapes))
    try:
        objective = os.environ.get("TAU_OBJECTIVE")
        text = subprocess.run([select, "--shapes", f.name, "--family", family, "--gpu", gpu,
                               "--dtype", dtype, "--top", "100000", "--format", "csv"]
                              + (["--objective", objective] if objective else []),
                              capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    column = os.environ.get("TAU_COLUMN", "predicted_us")
    out = collections.defaultdict(dict)
    for r in csv.DictReader(text.splitlines()):
        c = f"{r['BLOCK_SIZE_M']}x{r['BLOCK_SIZE_N']}x{r['BLOCK_SIZE_K']},w{r['num_warps']},s{r['num_stages']}"
        if r.get("SPLIT_K") not in (None, "", "1"):
            c += f",k{r['SPLIT_K']}"
        if r.get("STREAM_K") == "true":
            c += ",sk"
        if r.get("FLATTEN") == "true":
            c += ",flatten"
        if r.get("SWAP") == "true":
            c += ",swap"
        out[(int(r["M"]), int(r["N"]), int(r["K"]))][key_of(c)] = float(r[column])
    return out


def analyse(name, meas, pred):
    shapes = [s for s in sorted(meas) if len([c for c in meas[s] if c in pred.get(s, {})]) > 2]
    taus, between, within = [], [], [0, 0, 0]
    rng = random.Random(1)
    ceiling = {sig: [] for sig in (0.01, 0.02, 0.03, 0.05)}
    resid = collections.defaultdict(list)
    for s in shapes:
        cs = [c for c in meas[s] if c in pred[s]]
        xs = [pred[s][c] for c in cs]
        ys = [meas[s][c] for c in cs]
        taus.append(taub(xs, ys))
        for sig, v in ceiling.items():
            v.append(taub([y * math.exp(rng.gauss(0, sig)) for y in ys], ys))
        tiles = collections.defaultdict(list)
        for c in cs:
            tiles[c.split(",")[0]].append(c)
        between.append(taub([min(pred[s][c] for c in t) for t in tiles.values()],
                            [min(meas[s][c] for c in t) for t in tiles.values()]))
        for t in tiles.values():
            for i in range(len(t)):
                for j in range(i + 1, len(t)):
                    a = pred[s][t[i]] - pred[s][t[j]]
                    b = meas[s][t[i]] - meas[s][t[j]]
                    within[0 if a == 0 else (1 if a * b > 0 else 2)] += 1
        r = [math.log(pred[s][c] / meas[s][c]) for c in cs]
        mid = statistics.median(r)
        for c, v in zip(cs, r):
            tile, *launch = c.split(",")
            bk = tile.split("x")[2]
            stages = next((x for x in launch if x.startswith("s") and x[1:].isdigit()), "s?")
            resid[("stages x BLOCK_K", f"{stages} bk{bk}")].append(v - mid)
            resid[("tile", tile.rsplit("x", 1)[0])].append(v - mid)
    print(f"== {name}: {len(shapes)} shapes")
    print(f"tau-b mean over shapes {statistics.mean(taus):.3f} (median {statistics.median(taus):.3f})")
    print("noise ceiling (measured vs measured x lognormal noise): " + ", ".join(
        f"{int(sig * 100)} % -> {statistics.mean(v):.3f}" for sig, v in ceiling.items()))
    tot = sum(within)
    print(f"between tiles (fastest launch each): tau mean {statistics.mean(between):.3f}; "
          f"within a tile: {within[1] / tot:.0%} of {tot} pairs ordered right, "
          f"{within[2] / tot:.0%} wrong, {within[0] / tot:.0%} tied in the model")
    for group in ("stages x BLOCK_K", "tile"):
        cells = sorted((k[1], v) for k, v in resid.items() if k[0] == group)
        print(f"residual log(pred/meas) less the shape median, by {group}: " + "; ".join(
            f"{k} {statistics.mean(v):+.3f} (sd {statistics.pstdev(v):.3f}, {len(v)})"
            for k, v in cells))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("--family", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--dtype", default="fp16")
    ap.add_argument("--select", default="target/release/origami-select")
    a = ap.parse_args()
    for path in a.sweeps:
        meas = measured(path, a.dtype)
        analyse(path, meas, predicted(sorted(meas), a.family, a.gpu, a.dtype, a.select))


if __name__ == "__main__":
    main()
