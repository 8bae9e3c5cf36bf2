#!/usr/bin/env python3
"""What choosing GROUP_SIZE_M per shape would buy the triton-tma family (issue 11): from a
`tma_sweep.py` run that timed the family's configs at several groups (results/h100/
triton-tma/groups-seed/), per shape the fastest launch at GROUP_SIZE_M 8 (the family's
fixed group) against the fastest at any group, the group of the latter, and for every tile
(BM x BN x BK, warps, stages, FLATTEN) the spread between its best and its group-8 time.

Usage: python3 scripts/triton/groups_gain.py RUN_DIR
Standard library only.
"""
import csv
import gzip
import os
import re
import statistics
import sys
from collections import Counter, defaultdict


def bad_input(why):
    """One line on stderr and exit 2, the project's code for bad input."""
    print(f"groups_gain: {why}", file=sys.stderr)
    sys.exit(2)


def main(argv):
    if len(argv) != 2:
        bad_input("usage: groups_gain.py RUN_DIR")
    path = os.path.join(argv[1], "measurements.csv")
    if os.path.exists(path):
        f = open(path, newline="")
    elif os.path.exists(path + ".gz"):
        f = gzip.open(path + ".gz", "rt", newline="")
    else:
        bad_input(f"{argv[1]}: no measurements.csv(.gz)")
    by = defaultdict(dict)
    for r in csv.DictReader(f):
        if r.get("block_m") and r.get("status") == "ok":
            by[(int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])][r["config"]] = float(r["us"])
    if not by:
        bad_input(f"{argv[1]}: no timed launch")
    gains, tile_gains, groups = [], [], Counter()
    print(f"{'shape':>22s} {'best at 8 us':>13s} {'best us':>10s} {'gain':>6s}  best launch")
    for key in sorted(by):
        ms = by[key]
        at8 = {c: v for c, v in ms.items() if re.search(r",g8(,|$)", c)}
        if not at8:
            continue
        best = min(ms, key=ms.get)
        groups[re.search(r",g(\d+)", best).group(1)] += 1
        gain = min(at8.values()) / ms[best]
        gains.append(gain)
        tiles = defaultdict(list)
        for c, v in ms.items():
            tiles[re.sub(r",g\d+", "", c)].append((v, c))
        for t, vs in tiles.items():
            t8 = [v for v, c in vs if re.search(r",g8(,|$)", c)]
            if t8:
                tile_gains.append(t8[0] / min(v for v, _ in vs))
        shape = "x".join(map(str, key[:3])) + " " + key[3]
        print(f"{shape:>22s} {min(at8.values()):13.1f} {ms[best]:10.1f} {gain:6.3f}  {best}")
    print(f"\nshapes {len(gains)}: the best launch at any group over the best at 8, median "
          f"{statistics.median(gains):.3f}, max {max(gains):.3f}; its group: "
          + ", ".join(f"{g} ({n})" for g, n in sorted(groups.items(), key=lambda x: int(x[0]))))
    q = sorted(tile_gains)
    print(f"every tile's group-8 time over its best at any group: median "
          f"{statistics.median(q):.3f}, 90th percentile {q[int(0.9 * (len(q) - 1))]:.3f}, "
          f"max {q[-1]:.3f} ({len(q)} tiles x shapes)")


if __name__ == "__main__":
    main(sys.argv)
