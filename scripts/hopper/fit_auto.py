#!/usr/bin/env python3
"""Fit the maps `--family auto` and `--family triton-auto` compare times through
(calibrations/fitted/sm90-auto.json).

Each family's model is fitted to rank configs, not to predict absolute time: on the H100 the
Hopper model's pipeline fill adds ~13 us to every prediction, and the mma.sync model under-
predicts decode shapes by 1.4-2.7x, so comparing raw predicted times picked the mma.sync
kernel on shapes where it ran at 0.56-0.72 of cuBLAS. Per family, this script fits
    measured_us = offset_us + scale * max(predicted_us, predicted_min_us)
to the measured time of the family's pick on the seed list only (least squares in log time,
a grid over offset and scale), `predicted_min_us` being the smallest prediction fitted (no
extrapolation below it). It then scores the choice on every list given: per shape the
family whose mapped time is lower, its pick's A/cuBLAS, beside the raw rule and the better
of the two picks. Standard library only.

Inputs: a hopper brute-force sweep folder per list (`origami-bench sweep --family hopper`:
shapes.csv with the pick's prediction and time) and the reports of the mma.sync family's
picks (`FAMILY=origami scripts/hopper/auto_check.sh`: one `origami-bench run --format json`
per shape, in folders or a .tgz of them).

For `triton-auto` the same fit and score over Triton's two kernels: the classic family's
picks timed by `scripts/triton_sweep.py` (a folder whose configs.csv marks the pick,
is_pick 1, with its prediction; shapes.csv with cuBLAS) and the tensor-descriptor family's
picks (a `tma_sweep.py` run folder, measurements.csv or .csv.gz, that timed them beside
cuBLAS, and the picks file `origami-select --shapes ... --family triton-tma` printed, whose
predictions are the ones mapped).

Usage: python3 scripts/hopper/fit_auto.py --hopper DIR [DIR ...] --origami PATH [PATH ...]
           [--triton DIR [DIR ...] --triton-tma RUN_DIR [RUN_DIR ...] --tma-picks PICKS.txt]
           [--fit-set seed_shapes] [--write FILE]
"""
import argparse
import csv
import gzip
import io
import json
import math
import os
import statistics
import sys
import tarfile

# The fitted constants the inputs' predictions came from (the files the runs' binary embedded):
# the map applies only where a family's constants are exactly that file's.
CONSTANTS_FILE = {"hopper": "calibrations/fitted/h200-hopper.json",
                  "origami": "calibrations/fitted/h200-origami.json",
                  "triton": "calibrations/fitted/h200-triton-throughput.json",
                  "triton-tma": "calibrations/fitted/h100-triton-tma.json"}

# The family sets whose members' times are compared: (set, first member, second member).
SETS = [("auto", "hopper", "origami"), ("triton-auto", "triton", "triton-tma")]


