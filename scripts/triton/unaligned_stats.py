#!/usr/bin/env python3
"""What Triton 3.6 compiles of the sweep's matmul kernel (scripts/triton_sweep.py) for
shapes whose N and/or K are not multiples of 16, on a CPU for sm_90a: for every config
of data/triton_sm90.csv and every unaligned class (scripts/triton/alignment.py) ptxas's
registers and spills, Triton's shared memory, whether the dot became wgmma, and from the
PTX the width of the operand loads (cp.async or ld.global, smallest in bytes) and of the
C stores, with their static instruction counts.

Usage: python3 scripts/triton/unaligned_stats.py OUT.csv [--classes n,k,nk] [--jobs 2]
       [--only BMxBNxBK_wW_sS[,...]]
Made data/triton_sm90_unaligned.csv with the defaults (TRITON_INTERPRET unset).
"""
import csv
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import alignment  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
ALIGNED_TABLE = os.path.join(ROOT, "data", "triton_sm90.csv")
FIELDS = ["class", "bm", "bn", "bk", "w", "s", "regs", "spill_store_bytes",
          "spill_load_bytes", "shared_bytes", "wgmma", "load_bytes", "loads", "store_bytes",
          "stores"]
COMMENT = ("# Triton 3.6 matmul_kernel (scripts/triton_sweep.py) compiled for sm_90a (fp16) "
           "per unaligned class on a CPU: python3 scripts/triton/unaligned_stats.py "
           "data/triton_sm90_unaligned.csv")

_WIDTH = re.compile(r"^(?:v(\d)\.)?[bsuf](8|16|32|64)$")


def access_bytes(op):
    """Bytes moved per thread by one ld/st instruction, from its modifiers
    ('ld.global.v4.b32' -> 16, 'st.global.b16' -> 2, cache hints ignored)."""
    parts = op.split(".")
    for i in range(len(parts)):
        m = _WIDTH.match(".".join(parts[i:i + 2]) if parts[i].startswith("v") else parts[i])
        if m:
            return int(m.group(1) or 1) * int(m.group(2)) // 8
    raise ValueError(f"no width in {op!r}")


def ptx_accesses(ptx):
    """(operand loads, C stores): lists of per-thread bytes, one per static instruction.
    Operand loads are cp.async copies (size operand) and ld.global; stores are st.global."""
    loads, stores = [], []
    for line in ptx.splitlines():
        line = line.strip()
        if line.startswith("@"):
            line = line.split(None, 1)[1] if " " in line else ""
        op = line.split(None, 1)[0] if line else ""
        if op.startswith("cp.async.c") and ".shared.global" in op:
            m = re.search(r"\],\s*(0x[0-9a-fA-F]+|\d+)\s*[,;]", line)
            if not m:
                raise ValueError(f"no copy size in {line!r}")
            loads.append(int(m.group(1), 0))
        elif op.startswith("ld.global"):
            loads.append(access_bytes(op))
        elif op.startswith("st.global"):
            stores.append(access_bytes(op))
    return loads, stores


def configs():
    with open(ALIGNED_TABLE) as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return sorted({(int(r["bm"]), int(r["bn"]), int(r["bk"]), int(r["w"]), int(r["s"]))
                       for r in rows})


def config_key(cfg):
    bm, bn, bk, w, s = cfg
    return f"{bm}x{bn}x{bk}_w{w}_s{s}"


