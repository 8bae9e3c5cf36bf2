#!/usr/bin/env python3
"""Score one model setup on every committed sweep usable for issue 14 (CPU only).

    python3 scripts/calib_only/score_sweeps.py NAME [--h100 FILE] [--h200 FILE]
        [--triton FILE] [--origami FILE] [--predictions DIR]

Each FILE is a flat TRITONBLAS_HW_PARAMS override (some of the five parameters and/or
{"constants": ...}) or, for --h100 / --h200, a full calibration document (its five
parameters are used); the GPU file (--h100 / --h200) and the family file (--triton /
--origami) are merged (family constants win) and given to
`origami-bench refit --rounds 0`, which starts from the preset plus that override without
the embedded fitted tier. No file: the preset alone (the published latency model).
Gzipped configs.csv files are unpacked to a scratch folder. Prints one line per sweep
and set: A/BF median / min / mean and Kendall tau-b mean, and for the throughput model the
median measured / predicted time (the refit's absolute-scale step; 1 = predictions in
microseconds are right on the median; `--predictions` rows are scaled by it).
"""
import argparse, gzip, json, os, re, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                     "release", "origami-bench")

# (name, folder, family, gpu preset, fit set (scored as "fit"), dtype)
SWEEPS = [
    ("h100 triton classic2 (16 LLM decode)", "results/h100/triton-auto/classic2", "triton", "h100-sxm", "llm_shapes_shapes", "fp16"),
    ("h100 triton unaligned (3)", "results/h100/triton-unaligned/run", "triton", "h100-sxm", "unaligned_shapes", "fp16"),
    ("h100 origami check (6)", "results/h100/device-check/whole", "origami", "h100-sxm", "check_shapes", "fp16"),
    ("h200 triton (seed 23 / llm 12)", "results/h200/triton-table/fit", "triton", "h200", "seed_shapes", "fp16"),
    ("h200 origami (seed 23 / llm 49)", "results/h200/bench", "origami", "h200", "seed_shapes", "fp16"),
    ("h200 origami bf16 (seed 23 / llm 49)", "results/h200/bench-bf16", "origami", "h200", "seed_shapes", "bf16"),
]

LINE = re.compile(r"^(fit set|held out), before\s+shapes\s+(\d+)\s+A/BF median ([\d.]+)% min ([\d.]+)% mean ([\d.]+)%\s+tau mean ([-\d.]+)")


def load(path):
    if not path:
        return {}
    with open(path) as f:
        return json.load(f)


def merged(gpu_file, fam_file):
    g, f = load(gpu_file), load(fam_file)
    if "schema_version" in g:  # a full calibration document: its five parameters
        g = {"params": g["params"], "constants": g.get("constants", {})}
    params = {k: v for k, v in g.items() if k not in ("params", "constants")}
    params.update(g.get("params", {}))
    params.update({k: v for k, v in f.items() if k != "constants"})
    constants = dict(g.get("constants", {}))
    constants.update(f.get("constants", {}))
    out = dict(params)
    if constants:
        out["constants"] = constants
    return out or None


def sweep_dir(folder, scratch):
    p = os.path.join(ROOT, folder)
    if os.path.exists(os.path.join(p, "configs.csv")):
        return p
    d = os.path.join(scratch, folder.replace("/", "_"))
    os.makedirs(d, exist_ok=True)
    with gzip.open(os.path.join(p, "configs.csv.gz"), "rb") as src, open(os.path.join(d, "configs.csv"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--h100")
    ap.add_argument("--h200")
    ap.add_argument("--triton")
    ap.add_argument("--origami")
    ap.add_argument("--only", help="substring of the sweep names to run")
    ap.add_argument("--predictions", help="folder for each sweep's --predictions CSV")
    a = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="calib14-")
    print(f"== {a.name}")
    for name, folder, fam, gpu, fit_set, dtype in SWEEPS:
        if a.only and a.only not in name:
            continue
        ov = merged(a.h100 if gpu.startswith("h100") else a.h200,
                    a.triton if fam == "triton" else a.origami)
        env = dict(os.environ)
        env.pop("TRITONBLAS_HW_PARAMS", None)
        if ov:
            path = os.path.join(scratch, "override.json")
            with open(path, "w") as f:
                json.dump(ov, f)
            env["TRITONBLAS_HW_PARAMS"] = path
        cmd = [BENCH, "refit", "--out", sweep_dir(folder, scratch), "--fit-set", fit_set,
               "--family", fam, "--gpu", gpu, "--dtype", dtype, "--rounds", "0"]
        if a.predictions:
            os.makedirs(a.predictions, exist_ok=True)
            cmd += ["--predictions", os.path.join(a.predictions, folder.replace("/", "_") + f"-{dtype}.csv")]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{name:40s} FAILED: {out.stderr.strip()[:300]}")
            continue
        scale = re.search(r"median measured/predicted ([\d.]+)", out.stdout + out.stderr)
        if scale:
            print(f"{name:40s} (throughput model: median measured/predicted time on the first set {float(scale.group(1)):.3f})")
        for line in out.stdout.splitlines():
            m = LINE.match(line)
            if m:
                kind = "fit" if m.group(1) == "fit set" else "held"
                label = "seed" if (kind == "fit" and "h200" in gpu) else ("llm" if kind == "held" else "all")
                print(f"{name:40s} {label:5s} n={m.group(2):>2s}  A/BF med {m.group(3):>5s}%  min {m.group(4):>5s}%  mean {m.group(5):>5s}%  tau {m.group(6)}")
    shutil.rmtree(scratch)


if __name__ == "__main__":
    sys.exit(main())