def open_text(path):
    """A CSV file, or its gzipped copy (PATH.gz: result folders gzip files over 100 kB)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rt", newline="")
    return open(path, newline="")


def triton_rows(dirs):
    """The classic family's timed picks (fp16) of `scripts/triton_sweep.py` folders, each
    with its prediction from the inputs listing the run timed (run_info.json's args.inputs:
    rank 1 of M_N_K.csv, `origami-select --all --format csv`)."""
    out = {}
    for d in dirs:
        with open(os.path.join(d, "run_info.json")) as f:
            inputs = json.load(f)["args"]["inputs"]

        def predicted_us(m, n, k):
            with open(os.path.join(inputs, f"{m}_{n}_{k}.csv"), newline="") as f:
                return next(float(r["predicted_us"]) for r in csv.DictReader(f) if r["rank"] == "1")

        with open_text(os.path.join(d, "shapes.csv")) as f:
            cublas = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["cublas_ms"]) * 1e3
                      for r in csv.DictReader(f)}
        with open_text(os.path.join(d, "configs.csv")) as f:
            for r in csv.DictReader(f):
                if r["is_pick"] != "1" or r["passed"] != "1" or not r["measured_ms"]:
                    continue
                shape = (int(r["m"]), int(r["n"]), int(r["k"]))
                # triton_sweep.py names a list by its inputs' source column and "_shapes"
                # (a source already ending in it reads "seed_shapes_shapes")
                list_name = r["set"].replace("_shapes_shapes", "_shapes")
                out[shape + (r["dtype"],)] = {"set": list_name, "pred": predicted_us(*shape),
                                              "meas": float(r["measured_ms"]) * 1e3,
                                              "cublas": cublas[shape]}
    return out


def tma_rows(dirs, picks_path):
    """The tensor-descriptor family's picks (the picks file's config and prediction) as
    `tma_sweep.py` runs timed them, with the mean of each shape's two cuBLAS timings."""
    picks = {}
    with open(picks_path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and p[0].isdigit():
                picks[(int(p[0]), int(p[1]), int(p[2]), p[3])] = (p[4], float(p[5]))
    out = {}
    for d in dirs:
        times, cublas, sets = {}, {}, {}
        with open_text(os.path.join(d, "measurements.csv")) as f:
            for r in csv.DictReader(f):
                if r["status"] != "ok":
                    continue
                key = (int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])
                sets[key] = r["set"]
                if r["config"] in ("cublas_before", "cublas_after"):
                    cublas.setdefault(key, []).append(float(r["us"]))
                else:
                    times[(key, r["config"])] = float(r["us"])
        for key, (cfg, pred) in picks.items():
            if (key, cfg) in times and key in cublas:
                out[key] = {"set": sets[key], "pred": pred, "meas": times[(key, cfg)],
                            "cublas": statistics.mean(cublas[key])}
    return out


def hopper_rows(dirs):
    out = {}
    for d in dirs:
        with open(os.path.join(d, "shapes.csv"), newline="") as f:
            for r in csv.DictReader(f):
                key = (int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])
                out[key] = {"set": r["set"], "pred": float(r["pick_predicted_us"]),
                            "meas": float(r["pick_ms"]) * 1e3, "cublas": float(r["cublas_ms"]) * 1e3}
    return out


def reports(paths):
    """Every `origami-bench run --format json` document under the paths (folders or .tgz)."""
    for p in paths:
        if p.endswith((".tgz", ".tar.gz")):
            with tarfile.open(p) as t:
                for m in t.getmembers():
                    if m.isfile() and m.name.endswith(".json"):
                        yield m.name, json.load(t.extractfile(m))
        else:
            for root, _, files in os.walk(p):
                for n in files:
                    if n.endswith(".json"):
                        with open(os.path.join(root, n)) as f:
                            yield os.path.join(root, n), json.load(f)


def origami_rows(paths):
    out = {}
    for name, d in reports(paths):
        pick = [c for c in d["configs"] if c.get("is_pick")]
        if not pick or not pick[0].get("passed") or pick[0].get("median_ms") is None:
            continue
        s = d["shape"]
        key = (s["m"], s["n"], s["k"], s.get("dtype", "fp16"))
        list_name = "seed_shapes" if "-seed-" in name else "llm_shapes" if "-llm-" in name else "?"
        out[key] = {"set": list_name, "pred": pick[0]["predicted_us"],
                    "meas": pick[0]["median_ms"] * 1e3, "cublas": d["cublas"]["median_ms"] * 1e3}
    return out


def fit(points):
    """(offset_us, scale, predicted_min_us, rms log error): the grid's least squares."""
    lo = min(p for p, _ in points)
    best = None
    for i in range(-160, 81):
        a = i * 0.125
        for j in range(0, 201):
            b = 0.5 + j * 0.01
            s = 0.0
            for p, m in points:
                t = a + b * max(p, lo)
                if t <= 0.05:
                    s = math.inf
                    break
                s += (math.log(m) - math.log(t)) ** 2
            if best is None or s < best[0]:
                best = (s, a, b)
    s, a, b = best
    return a, b, lo, math.sqrt(s / len(points))


def mapped(m, pred):
    return m["offset_us"] + m["scale"] * max(pred, m["predicted_min_us"])


