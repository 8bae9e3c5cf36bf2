#!/usr/bin/env python3
"""Summarize scripts/hopper/best_regimes.sh's reports: per shape and input type, each
config's time over cuBLAS's in the sustained regime (medians over the passes of one run)
and in the burst regime (per run cuBLAS's pass median over the config's, then the median
and range over the runs). Standard library only. Usage: regimes_summary.py DIR"""
import glob
import json
import os
import statistics
import sys


def main(d):
    print(f"{'regime':<10} {'shape':<6} {'dtype':<5} {'config':<24} {'cuBLAS/config':>14}  "
          f"{'config ms':>10} {'cuBLAS ms':>10}  SM MHz at the end")
    for f in sorted(glob.glob(os.path.join(d, "sustained-*.json"))):
        _, s, dt = os.path.basename(f)[:-5].split("-")
        r = json.load(open(f))
        for c in r["configs"]:
            print(f"{'sustained':<10} {s:<6} {dt:<5} {c['config']:<24} {c['vs_cublas']:>14.3f}  "
                  f"{c['median_ms']:>10.4f} {r['cublas']['median_ms']:>10.4f}  "
                  f"{(r.get('clocks') or {}).get('sm_mhz', '-')}")
    burst = {}
    for f in sorted(glob.glob(os.path.join(d, "burst-*.json"))):
        _, s, dt, rest = os.path.basename(f)[:-5].split("-", 3)
        cfg = rest.rsplit("-", 1)[0]
        r = json.load(open(f))
        (c,) = r["configs"]
        burst.setdefault((s, dt, cfg), []).append(
            (c["vs_cublas"], c["median_ms"], r["cublas"]["median_ms"],
             (r.get("clocks") or {}).get("sm_mhz", "-")))
    for (s, dt, cfg), xs in sorted(burst.items()):
        v = [x[0] for x in xs]
        print(f"{'burst':<10} {s:<6} {dt:<5} {cfg:<24} {statistics.median(v):>14.3f}  "
              f"{statistics.median(x[1] for x in xs):>10.4f} "
              f"{statistics.median(x[2] for x in xs):>10.4f}  "
              f"{' '.join(str(x[3]) for x in xs)}  (runs: {' '.join(f'{x:.3f}' for x in v)})")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
