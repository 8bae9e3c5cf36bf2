#!/usr/bin/env python3
"""Summarize Nsight Compute's per-instruction stall samples (`ncu -i REP --page source --csv
--print-source sass`, plain or .gz): per kernel file, the share of warp samples by stall
reason and by SASS opcode, and the shared-memory store instructions with their samples.

Usage: python3 scripts/hopper/sass_stalls.py FILE...   (exit 2 when a file cannot be read)
"""
import csv
import gzip
import io
import sys

REASONS = ["barrier", "branch_resolving", "dispatch", "drain", "imc", "lg", "long_sb", "math",
           "membar", "mio", "misc", "no_inst", "not_selected", "selected", "short_sb", "sleep",
           "tex", "wait"]


def rows_of(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        rows = list(csv.reader(io.StringIO(f.read())))
    # the first line names the kernel; the second is the header
    hdr = rows[1]
    return hdr, [r for r in rows[2:] if len(r) == len(hdr)]


def opcode(source):
    """The SASS opcode of a source line, its predicate removed: `@!P0 BRA x` -> `BRA`."""
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in paths:
        try:
            hdr, data = rows_of(path)
            i_s = hdr.index("Warp Stall Sampling (All Samples)")
            i_src = hdr.index("Source")
        except (OSError, IndexError, ValueError, EOFError) as e:
            print(f"{path}: not a source-page CSV ({e})", file=sys.stderr)
            return 2
        total = sum(float(r[i_s]) for r in data) or 1.0
        by_reason = {k: sum(float(r[i]) for r in data)
                     for k, i in ((k, hdr.index("stall_" + k)) for k in REASONS
                                  if "stall_" + k in hdr)}
        by_op = {}
        for r in data:
            key = opcode(r[i_src]).split(".")[0]
            by_op[key] = by_op.get(key, 0.0) + float(r[i_s])
        sts = [r for r in data if opcode(r[i_src]).startswith("STS")]
        print(f"== {path}: {len(data)} SASS instructions, {total:.0f} samples")
        print("   stall reasons (% of samples): " + ", ".join(
            f"{k} {v / total * 100:.1f}" for k, v in sorted(by_reason.items(), key=lambda kv: -kv[1])
            if v / total >= 0.01))
        print("   opcodes (% of samples): " + ", ".join(
            f"{k} {v / total * 100:.1f}" for k, v in sorted(by_op.items(), key=lambda kv: -kv[1])[:14]))
        print(f"   shared-memory stores: {len(sts)} instructions, "
              f"{sum(float(r[i_s]) for r in sts) / total * 100:.1f} % of samples")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