def score_set(set_name, first, second, fam, maps):
    """Per list, A/cuBLAS of the pick a rule chooses between the two families (each pick
    against the cuBLAS of its own run), fp16 shapes both families timed: raw predicted
    times, mapped times, and the better measured pick."""
    both = sorted(k for k in set(fam[first]) & set(fam[second]) if k[3] == "fp16")
    for list_name in sorted({fam[first][k]["set"] for k in both}):
        keys = [k for k in both if fam[first][k]["set"] == list_name]
        print(f"\n{set_name}, {list_name} ({len(keys)} shapes, fp16; A/cuBLAS of the chosen pick, "
              "each pick against the cuBLAS of its own run)")
        for rule in ("raw", "mapped", "better"):
            got = []
            for k in keys:
                x, y = fam[first][k], fam[second][k]
                if rule == "raw":
                    take_x = x["pred"] <= y["pred"]
                elif rule == "mapped":
                    take_x = mapped(maps[first], x["pred"]) <= mapped(maps[second], y["pred"])
                else:
                    take_x = x["meas"] <= y["meas"]
                r = x if take_x else y
                got.append((r["cublas"] / r["meas"], k, first if take_x else second))
            v = [g[0] for g in got]
            low = ", ".join(f"{k[0]}x{k[1]}x{k[2]} {fa} {x:.3f}" for x, k, fa in sorted(got)[:3] if x < 0.8)
            print(f"  {rule:<7} median {statistics.median(v):.3f} min {min(v):.3f} mean {statistics.mean(v):.3f}"
                  f" below 0.80: {sum(x < 0.8 for x in v)}{' (' + low + ')' if low else ''}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hopper", nargs="+", required=True)
    ap.add_argument("--origami", nargs="+", required=True)
    ap.add_argument("--triton", nargs="+", default=[])
    ap.add_argument("--triton-tma", nargs="+", default=[])
    ap.add_argument("--tma-picks")
    ap.add_argument("--fit-set", default="seed_shapes")
    ap.add_argument("--write")
    a = ap.parse_args()
    if bool(a.triton) != bool(a.triton_tma) or bool(a.triton_tma) != bool(a.tma_picks):
        print("fit_auto.py: --triton, --triton-tma and --tma-picks go together", file=sys.stderr)
        sys.exit(2)
    fam = {"hopper": hopper_rows(a.hopper), "origami": origami_rows(a.origami)}
    if a.triton:
        fam["triton"] = triton_rows(a.triton)
        fam["triton-tma"] = tma_rows(a.triton_tma, a.tma_picks)
    maps = {}
    for name, rows in fam.items():
        pts = [(r["pred"], r["meas"]) for k, r in rows.items()
               if r["set"] == a.fit_set and k[3] == "fp16"]
        if len(pts) < 3:
            raise SystemExit(f"fit_auto.py: {name}: {len(pts)} {a.fit_set} shapes with a timed pick (3 needed)")
        off, sc, lo, rms = fit(pts)
        maps[name] = {"constants_file": CONSTANTS_FILE[name], "offset_us": off, "scale": sc, "predicted_min_us": lo,
                      "fit_shapes": len(pts), "rms_log_error": round(rms, 4)}
        print(f"{name}: measured_us = {off:+.3f} + {sc:.2f} x max(predicted_us, {lo:.2f}) "
              f"over {len(pts)} {a.fit_set} shapes, RMS log error {rms:.3f}")
    for set_name, first, second in SETS:
        if first not in fam or second not in fam:
            continue
        score_set(set_name, first, second, fam, maps)
    if a.write:
        doc = {
            "what": "per family, measured_us = offset_us + scale * max(predicted_us, predicted_min_us) of its pick; --family auto (hopper, origami) and --family triton-auto (triton, triton-tma) compare these",
            "architecture_major": 9,
            "fit_set": a.fit_set,
            "inputs": {"hopper": a.hopper, "origami": a.origami},
            "command": "python3 scripts/hopper/fit_auto.py --hopper " + " ".join(a.hopper)
                       + " --origami " + " ".join(a.origami)
                       + ("".join(f" --{k} " + " ".join(v) for k, v in
                                  (("triton", a.triton), ("triton-tma", a.triton_tma)))
                          + f" --tma-picks {a.tma_picks}" if a.triton else "")
                       + f" --fit-set {a.fit_set} --write {a.write}",
            "families": maps,
        }
        if a.triton:
            doc["inputs"].update({"triton": a.triton, "triton-tma": a.triton_tma, "tma-picks": a.tma_picks})
        with open(a.write, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
