#!/usr/bin/env python3
"""Compile the sweep's Triton kernel for sm_90a on a CPU (no GPU needed) and read ptxas's
resource report (registers, spill stores/loads) and Triton's shared-memory figure for
every (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) of a listing, feasible or not.

The specialisation matches what the sweep's launches get on the device: pointers and N,
K, strides divisible by 16; M and GROUP_SIZE_M not specialised.

Usage: python3 scripts/triton/ptxas_stats.py LISTING.csv OUT.csv [--jobs 2]
"""
import csv
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def compile_config(cfg):
    """The sweep's kernel compiled for sm_90a with the sweeps' specialisation, for cfg =
    (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_sweep import matmul_kernel
    bm, bn, bk, w, s = cfg
    names = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bn", "stride_cm",
             "GROUP_SIZE_M", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"]
    types = ["*fp16"] * 3 + ["i32"] * 7 + ["constexpr"] * 3
    sig = dict(zip(names, types))
    consts = {(10,): bm, (11,): bn, (12,): bk}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 4, 5, 6, 7, 8)}
    return triton.compile(ASTSource(matmul_kernel, sig, consts, attrs),
                          target=GPUTarget("cuda", 90, 32),
                          options={"num_warps": w, "num_stages": s})


def one(cfg):
    import triton
    bm, bn, bk, w, s = cfg
    row = {"bm": bm, "bn": bn, "bk": bk, "w": w, "s": s}
    t0 = time.time()
    try:
        k = compile_config(cfg)
        row["shared_bytes"] = k.metadata.shared
        ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "k.ptx")
            with open(p, "w") as f:
                f.write(k.asm["ptx"])
            r = subprocess.run([ptxas, "-v", "--gpu-name", "sm_90a", p, "-o", os.path.join(d, "k.o")],
                               capture_output=True, text=True)
        txt = r.stderr
        m = re.search(r"Used (\d+) registers", txt)
        row["regs"] = int(m.group(1)) if m else ""
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", txt)
        row["spill_store_bytes"], row["spill_load_bytes"] = (m.group(1), m.group(2)) if m else ("", "")
        ptx = k.asm["ptx"]
        row["wgmma"] = int("wgmma.mma_async" in ptx)
        row["cp_async"] = ptx.count("cp.async.cg") + ptx.count("cp.async.ca")
        row["status"] = "ok"
        row["error"] = ""
    except Exception as e:  # noqa: BLE001
        row["status"] = "compile_error"
        row["error"] = f"{type(e).__name__}: {str(e)[:160]}".replace("\n", " ")
    row["compile_s"] = round(time.time() - t0, 2)
    return row


def main():
    src, dst = sys.argv[1], sys.argv[2]
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 2
    with open(src) as f:
        cfgs = sorted({(int(r["BLOCK_SIZE_M"]), int(r["BLOCK_SIZE_N"]), int(r["BLOCK_SIZE_K"]),
                        int(r["num_warps"]), int(r["num_stages"])) for r in csv.DictReader(f)})
    if "--limit" in sys.argv:
        cfgs = cfgs[: int(sys.argv[sys.argv.index("--limit") + 1])]
    fields = ["bm", "bn", "bk", "w", "s", "status", "regs", "spill_store_bytes",
              "spill_load_bytes", "shared_bytes", "wgmma", "cp_async", "compile_s", "error"]
    with mp.get_context("spawn").Pool(jobs) as pool, open(dst, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        for i, row in enumerate(pool.imap_unordered(one, cfgs)):
            wr.writerow(row)
            f.flush()
            if (i + 1) % 50 == 0:
                print(f"{i + 1}/{len(cfgs)}", flush=True)


if __name__ == "__main__":
    main()
