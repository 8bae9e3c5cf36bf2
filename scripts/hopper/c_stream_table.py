#!/usr/bin/env python3
"""The hopper family's C-stream table from a run of
scripts/hopper/c_stream_table.sh: for every tile (BLOCK_M, BLOCK_N, consumer warpgroups)
and operand order (plain, swapped), the median time of the 16384x32768x64 fp16 launch,
its tiles, and the cycles the busiest SM spends per tile at the run's SM clock (a
model term built on it was tried and not kept: results/h100/hopper/c-stream-table/README.md).
Usage: c_stream_table.py RUN_FOLDER > RUN_FOLDER/table.csv"""
import math
import os
import re
import statistics
import sys

M, N = 16384, 32768
SMS = 132


def clock_mhz(folder):
    """The median SM clock nvidia-smi dmon read during the run (busy samples only)."""
    clocks = []
    with open(os.path.join(folder, "dmon.txt")) as f:
        for line in f:
            cols = line.split()
            # gpu, pwr (W), gtemp, mtemp, mclk, pclk (MHz): the GPU at work draws > 100 W
            if len(cols) == 6 and all(c.isdigit() for c in cols) and int(cols[1]) > 100:
                clocks.append(int(cols[5]))
    if not clocks:
        print(f"c_stream_table.py: no busy sample in {folder}/dmon.txt", file=sys.stderr)
        sys.exit(2)
    return statistics.median(clocks)


def rows(path, swap):
    pat = re.compile(r"^(\d+)x(\d+)x64,g\d+,w(\d+),s(\d+)(,swap)?\s+([0-9.]+)\s")
    with open(path) as f:
        for line in f:
            if line.startswith("passes"):
                break
            m = pat.match(line)
            if not m or bool(m.group(5)) != swap:
                continue
            bm, bn, warps, stages = map(int, m.group(1, 2, 3, 4))
            ms = float(m.group(6))
            rows_, cols = (N, M) if swap else (M, N)
            tiles = math.ceil(rows_ / bm) * math.ceil(cols / bn)
            yield bm, bn, warps // 4 - 1, stages, ms, tiles


def main():
    need = ("plain.txt", "swap.txt", "dmon.txt")
    if len(sys.argv) != 2 or not all(os.path.isfile(os.path.join(sys.argv[1], f)) for f in need):
        print("usage: c_stream_table.py RUN_FOLDER (holding plain.txt, swap.txt, dmon.txt)",
              file=sys.stderr)
        sys.exit(2)
    folder = sys.argv[1]
    mhz = clock_mhz(folder)
    print(f"# scripts/hopper/c_stream_table.py {folder}: 16384x32768x64 fp16, SM clock {mhz:.0f} MHz")
    print("bm,bn,consumers,swap,stages,ms,tiles,cycles_per_tile")
    for swap, name in ((False, "plain.txt"), (True, "swap.txt")):
        for bm, bn, cons, stages, ms, tiles in rows(os.path.join(folder, name), swap):
            busiest = math.ceil(tiles / SMS)
            cycles = ms * 1e-3 * mhz * 1e6 / busiest
            print(f"{bm},{bn},{cons},{int(swap)},{stages},{ms:.4f},{tiles},{cycles:.0f}")


if __name__ == "__main__":
    main()
