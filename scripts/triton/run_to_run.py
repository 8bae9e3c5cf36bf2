#!/usr/bin/env python3
"""How far one validation run's fastest config is from the fastest in another run: the
ceiling that run-to-run noise puts on a single run's A/BF (issue 11). For each shape and
type that every run timed, and each ordered pair of runs (i, j), the config fastest in run i
is scored in run j against run j's fastest (both among the configs every run timed). A
model whose pick is the fastest config of some run can still score that low in another run.
Per list and type: the shapes, the median and minimum over shapes of each shape's worst
pair, the minimum over shapes of each shape's median pair, and the three worst shapes.

Usage: python3 scripts/triton/run_to_run.py RUN RUN [RUN ...]
  RUN: a device_validate.sh folder (its seed/, llm/ and unaligned/ sweeps, those present)
  or one tma_sweep.py output folder (as scripts/triton/across_runs.py reads them).
Standard library only.
"""
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from across_runs import normalised, seed_shapes  # noqa: E402
from picks_compare import bad_input  # noqa: E402


def pair_scores(runs, key):
    """A/BF in run j of run i's fastest config, for every ordered pair i != j."""
    common = set.intersection(*(set(r[key]) for r in runs))
    out = []
    for i, ri in enumerate(runs):
        fastest_i = min(sorted(common), key=lambda c: ri[key][c])
        for j, rj in enumerate(runs):
            if i != j:
                out.append(min(rj[key][c] for c in common) / rj[key][fastest_i])
    return out


def ceilings(runs, lists):
    """{(list, dtype): [(worst pair, median pair, shape)]}."""
    out = defaultdict(list)
    for key in sorted(set.intersection(*(set(r) for r in runs))):
        v = pair_scores(runs, key)
        if v:
            out[(lists[key], key[3])].append((min(v), statistics.median(v), "x".join(map(str, key[:3]))))
    return out


def main(argv):
    if len(argv) < 3:
        bad_input("usage: run_to_run.py RUN RUN [RUN ...]")
    both = [normalised(r) for r in argv[1:]]
    runs = [r for r, _ in both]
    seed = seed_shapes()
    lists = {k: "seed" if k[:3] in seed else v for _, ls in both for k, v in ls.items()}
    print(f"# {len(runs)} runs; run i's fastest config scored in run j (i != j), each time over its run's cuBLAS")
    print("list      dtype shapes  worst-pair median    min  median-pair min   worst shapes (worst pair)")
    for (lst, dt), v in sorted(ceilings(runs, lists).items()):
        worst = [w for w, _, _ in v]
        names = ", ".join(f"{s} {w:.3f}" for w, _, s in sorted(v)[:3])
        print(f"{lst:<9s} {dt:<5s} {len(v):6d}  {statistics.median(worst):17.3f} {min(worst):6.3f} "
              f"{min(m for _, m, _ in v):16.3f}   {names}")


if __name__ == "__main__":
    main(sys.argv)
