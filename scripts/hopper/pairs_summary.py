#!/usr/bin/env python3
"""Summary of scripts/hopper/cluster_pairs.sh's reports (one `origami-bench run` JSON per
shape: the model's pick alone and with `cluster`): per shape the two times, alone/cluster
(above 1: the cluster is faster), each against cuBLAS, and the distribution. With --runs,
every other report of the folder (scripts/hopper/cluster_pairing_check.sh's `check-*` and
`onewave-*`): each config's time, its ratio to cuBLAS and its check.
Usage: pairs_summary.py DIR_OR_TGZ [DTYPE] | pairs_summary.py --runs DIR_OR_TGZ"""
import glob
import io
import json
import os
import statistics
import sys
import tarfile


def reports(src, prefix="pairs-"):
    if os.path.isdir(src):
        for f in sorted(glob.glob(os.path.join(src, prefix + "*.json"))):
            with open(f) as fh:
                yield os.path.basename(f), fh.read()
        return
    with tarfile.open(src) as t:
        for m in sorted(t.getmembers(), key=lambda m: m.name):
            base = os.path.basename(m.name)
            if m.isfile() and base.startswith(prefix) and base.endswith(".json"):
                yield base, t.extractfile(m).read().decode()


def runs(src):
    for prefix in ("check-", "onewave-"):
        for name, text in reports(src, prefix):
            d = json.loads(text)
            s = d["shape"]
            print(f"{name}: {s['m']}x{s['n']}x{s['k']} {s['dtype']}, cuBLAS "
                  f"{d['cublas']['median_ms'] * 1e3:.1f} us")
            for c in d["configs"]:
                print(f"  {c['config']:34} {c['median_ms'] * 1e3:8.1f} us  vs cuBLAS "
                      f"{c['vs_cublas']:.3f}  passed {c['passed']}  rel. error {c['rel_err']:.1e}")


def main():
    if sys.argv[1] == "--runs":
        runs(sys.argv[2])
        return
    src = sys.argv[1]
    dtype = sys.argv[2] if len(sys.argv) > 2 else "fp16"
    ratios = []
    print("# shape, config, alone us, cluster us, alone/cluster (above 1: cluster faster), each vs cuBLAS")
    for name, text in reports(src):
        if f"-{dtype}-" not in name or not text.strip():
            continue
        d = json.loads(text)
        by = {c["config"]: c for c in d["configs"] if c.get("passed")}
        alone = [c for n, c in by.items() if not n.endswith(",cluster")]
        if not alone:
            continue
        a = alone[0]
        c = by.get(a["config"] + ",cluster")
        if c is None:
            continue
        s = d["shape"]
        r = a["median_ms"] / c["median_ms"]
        ratios.append(r)
        print(f"{s['m']}x{s['n']}x{s['k']} {a['config']} {a['median_ms'] * 1e3:.1f} "
              f"{c['median_ms'] * 1e3:.1f} {r:.3f} | {a['vs_cublas']:.3f} {c['vs_cublas']:.3f}")
    if ratios:
        print(f"# {len(ratios)} shapes: alone/cluster median {statistics.median(ratios):.3f}, "
              f"min {min(ratios):.3f}, max {max(ratios):.3f}; cluster faster by > 2 %: "
              f"{sum(r > 1.02 for r in ratios)}, slower by > 2 %: {sum(r < 1 / 1.02 for r in ratios)}")


if __name__ == "__main__":
    main()
