#!/usr/bin/env python3
"""Summarise the Nsight Compute probes of `scripts/triton/narrow_n_probe.sh` and
`scripts/triton/narrow_n_l2.sh` (issue 11): per triton-tma launch at M x N x K, its
duration, the tensor pipe's busy share, the L2's (Speed Of Light's "L2 Cache Throughput", the
busiest of its units, and the tag stage's sectors), and the bytes the SMs read from L2
(`lts__t_sectors_srcunit_tex_op_read`, 32-byte sectors) against the bytes the launch's
tensor-descriptor boxes ask for (every tile's (BLOCK_M + BLOCK_N) x K elements, two bytes
each): a ratio below 1 means loads of the same lines by concurrent programs reached the L2
as fewer requests than the boxes asked for.

Usage: python3 scripts/triton/narrow_n_summary.py ARCHIVE.tgz [ARCHIVE.tgz ...] [--shape 4096x4096x4096]
  (--shape: the shape of the probes named CONFIG.csv; MxNxK_CONFIG.csv name their own)
Standard library only.
"""
import argparse
import csv
import io
import math
import re
import sys
import tarfile


def bad_input(why):
    """One line on stderr and exit 2, the project's code for bad input."""
    print(f"narrow_n_summary: {why}", file=sys.stderr)
    sys.exit(2)


def metrics_of(text):
    """Metric name -> value (a float where it parses) of one ncu --csv output."""
    i = text.find('"ID"')
    if i < 0:
        return {}
    out = {}
    for r in csv.DictReader(io.StringIO(text[i:])):
        v = (r.get("Metric Value") or "").replace(",", "")
        try:
            out[r.get("Metric Name") or ""] = float(v)
        except ValueError:
            out[r.get("Metric Name") or ""] = v
    return out


def requested_bytes(config, m, n, k):
    """The boxes' bytes of every tile of `config` (BMxBNxBK,...) on M x N x K, fp16."""
    bm, bn, _ = (int(x) for x in config.split(",")[0].split("x"))
    tiles = math.ceil(m / bm) * math.ceil(n / bn)
    return tiles * (bm + bn) * k * 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("archives", nargs="+")
    ap.add_argument("--shape", default="4096x4096x4096")
    a = ap.parse_args()
    try:
        m, n, k = (int(x) for x in a.shape.split("x"))
    except ValueError:
        bad_input(f"--shape {a.shape!r}: expected MxNxK")
    rows = {}
    for path in a.archives:
        try:
            tf = tarfile.open(path)
        except (OSError, tarfile.TarError) as e:
            bad_input(f"{path}: {e}")
        for member in tf.getmembers():
            name = member.name.rsplit("/", 1)[-1]
            # CONFIG.csv (the shape of --shape) or MxNxK_CONFIG.csv, CONFIG's commas as "_"
            hit = re.match(r"^(?:(\d+)x(\d+)x(\d+)_)?(\d+x\d+x\d+_g\d+_w\d+_s\d+(?:_[a-z]+)*)\.csv$", name)
            if not hit:
                continue
            shape = tuple(int(v) for v in hit.groups()[:3]) if hit.group(1) else (m, n, k)
            config = hit.group(4).replace("_", ",")
            text = tf.extractfile(member).read().decode("utf-8", "replace")
            rows.setdefault((shape, config), {}).update(metrics_of(text))
    if not rows:
        bad_input("no ncu CSV of a config in the archives")
    cols = ("shape", "config", "us", "tensor %", "L2 SOL %", "L2 sectors %", "L2 read GB", "boxes GB",
            "read/boxes", "DRAM read GB")
    print(f"{cols[0]:<16s}{cols[1]:<30s}  " + "  ".join(f"{c:>12s}" for c in cols[2:]))
    for shape, config in sorted(rows, key=lambda sc: (sc[0], [int(x) for x in
                                                          re.findall(r"\d+", sc[1])])):
        r = rows[(shape, config)]
        dur = r.get("gpu__time_duration.sum") or r.get("Duration")
        us = dur / 1000.0 if isinstance(dur, float) else float("nan")
        tensor = r.get("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
                       float("nan"))
        l2 = r.get("L2 Cache Throughput", float("nan"))
        l2s = r.get("lts__t_sectors.avg.pct_of_peak_sustained_elapsed", float("nan"))
        sectors = r.get("lts__t_sectors_srcunit_tex_op_read.sum")
        read = sectors * 32 / 1e9 if isinstance(sectors, float) else float("nan")
        boxes = requested_bytes(config, *shape) / 1e9
        dram = r.get("dram__bytes_read.sum")
        dram = dram / 1e9 if isinstance(dram, float) else float("nan")
        vals = (f"{us:.1f}", f"{tensor:.1f}" if isinstance(tensor, float) else "-",
                f"{l2:.1f}" if isinstance(l2, float) else "-",
                f"{l2s:.1f}" if isinstance(l2s, float) else "-", f"{read:.2f}", f"{boxes:.2f}",
                f"{read / boxes:.2f}", f"{dram:.3f}")
        print(f"{'x'.join(map(str, shape)):<16s}{config:<30s}  "
              + "  ".join(f"{v:>12s}" for v in vals))


if __name__ == "__main__":
    main()
