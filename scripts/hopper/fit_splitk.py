#!/usr/bin/env python3
"""Set the hopper family's `tp_splitk_reduce_cycles` from the H200 split-K runs
(results/h200/hopper/splitk/splitk.csv: six configs at 1 to 8 runs on eight shapes, fp16).

For each value on a grid, every config at 2, 3 and 4 runs is compared with the same config
unsplit: the measured ratio of their times against the model's (origami-select
--family hopper --gpu h200 with calibrations/fitted/h200-hopper.json and the value on
top). Only the shapes that are not on the held-out LLM list enter the error; the LLM
shapes among the runs are reported apart, as are the split each config's prediction
chooses against the best split measured. Usage (CPU, from the repository root, after
`cargo build --release`): python3 scripts/hopper/fit_splitk.py [VALUE...]"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

RUNS = "results/h200/hopper/splitk/splitk.csv"
FITTED = "calibrations/fitted/h200-hopper.json"


def held_out():
    shapes = set()
    with open("data/llm_shapes.csv") as f:
        for line in f:
            if line[:1].isdigit():
                shapes.add(tuple(int(x) for x in line.split(",")[:3]))
    return shapes


def measured():
    data = {}
    with open(RUNS) as f:
        for r in csv.DictReader(f):
            if r["dtype"] != "fp16" or r["status"] != "ok":
                continue
            parts = r["config"].split(",")
            runs = int(parts[3][len("split"):]) if len(parts) > 3 else 1
            if runs > 4:
                continue  # the family's space splits 2 to 4 ways
            key = (parts[0], "w12" if parts[2] == "c2" else "w8", parts[1], runs)
            shape = (int(r["m"]), int(r["n"]), int(r["k"]))
            data.setdefault(shape, {})[key] = float(r["kernel_us"])
    return data


def predicted(value, shape, scratch):
    base = json.load(open(FITTED))
    base["constants"]["tp_splitk_reduce_cycles"] = value
    json.dump(base, open(scratch, "w"))
    out = subprocess.run(
        ["target/release/origami-select", *map(str, shape), "--family", "hopper", "--gpu", "h200",
         "--top", "5000", "--format", "csv"],
        capture_output=True, text=True, check=True,
        env={**os.environ, "TRITONBLAS_HW_PARAMS": scratch}).stdout
    rows = list(csv.reader(out.splitlines()))
    col = {h: i for i, h in enumerate(rows[0])}
    pred = {}
    for r in rows[1:]:
        tile = "x".join(r[col[c]] for c in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"))
        key = (tile, "w" + r[col["num_warps"]], "s" + r[col["num_stages"]], int(r[col["SPLIT_K"]]))
        pred.setdefault(key, float(r[col["predicted_us"]]))
    return pred


def main(values):
    held = held_out()
    data = measured()
    fit_shapes = sorted(s for s in data if s not in held)
    print("fitting shapes:", " ".join("x".join(map(str, s)) for s in fit_shapes))
    print("held-out shapes:", " ".join("x".join(map(str, s)) for s in sorted(data) if s in held))
    print(f"{'value':>8} {'rms':>6} {'bias':>7}  split chosen / best split measured: fit mean (min), held mean (min)")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, "hw.json")
        for value in values:
            errors, chosen = [], {True: [], False: []}
            for shape, times in sorted(data.items()):
                pred = predicted(value, shape, scratch)
                for key, us in times.items():
                    one = key[:3] + (1,)
                    if key[3] > 1 and one in times and key in pred and one in pred and shape not in held:
                        errors.append(math.log(us / times[one]) - math.log(pred[key] / pred[one]))
                for base in {k[:3] for k in times}:
                    keys = [k for k in times if k[:3] == base and k in pred]
                    pick = min(keys, key=lambda k: pred[k])
                    chosen[shape in held].append(min(times[k] for k in keys) / times[pick])
            rms = math.sqrt(sum(e * e for e in errors) / len(errors))
            bias = sum(errors) / len(errors)
            f, h = chosen[False], chosen[True]
            print(f"{value:>8g} {rms:6.3f} {bias:+7.3f}  {sum(f) / len(f):.3f} ({min(f):.3f}), "
                  f"{sum(h) / len(h):.3f} ({min(h):.3f})")


if __name__ == "__main__":
    main([float(v) for v in sys.argv[1:]] or [0, 1000, 2000, 4000, 6000, 8000, 12000, 16000])
