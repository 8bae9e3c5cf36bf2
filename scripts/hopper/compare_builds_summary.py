#!/usr/bin/env python3
"""Summary of a compare_builds folder (scripts/device_lib.sh; CPU only): per shape, type and
config, the median and the fastest of the four alternating passes of the new and the old
build (each in its own process), new / old for both, and each build's fastest pass against
the fastest cuBLAS pass of its own process. Under the power cap a pass can be slowed as a
whole (cuBLAS with it), so the fastest pass compares the kernels' speed best.
Usage: compare_builds_summary.py FOLDER"""
import glob
import os
import statistics
import sys


def passes(path):
    """{config: [ms per pass]} from the 'passes' block of an `origami-bench run` report."""
    out, inside = {}, False
    with open(path) as f:
        for line in f:
            if line.startswith("passes"):
                inside = True
                continue
            parts = line.split()
            if inside and len(parts) >= 2:
                try:
                    out[parts[0]] = [float(x) for x in parts[1:]]
                except ValueError:
                    inside = False
    return out


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: compare_builds_summary.py FOLDER", file=sys.stderr)
        sys.exit(2)
    news = sorted(glob.glob(os.path.join(sys.argv[1], "*-new.txt")))
    if not news:
        print(f"compare_builds_summary.py: no *-new.txt in {sys.argv[1]}", file=sys.stderr)
        sys.exit(2)
    for new in news:
        old = new[: -len("-new.txt")] + "-old.txt"
        if not os.path.isfile(old):
            print(f"compare_builds_summary.py: no {old} beside {new}", file=sys.stderr)
            sys.exit(2)
    print(f"{'shape-type':24s} {'config':30s} {'old med':>8s} {'new med':>8s} {'new/old':>7s}"
          f" {'old min':>8s} {'new min':>8s} {'new/old':>7s} {'cuB/old':>7s} {'cuB/new':>7s}")
    ratios = []
    for new in news:
        old = new[: -len("-new.txt")] + "-old.txt"
        n, o = passes(new), passes(old)
        if "cuBLAS" not in n or "cuBLAS" not in o:
            print(f"{os.path.basename(new)}: no passes (a failed run?)")
            continue
        for c in n:
            if c == "cuBLAS" or c not in o:
                continue
            om, nm = statistics.median(o[c]), statistics.median(n[c])
            ob, nb = min(o[c]), min(n[c])
            ratios.append(nb / ob)
            print(f"{os.path.basename(new)[: -len('-new.txt')]:24s} {c:30s} {om:8.4f} {nm:8.4f}"
                  f" {nm / om:7.3f} {ob:8.4f} {nb:8.4f} {nb / ob:7.3f}"
                  f" {min(o['cuBLAS']) / ob:7.3f} {min(n['cuBLAS']) / nb:7.3f}")
    if ratios:
        print(f"fastest pass new / old: median {statistics.median(ratios):.3f}, "
              f"range {min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} launches")


if __name__ == "__main__":
    main()
