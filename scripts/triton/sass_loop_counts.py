#!/usr/bin/env python3
"""Instructions per K iteration of the Triton tutorial matmul, per config, from its SASS:
compile each (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) of a table for sm_90a on a
CPU (the specialisation of scripts/triton/ptxas_stats.py, what the sweeps' launches get),
disassemble the cubin with Triton's nvdisasm, and count the instructions of the K loop: the
loop body (from a label to the backward branch that returns to it) that holds the tensor-
core instructions (HMMA or HGMMA). A count taken from the compiled kernel, not a rate
(docs/calibration-only.md): every warp of the block issues the whole body once per K
iteration.

Columns: bm, bn, bk, w, s, status, loop_instructions (the body, branch included),
mma_instructions (HMMA / HGMMA in it), loops (loops holding tensor-core instructions;
1 for every config seen), error.

Usage: python3 scripts/triton/sass_loop_counts.py TABLE.csv OUT.csv [--jobs 2] [--limit N]
(TABLE: data/triton_sm90.csv or any CSV with bm, bn, bk, w, s columns; `#` lines skipped)
"""
import csv
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^(\.L_x_\d+):")
BRANCH = re.compile(r"\bBRA\b[^`]*`\((\.L_x_\d+)\)")
MMA = re.compile(r"\b(HMMA|HGMMA)\.")


def loop_counts(sass):
    """(loop_instructions, mma_instructions, loops) of the loop holding the most tensor-core
    instructions: a body runs from a label to a later branch back to it."""
    labels, instrs = {}, []
    for line in sass.splitlines():
        m = LABEL.match(line)
        if m:
            labels[m.group(1)] = len(instrs)
            continue
        m = INSTR.match(line)
        if m:
            instrs.append(m.group(1))
    loops = []
    for i, ins in enumerate(instrs):
        m = BRANCH.search(ins)
        if m and m.group(1) in labels and labels[m.group(1)] <= i:
            body = instrs[labels[m.group(1)]: i + 1]
            mma = sum(1 for x in body if MMA.search(x))
            if mma:
                loops.append((mma, len(body)))
    if not loops:
        return None
    mma, n = max(loops)
    return n, mma, len(loops)


def one(cfg):
    import triton
    from ptxas_stats import compile_config
    bm, bn, bk, w, s = cfg
    row = {"bm": bm, "bn": bn, "bk": bk, "w": w, "s": s, "loop_instructions": "",
           "mma_instructions": "", "loops": "", "error": ""}
    try:
        k = compile_config(cfg)
        nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin",
                                "nvdisasm")
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "k.cubin")
            with open(p, "wb") as f:
                f.write(k.asm["cubin"])
            r = subprocess.run([nvdisasm, "-c", p], capture_output=True, text=True, check=True)
        c = loop_counts(r.stdout)
        if c is None:
            row["status"] = "no_mma_loop"
        else:
            row["loop_instructions"], row["mma_instructions"], row["loops"] = c
            row["status"] = "ok"
    except Exception as e:  # noqa: BLE001
        row["status"] = "compile_error"
        row["error"] = f"{type(e).__name__}: {str(e)[:160]}".replace("\n", " ")
    return row


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__.strip().splitlines()[-3])
    src, dst = args[0], args[1]
    jobs = int(args[args.index("--jobs") + 1]) if "--jobs" in args else 2
    try:
        with open(src) as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        cfgs = sorted({(int(r["bm"]), int(r["bn"]), int(r["bk"]), int(r["w"]), int(r["s"]))
                       for r in rows})
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"sass_loop_counts.py: {src}: {e}")
    if "--limit" in args:
        cfgs = cfgs[: int(args[args.index("--limit") + 1])]
    fields = ["bm", "bn", "bk", "w", "s", "status", "loop_instructions", "mma_instructions",
              "loops", "error"]
    out = []
    with mp.get_context("spawn").Pool(jobs) as pool:
        for i, row in enumerate(pool.imap_unordered(one, cfgs)):
            out.append(row)
            if (i + 1) % 50 == 0:
                print(f"{i + 1}/{len(cfgs)}", file=sys.stderr, flush=True)
    out.sort(key=lambda r: (r["bm"], r["bn"], r["bk"], r["w"], r["s"]))
    with open(dst, "w", newline="") as f:
        f.write(f"# {' '.join(['scripts/triton/sass_loop_counts.py'] + args)}\n")
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        wr.writerows(out)


if __name__ == "__main__":
    main()
