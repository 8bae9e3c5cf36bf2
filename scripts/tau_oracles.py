#!/usr/bin/env python3
"""How far a fix of one part of a family's model could lift its Kendall tau: the mean
tau-b over a set's shapes of the model's predictions (a dump of `origami-bench refit
--rounds 0 --predictions FILE`) against the measured times, and the same with one part of
the predictions replaced by the measurement (an oracle, an upper bound for any model term
of that part):

- bk-twins: every BLOCK_K = 128 launch predicted at its BLOCK_K = 64 twin's prediction
  times their measured ratio (the same tile, warps, stages and switches);
- tile-levels: every launch scaled so that its tile's model-fastest launch has the tile's
  fastest measured time (the order between tiles exact, the model's within).

It also prints, per tile and stage count, how often the measurement and the model put the
BLOCK_K = 128 launch ahead of its twin, and the median log of (predicted ratio / measured
ratio). Usage: tau_oracles.py PREDICTIONS.csv [SET (held)]
"""

import collections
import csv
import math
import statistics
import sys

from tau_analysis import taub as tau_b


def read(path, set_name):
    by = collections.defaultdict(dict)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["set"] != set_name or r["measured_us"] in ("", "nan"):
                continue
            key = (int(r["m"]), int(r["n"]), int(r["k"]), r["dtype"])
            by[key][r["config"]] = (float(r["predicted_us"]), float(r["measured_us"]))
    return by


def twin(config):
    """The BLOCK_K = 64 twin of a BLOCK_K = 128 launch, else None."""
    parts = config.split(",")
    bm, bn, bk = parts[0].split("x")
    return ",".join([f"{bm}x{bn}x64"] + parts[1:]) if bk == "128" else None


def model(d, c):
    return d[c][0]


def bk_twins(d, c):
    t = twin(c)
    if t is None or t not in d:
        return d[c][0]
    return d[t][0] * d[c][1] / d[t][1]


def tile_levels(d, c):
    tile = c.split(",")[0]
    same = [x for x in d if x.split(",")[0] == tile]
    ref = min(same, key=lambda x: d[x][0])
    return d[c][0] * min(d[x][1] for x in same) / d[ref][0]


def mean_tau(by, predict):
    taus = []
    for d in by.values():
        cs = list(d)
        taus.append(tau_b([predict(d, c) for c in cs], [d[c][1] for c in cs]))
    return statistics.mean(taus)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: tau_oracles.py PREDICTIONS.csv [SET (held)]")
    path, set_name = sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "held"
    try:
        by = read(path, set_name)
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"tau_oracles.py: {path}: {e}")
    if not by:
        sys.exit(f"tau_oracles.py: {path}: no measured rows of set {set_name}")
    print(f"{path}, set {set_name}: {len(by)} shapes, mean Kendall tau-b")
    for name, f in [("model", model), ("oracle bk-twins", bk_twins), ("oracle tile-levels", tile_levels)]:
        print(f"  {name:20s} {mean_tau(by, f):.4f}")
    groups = collections.defaultdict(list)
    for d in by.values():
        for c, (p, m) in d.items():
            t = twin(c)
            if t is None or t not in d:
                continue
            p2, m2 = d[t]
            parts = c.split(",")
            groups[(parts[0].rsplit("x", 1)[0], parts[3])].append((p < p2, m < m2, math.log((p / p2) / (m / m2))))
    print("BLOCK_K 128 against its 64 twin: tile, stages, n, measured faster, predicted faster, median log(pred ratio / meas ratio)")
    for (tile, stages), v in sorted(groups.items()):
        print(f"  {tile:8s} {stages} {len(v):4d}  {statistics.mean(a for _, a, _ in v):.2f}  "
              f"{statistics.mean(a for a, _, _ in v):.2f}  {statistics.median(x for _, _, x in v):+.3f}")


if __name__ == "__main__":
    main()
