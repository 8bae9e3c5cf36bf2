#!/usr/bin/env python3
"""Per launch of Nsight Compute CSVs with several launches each (`ncu --launch-count N`,
e.g. scripts/triton/bimodal_probe.sh): duration, the L2 sectors the SMs read and those of the
L2 fabric (between the L2's two halves) in GB, the L2 hit rate of the SMs' lookups, DRAM
bytes read, the tensor pipe's busy share and the SMs' active cycles, then per file the
spread of the duration and each counter's (max / min). Issue 11: whether the slow launches
of a bimodal config move more bytes.

Usage: python3 scripts/triton/ncu_launches_summary.py ARCHIVE.tgz
Standard library only.
"""
import csv
import io
import sys
import tarfile

COUNTERS = (
    ("us", "gpu__time_duration.sum", 1e-3),
    ("L2 read GB", "lts__t_sectors_srcunit_tex_op_read.sum", 32e-9),
    ("fabric GB", "lts__t_sectors_srcunit_ltcfabric.sum", 32e-9),
    ("DRAM MB", "dram__bytes_read.sum", 1e-6),
    ("tensor %", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", 1.0),
    ("SM cycles", "sm__cycles_active.avg", 1.0),
)
HIT = "lts__t_sectors_srcunit_tex_lookup_hit.sum"
MISS = "lts__t_sectors_srcunit_tex_lookup_miss.sum"


def bad_input(why):
    """One line on stderr and exit 2, the project's code for bad input."""
    print(f"ncu_launches_summary: {why}", file=sys.stderr)
    sys.exit(2)


def launches(text):
    """Launch id -> metric -> value of one ncu --csv output."""
    i = text.find('"ID"')
    out = {}
    if i < 0:
        return out
    for r in csv.DictReader(io.StringIO(text[i:])):
        try:
            v = float((r.get("Metric Value") or "").replace(",", ""))
            out.setdefault(int(r["ID"]), {})[r.get("Metric Name") or ""] = v
        except (ValueError, KeyError):
            continue
    return out


def main():
    if len(sys.argv) != 2:
        bad_input("usage: ncu_launches_summary.py ARCHIVE.tgz")
    try:
        tf = tarfile.open(sys.argv[1])
    except (OSError, tarfile.TarError) as e:
        bad_input(f"{sys.argv[1]}: {e}")
    files = 0
    for member in sorted(tf.getmembers(), key=lambda m: m.name):
        if not member.name.endswith(".csv"):
            continue
        runs = launches(tf.extractfile(member).read().decode("utf-8", "replace"))
        if not runs:
            continue
        files += 1
        print(member.name.rsplit("/", 1)[-1][:-4])
        print("  launch" + "".join(f"{c[0]:>12s}" for c in COUNTERS) + f"{'L2 hit %':>12s}")
        for lid in sorted(runs):
            m = runs[lid]
            vals = [m.get(key, float("nan")) * scale for _, key, scale in COUNTERS]
            looked = m.get(HIT, 0.0) + m.get(MISS, 0.0)
            hit = 100.0 * m.get(HIT, 0.0) / looked if looked > 0 else float("nan")
            print(f"  {lid:6d}" + "".join(f"{v:12.3f}" for v in vals) + f"{hit:12.1f}")
        spread = []
        for name, key, _ in COUNTERS:
            xs = [m[key] for m in runs.values() if key in m and m[key] > 0]
            if xs:
                spread.append(f"{name} {max(xs) / min(xs):.3f}")
        print("  max/min: " + ", ".join(spread))
    if files == 0:
        bad_input(f"{sys.argv[1]}: no ncu CSV with launches")


if __name__ == "__main__":
    main()
