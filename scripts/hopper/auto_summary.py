#!/usr/bin/env python3
"""Summarize an auto_check.sh folder: per shape the family `--family auto` chose, its pick,
the pick's time against cuBLAS's in the same process (A/cuBLAS = cuBLAS ms / pick ms), then
the median, minimum and the shapes below 0.80. Usage: auto_summary.py DIR [DIR...]"""
import json
import pathlib
import statistics
import sys


def rows(folder):
    for path in sorted(pathlib.Path(folder).glob("*.json")):
        try:
            r = json.loads(path.read_text())
        except ValueError:
            yield path.stem, None, None, None, "no report"
            continue
        pick = next((c for c in r["configs"] if c.get("is_pick")), None)
        if pick is None or "median_ms" not in pick:
            yield path.stem, r.get("family"), None, None, (pick or {}).get("error", "not timed")
            continue
        yield path.stem, r["family"], pick["config"], r["cublas"]["median_ms"] / pick["median_ms"], ""


def main(folders):
    ratios = []
    for folder in folders:
        print(f"# {folder}")
        print(f"{'shape':<22} {'family':<8} {'pick':<26} {'A/cuBLAS':>8}")
        for shape, family, config, ratio, note in rows(folder):
            shown = f"{ratio:8.3f}" if ratio is not None else f"{'-':>8}"
            print(f"{shape:<22} {family or '-':<8} {config or '-':<26} {shown} {note}")
            if ratio is not None:
                ratios.append((ratio, shape))
    if not ratios:
        print("no timed pick")
        return 1
    values = [r for r, _ in ratios]
    low = [f"{s} {r:.3f}" for r, s in sorted(ratios) if r < 0.80]
    print(f"shapes {len(values)}: A/cuBLAS median {statistics.median(values):.3f}, "
          f"min {min(values):.3f}, mean {statistics.fmean(values):.3f}; below 0.80: "
          f"{', '.join(low) if low else 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
