#!/usr/bin/env python3
"""Held-out references for the triton-tma family from repeated sweeps (CPU only). Reads
the single-pass sweep (configs.csv.gz of FIRST) and a sweep timed with `tma_sweep.py
--passes P` (configs.csv.gz and measurements.csv.gz of PASSES, whose pass_us column holds
every pass's time) and writes two configs.csv files into OUT: `passes.csv`, the P-pass
sweep's rows as they are (the median of its passes), and `all.csv`, its rows with each
launch's time the median of the P passes and FIRST's time (launches both timed); each
EXTRA single-pass sweep (configs.csv.gz) joins that median where it timed the launch (the
dense seed sweep beside the seed list's passes). Prints the Kendall tau-b between FIRST
and the P-pass median over each shape's launches (mean over shapes, per type), the timing
noise the references differ by, and how many launches each EXTRA joined.
Usage: passes_reference.py FIRST PASSES OUT [EXTRA ...]"""
import csv
import gzip
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tau_analysis import taub  # noqa: E402


def rows(path):
    with gzip.open(path, "rt") as f:
        return list(csv.DictReader(f))


def main():
    if len(sys.argv) < 4:
        print("usage: passes_reference.py FIRST PASSES OUT [EXTRA ...]", file=sys.stderr)
        sys.exit(2)
    first, passes, out = sys.argv[1:4]
    extras = sys.argv[4:]
    need = [os.path.join(first, "configs.csv.gz"), os.path.join(passes, "configs.csv.gz"),
            os.path.join(passes, "measurements.csv.gz")]
    need += [os.path.join(e, "configs.csv.gz") for e in extras]
    missing = [f for f in need if not os.path.isfile(f)]
    if missing:
        print(f"passes_reference.py: no {missing[0]}", file=sys.stderr)
        sys.exit(2)
    key = lambda r: (r["set"], r["m"], r["n"], r["k"], r["dtype"], r["config"])

    def timed(folder):
        return {key(r): float(r["measured_ms"])
                for r in rows(os.path.join(folder, "configs.csv.gz"))
                if r["passed"] == "1" and r["measured_ms"]}

    one = timed(first)
    more = [timed(e) for e in extras]
    joined_by = [0] * len(extras)
    many = rows(os.path.join(passes, "configs.csv.gz"))
    if not many:
        print(f"passes_reference.py: {passes}/configs.csv.gz has no rows", file=sys.stderr)
        sys.exit(2)
    per_pass = {}
    for m in rows(os.path.join(passes, "measurements.csv.gz")):
        if m["status"] == "ok" and m["pass_us"]:
            k = (m["set"], m["m"], m["n"], m["k"], m["dtype"], m["config"])
            per_pass[k] = [float(x) / 1e3 for x in m["pass_us"].split()]
    os.makedirs(out, exist_ok=True)
    fields = list(many[0].keys())
    with open(os.path.join(out, "passes.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()
        w.writerows(many)
    joined, shapes = [], {}
    for r in many:
        k = key(r)
        if r["passed"] != "1" or k not in one or k not in per_pass:
            continue
        r = dict(r)
        times = per_pass[k] + [one[k]]
        for i, m in enumerate(more):
            if k in m:
                times.append(m[k])
                joined_by[i] += 1
        r["measured_ms"] = f"{statistics.median(times):.6f}"
        joined.append(r)
        shapes.setdefault(k[:5], []).append((one[k], statistics.median(per_pass[k])))
    with open(os.path.join(out, "all.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()
        w.writerows(joined)
    for dt in sorted({s[4] for s in shapes}):
        # tau-b is defined where neither side has every launch tied
        pairs = [([a for a, _ in v], [b for _, b in v]) for s, v in shapes.items() if s[4] == dt]
        taus = [taub(a, b) for a, b in pairs if len(set(a)) > 1 and len(set(b)) > 1]
        n = sum(len(v) for s, v in shapes.items() if s[4] == dt)
        p = len(next(iter(per_pass.values())))
        print(f"{dt}: {len(taus)} shapes, {n} launches in both; the single pass against the "
              f"{p}-pass median: Kendall tau-b mean {statistics.mean(taus):.3f}")
    for e, n in zip(extras, joined_by):
        print(f"{e}: joined the median of {n} launches")


if __name__ == "__main__":
    main()