def one(job):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_sweep import matmul_kernel
    cls, (bm, bn, bk, w, s) = job
    names = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bn", "stride_cm",
             "GROUP_SIZE_M", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"]
    sig = dict(zip(names, ["*fp16"] * 3 + ["i32"] * 7 + ["constexpr"] * 3))
    consts = {(10,): bm, (11,): bn, (12,): bk}
    row = {"class": cls, "bm": bm, "bn": bn, "bk": bk, "w": w, "s": s}
    t0 = time.time()
    try:
        k = triton.compile(ASTSource(matmul_kernel, sig, consts, alignment.divisibility_attrs(cls)),
                           target=GPUTarget("cuda", 90, 32),
                           options={"num_warps": w, "num_stages": s})
    except Exception as e:  # noqa: BLE001
        return row, f"{type(e).__name__}: {str(e)[:200]}".replace("\n", " "), time.time() - t0
    ptx = k.asm["ptx"]
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as f:
            f.write(ptx)
        r = subprocess.run([ptxas, "-v", "--gpu-name", "sm_90a", p, "-o", os.path.join(d, "k.o")],
                           capture_output=True, text=True)
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", r.stderr)
    if r.returncode != 0 or not regs or not spill:
        return row, "ptxas: " + r.stderr.strip().replace("\n", " ")[:200], time.time() - t0
    loads, stores = ptx_accesses(ptx)
    row.update(regs=int(regs.group(1)), spill_store_bytes=int(spill.group(1)),
               spill_load_bytes=int(spill.group(2)), shared_bytes=k.metadata.shared,
               wgmma=int("wgmma.mma_async" in ptx), load_bytes=min(loads, default=0),
               loads=len(loads), store_bytes=min(stores, default=0), stores=len(stores))
    return row, "", time.time() - t0


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit("usage: unaligned_stats.py OUT.csv [--classes n,k,nk] [--jobs N] [--only KEY,...]")
    if os.environ.get("TRITON_INTERPRET") == "1":
        sys.exit("unset TRITON_INTERPRET: this script compiles for sm_90a")
    dst = args[0]
    opts = dict(zip(args[1::2], args[2::2]))
    if len(args[1:]) % 2 or set(opts) - {"--classes", "--jobs", "--only"}:
        sys.exit(f"bad options: {' '.join(args[1:])}")
    classes = opts.get("--classes", ",".join(alignment.UNALIGNED)).split(",")
    bad = [c for c in classes if c not in alignment.UNALIGNED]
    if bad:
        sys.exit(f"unknown class {bad[0]!r} (one of {', '.join(alignment.UNALIGNED)})")
    try:
        jobs = int(opts.get("--jobs", "2"))
        assert jobs >= 1
    except (ValueError, AssertionError):
        sys.exit(f"--jobs must be a positive integer, got {opts['--jobs']!r}")
    cfgs = configs()
    if "--only" in opts:
        want = set(opts["--only"].split(","))
        cfgs = [c for c in cfgs if config_key(c) in want]
        if not cfgs:
            sys.exit("no config of data/triton_sm90.csv matches --only")
    # The biggest tiles compile slowest: first, to balance the pool.
    work = sorted(((c, g) for c in classes for g in cfgs),
                  key=lambda j: -(j[1][0] * j[1][1] + (j[1][0] + j[1][1]) * j[1][2]))
    rows, errors = [], []
    t0 = time.time()
    with mp.get_context("spawn").Pool(jobs) as pool:
        for i, (row, err, _) in enumerate(pool.imap_unordered(one, work)):
            (errors.append(f"{row['class']} {config_key((row['bm'], row['bn'], row['bk'], row['w'], row['s']))}: {err}")
             if err else rows.append(row))
            if (i + 1) % 50 == 0:
                print(f"{i + 1}/{len(work)} ({time.time() - t0:.0f} s)", flush=True)
    if errors:
        sys.exit("compile failed: " + errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))
    order = {c: i for i, c in enumerate(alignment.CLASSES)}
    rows.sort(key=lambda r: (order[r["class"]], r["bm"], r["bn"], r["bk"], r["w"], r["s"]))
    with open(dst, "w", newline="") as f:
        f.write(COMMENT + "\n")
        wr = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        wr.writeheader()
        wr.writerows(rows)
    print(f"{len(rows)} rows in {time.time() - t0:.0f} s -> {dst}")


if __name__ == "__main__":
    main()
