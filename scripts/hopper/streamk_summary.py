#!/usr/bin/env python3
"""Summarize scripts/hopper/streamk_check.sh's and epilogue_path_check.sh's text reports
(`origami-bench run` tables): per shape, each config's median time and its ratio to
cuBLAS, and for every config run with and without Stream-K (`X` and `X,sk`) the time of
the whole-tile grid over Stream-K's (above 1: Stream-K faster). Standard library only.
Usage: streamk_summary.py FOLDER..."""
import glob
import os
import sys


def table(path):
    """(shape line, {config: (median ms, vs cuBLAS or None)}) of one report."""
    rows = {}
    with open(path) as f:
        lines = f.read().splitlines()
    if len(lines) < 3:
        return None, rows
    for line in lines[2:]:
        if line.startswith("passes"):
            break
        parts = line.split()
        if len(parts) < 2:
            continue
        name = parts[0].rstrip("*")
        try:
            ms = float(parts[1])
        except ValueError:
            continue
        vs = None
        for p in parts:
            if p.endswith("%"):
                vs = float(p[:-1]) / 100
                break
        rows[name] = (ms, vs)
    return lines[0].split(" on ")[0], rows


def main(folders):
    if not folders:
        print("usage: streamk_summary.py FOLDER...", file=sys.stderr)
        return 2
    for d in folders:
        files = sorted(glob.glob(os.path.join(d, "**", "*.txt"), recursive=True))
        files = [f for f in files if os.path.basename(f) not in ("gpu.txt", "dmon.txt", "failures.txt")]
        if not files:
            print(f"streamk_summary.py: no reports under {d}", file=sys.stderr)
            return 2
        print(f"== {d}")
        for f in files:
            title, rows = table(f)
            if not rows:
                continue
            cub = rows.get("cuBLAS", (None, None))[0]
            print(f"{title} (cuBLAS {cub} ms)")
            for name, (ms, vs) in rows.items():
                if name == "cuBLAS":
                    continue
                line = f"  {name:<32} {ms:8.4f} ms"
                if vs is not None:
                    line += f"  {vs:6.3f} of cuBLAS"
                if name.endswith(",sk") and name[:-3] in rows:
                    line += f"  whole/Stream-K {rows[name[:-3]][0] / ms:6.3f}"
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
