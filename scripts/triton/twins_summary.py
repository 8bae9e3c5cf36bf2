#!/usr/bin/env python3
"""Plain against FLATTEN twins from `scripts/triton/flatten_twins.sh` (issue 11): per file
(one shape and type, `tma_bimodal.py` rows of the order plain, flatten, flatten, plain per
round), per round the plain launch's mean time over the flatten one's, their median, and the
SM clocks NVML read. A ratio above 1: FLATTEN faster.

Usage: python3 scripts/triton/twins_summary.py ARCHIVE.tgz
Standard library only.
"""
import csv
import io
import statistics
import sys
import tarfile


def bad_input(why):
    """One line on stderr and exit 2, the project's code for bad input."""
    print(f"twins_summary: {why}", file=sys.stderr)
    sys.exit(2)


def ratios(rows):
    """Per round: mean plain time over mean flatten time (rounds with both)."""
    rounds = {}
    for r in rows:
        try:
            key = int(r["round"])
            us = float(r["us"])
        except (KeyError, ValueError):
            continue
        flat = r.get("config", "").endswith(",flatten")
        rounds.setdefault(key, ([], []))[1 if flat else 0].append(us)
    return [statistics.mean(p) / statistics.mean(f)
            for _, (p, f) in sorted(rounds.items()) if p and f]


def main():
    if len(sys.argv) != 2:
        bad_input("usage: twins_summary.py ARCHIVE.tgz")
    try:
        tf = tarfile.open(sys.argv[1])
    except (OSError, tarfile.TarError) as e:
        bad_input(f"{sys.argv[1]}: {e}")
    lines = []
    for m in sorted(tf.getmembers(), key=lambda m: m.name):
        if not m.name.endswith(".csv"):
            continue
        rows = list(csv.DictReader(io.StringIO(tf.extractfile(m).read().decode())))
        rs = ratios(rows)
        if not rs:
            continue
        mhz = sorted({int(float(r["sm_mhz"])) for r in rows if r.get("sm_mhz")})
        clock = f"  SM {mhz[0]}-{mhz[-1]} MHz" if mhz else ""
        name = m.name.rsplit("/", 1)[-1][:-4]
        lines.append(f"{name:24s} plain/flatten per round "
                     + " ".join(f"{x:.3f}" for x in rs)
                     + f"  median {statistics.median(rs):.3f}{clock}")
    if not lines:
        bad_input(f"{sys.argv[1]}: no rounds with both twins")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
