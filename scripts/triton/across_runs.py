#!/usr/bin/env python3
"""Picks of the triton-tma family against several validation runs at once (issue 11): each
config's time in a run over the mean of that run's two cuBLAS timings of the shape (so a
run's clocks cancel), its median over the runs, and each pick's A/BF against the fastest of
those medians. Only the configs every run timed take part; a shape whose pick one run did
not time is left out. Where single runs put near-ties on either side of the pick, this is
the steadier figure: per list and type the median, minimum and mean, and the three worst.

Usage: python3 scripts/triton/across_runs.py PICKS.txt RUN [RUN ...]
  PICKS.txt: origami-select's text batch output (columns M N K dtype pick predicted_us);
  RUN: a device_validate.sh folder (its seed/, llm/ and unaligned/ sweeps, those present)
  or one tma_sweep.py output folder.
A shape of data/seed_shapes.csv is of the fit set ("seed"); the others go by the sweep's
`set` column: llm_shapes (held out) or listed (named one by one: the unaligned shapes).
Standard library only.
"""
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from picks_compare import ROOT, bad_input, measurements, picks  # noqa: E402


def seed_shapes():
    """The fit set's (m, n, k)."""
    out = set()
    for line in open(os.path.join(ROOT, "data", "seed_shapes.csv")):
        f = line.strip().split(",")
        if f[0].isdigit():
            out.add(tuple(int(v) for v in f[:3]))
    return out


def sweeps(run):
    """The sweep folders of a run: its seed/, llm/, unaligned/ or the folder itself."""
    subs = [os.path.join(run, s) for s in ("seed", "llm", "unaligned")]
    found = [s for s in subs if os.path.isdir(s)]
    return found or [run]


def normalised(run):
    """{(m, n, k, dtype): {config: time / mean cuBLAS time}} of one run, and each shape's
    list."""
    out, lists = defaultdict(dict), {}
    for folder in sweeps(run):
        rows = measurements(folder)
        cublas = defaultdict(list)
        for r in rows:
            if r.get("status") == "ok" and r.get("config", "").startswith("cublas"):
                cublas[(int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])].append(float(r["us"]))
        for r in rows:
            if r.get("status") != "ok" or not r.get("block_m"):
                continue
            key = (int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])
            if cublas.get(key):
                out[key][r["config"]] = float(r["us"]) / statistics.mean(cublas[key])
                lists[key] = "held out" if r.get("set") == "llm_shapes" else "listed"
    return out, lists


def scores(chosen, runs, lists):
    """{(list, dtype): [(A/BF, shape)]} of the picks against the runs' medians."""
    out = defaultdict(list)
    for key in sorted(set.intersection(*(set(r) for r in runs))):
        pick = chosen.get(key)
        common = set.intersection(*(set(r[key]) for r in runs))
        if pick not in common:
            continue
        med = {c: statistics.median(r[key][c] for r in runs) for c in common}
        out[(lists[key], key[3])].append((min(med.values()) / med[pick], "x".join(map(str, key[:3]))))
    return out


def main(argv):
    if len(argv) < 3:
        bad_input("usage: across_runs.py PICKS.txt RUN [RUN ...]")
    chosen = picks(argv[1])
    both = [normalised(r) for r in argv[2:]]
    runs = [r for r, _ in both]
    seed = seed_shapes()
    lists = {k: "seed" if k[:3] in seed else v for _, ls in both for k, v in ls.items()}
    print(f"# {len(runs)} runs; each config's time over its run's cuBLAS, the median over the runs")
    print("list      dtype shapes  median    min   mean   worst")
    for (lst, dt), v in sorted(scores(chosen, runs, lists).items()):
        a = [x for x, _ in v]
        worst = ", ".join(f"{s} {x:.3f}" for x, s in sorted(v)[:3])
        print(f"{lst:<9s} {dt:<5s} {len(v):6d}  {statistics.median(a):6.3f} {min(a):6.3f} "
              f"{statistics.mean(a):6.3f}   {worst}")


if __name__ == "__main__":
    main(sys.argv)
