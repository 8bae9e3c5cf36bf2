#!/usr/bin/env python3
"""A probe's launches side by side: for each shape of one input type, the fastest time
measured and, for each config named, its measured / predicted time in microseconds (`*`
marks the model's pick). Configs are matched without their GROUP_SIZE_M (`,gN`), which the
model chooses per shape; where a sweep timed a config at several, the fastest of them is shown
(with its own prediction). Reads `origami-bench refit --predictions FILE`'s CSV (set, m, n, k,
dtype, config, predicted_us, measured_us, picked).

Usage: probe_table.py PREDICTIONS.csv DTYPE CONFIG[;CONFIG...]
  e.g. probe_table.py pred.csv fp16 "128x256x64,w8,s3;64x128x128,w4,s4,flatten"
"""
import csv
import re
import sys


def without_group(config):
    """A config's text without its ,gN part."""
    return re.sub(r",g\d+", "", config)


def table(rows, dtype, configs):
    """The table's lines: a header, then one line per (m, n, k) in ascending order."""
    by_shape = {}
    for r in rows:
        if r["dtype"] != dtype:
            continue
        shape = (int(r["m"]), int(r["n"]), int(r["k"]))
        launch = (float(r["measured_us"]), float(r["predicted_us"]), r["picked"] == "true")
        launches = by_shape.setdefault(shape, {})
        name = without_group(r["config"])
        if name not in launches or launch[0] < launches[name][0]:
            launches[name] = launch
    lines = ["shape                  best  " + " | ".join(f"{c:>21}" for c in configs)]
    for shape in sorted(by_shape):
        launches = by_shape[shape]
        best = min(m for m, _, _ in launches.values())
        cells = []
        for c in configs:
            if c in launches:
                m, p, pick = launches[c]
                cells.append(f"{m:9.2f} / {p:9.2f}{'*' if pick else ' '}")
            else:
                cells.append(f"{'-':>21}")
        name = "x".join(str(x) for x in shape)
        lines.append(f"{name:18} {best:9.2f}  " + " | ".join(cells))
    return lines


def main(argv):
    if len(argv) != 4:
        print("usage: probe_table.py PREDICTIONS.csv DTYPE CONFIG[;CONFIG...]", file=sys.stderr)
        return 2
    try:
        with open(argv[1], newline="") as f:
            rows = list(csv.DictReader(f))
        lines = table(rows, argv[2], [c for c in argv[3].split(";") if c])
    except (OSError, KeyError, ValueError) as e:
        print(f"probe_table.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
