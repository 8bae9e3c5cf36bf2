#!/usr/bin/env python3
"""Score the device check of the learned correction (scripts/correction/validate.sh): per
shape and type, the model's pick and the corrected pick against the fastest launch timed in
the same run (four alternating passes, medians), then the median, minimum and mean of
those ratios per type, and the shapes where they differ.

Usage: validate_score.py JOBS FOLDER... (the untarred validate folders)"""
import os
import re
import statistics
import sys


def bad(why):
    print(f"validate_score: {why}", file=sys.stderr)
    sys.exit(2)


def medians(path):
    out = {}
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines[2:]:
        if line.startswith("passes"):
            break
        m = re.match(r"(\S+?)\*?\s+([\d.]+)\s", line)
        if m and m.group(1) != "cuBLAS":
            out[m.group(1)] = float(m.group(2))
        elif m:
            out["cuBLAS"] = float(m.group(2))
    return out


def main():
    if len(sys.argv) < 3:
        bad("give JOBS and the validate folders")
    files = {}
    for d in sys.argv[2:]:
        for name in os.listdir(d):
            if name.endswith(".txt") and "x" in name:
                files[name] = os.path.join(d, name)
    rows = {"fp16": [], "bf16": []}
    for line in open(sys.argv[1]):
        dt, m, n, k, *configs = line.split()
        name = f"{m}x{n}x{k}-{dt}.txt"
        if name not in files:
            print(f"{m}x{n}x{k} {dt}: not timed", file=sys.stderr)
            continue
        t = medians(files[name])
        if len(configs) < 2:
            bad(f"{m}x{n}x{k} {dt}: a job line names the model's pick and the corrected pick")
        plain, corrected = configs[0], configs[1]
        timed = {c: t[c] for c in configs if c in t}
        if plain not in timed or corrected not in timed:
            print(f"{m}x{n}x{k} {dt}: a pick has no time", file=sys.stderr)
            continue
        fast = min(timed.values())
        rows[dt].append((f"{m}x{n}x{k}", fast / timed[plain], fast / timed[corrected],
                         t.get("cuBLAS", float("nan")) / timed[corrected], plain, corrected))
    print("shape dtype: model pick / corrected pick, A/BF against the fastest launch timed "
          "in the same run (model pick, corrected pick, the sweep's two fastest)")
    for dt, rs in rows.items():
        if not rs:
            continue
        for s, a, b, cub, p, c in rs:
            if p != c:
                print(f"  {s} {dt}: {a * 100:.1f} -> {b * 100:.1f} %  ({p} -> {c})")
        for label, i in (("model pick", 1), ("corrected pick", 2)):
            v = [r[i] for r in rs]
            worst = min(rs, key=lambda r: r[i])
            print(f"{dt} {label}: median {statistics.median(v) * 100:.1f} %, min "
                  f"{min(v) * 100:.1f} % ({worst[0]}), mean {statistics.mean(v) * 100:.1f} % "
                  f"over {len(v)} shapes")
        print(f"{dt} corrected pick / cuBLAS: median {statistics.median(r[3] for r in rs):.3f}")


if __name__ == "__main__":
    main()
