#!/usr/bin/env python3
"""Compile the persistent TMA matmul (python/origami_gemm/kernels/triton_tma.py) for sm_90a on a
CPU (no GPU needed) and record, for every config of a listing: ptxas's registers and
spill stores/loads, Triton's shared-memory figure, whether the PTX has wgmma
(`wgmma.mma_async`), TMA copies (`cp.async.bulk.tensor`) and device-side descriptor
writes (`tensormap.replace`), whether Triton split the loop into warp-specialized
partitions (`ws_split`: a `ttg.warp_specialize` op in the TTGIR), a short hash of the PTX's
code (`ptx_md5`, debug lines left out: equal hashes are the same kernel, e.g. a switch
that changed nothing), and the status: ok, out_of_resources (shared memory above sm_90's
232448 B per block, which the launch would refuse; Triton's compiler itself does not
check it), compile_error or ptxas_error, with the error's first 160 characters.

The listing is `configs()` of the kernel module with GROUP_SIZE_M left out (it only
changes the tile-index arithmetic; compiled at --group, 8 by default) and NUM_PROGRAMS
fixed at --programs (132, an H100 SXM's SMs). The specialisation matches a launch on the
device: pointers, N, K and the row strides divisible by 16, M not specialised.

Usage: python3 scripts/triton/tma_ptxas_stats.py OUT.csv [--jobs 2] [--dtype fp16|bf16]
       [--group 8] [--programs 132] [--limit N] [--only KEY-SUBSTRING ...]
"""
import argparse
import csv
import hashlib
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))

FIELDS = ["bm", "bn", "bk", "w", "s", "ws", "flatten", "subtile", "status", "regs",
          "spill_store_bytes", "spill_load_bytes", "shared_bytes", "wgmma", "tma_copies",
          "tensormap_replace", "ws_split", "ptx_md5", "error"]
# sm_90's largest shared memory per block: a kernel above it compiles, and its launch fails
SM90_SHARED_BYTES = 232448


def ptx_md5(ptx):
    """A hash of the PTX's code alone: no debug sections, `.file` or `.loc` lines (they
    hold the source's path and line numbers, which differ between checkouts)."""
    code = []
    for line in ptx.splitlines():
        if line.strip().startswith(".section") and ".debug" in line:
            break
        if not line.strip().startswith((".file", ".loc")):
            code.append(line)
    return hashlib.md5("\n".join(code).encode()).hexdigest()[:10]


def one(job):
    cfg, dtype, group, programs = job
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from origami_gemm.kernels.triton_tma import matmul_tma_persistent_kernel
    names = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bn", "stride_cm",
             "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "NUM_PROGRAMS",
             "WARP_SPECIALIZE", "FLATTEN", "EPILOGUE_SUBTILE"]
    types = [f"*{dtype}"] * 3 + ["i32"] * 6 + ["constexpr"] * 8
    sig = dict(zip(names, types))
    values = [cfg.BLOCK_SIZE_M, cfg.BLOCK_SIZE_N, cfg.BLOCK_SIZE_K, group, programs,
              cfg.WARP_SPECIALIZE, cfg.FLATTEN, cfg.EPILOGUE_SUBTILE]
    consts = {(9 + i,): v for i, v in enumerate(values)}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 4, 5, 6, 7, 8)}
    row = {"bm": cfg.BLOCK_SIZE_M, "bn": cfg.BLOCK_SIZE_N, "bk": cfg.BLOCK_SIZE_K,
           "w": cfg.num_warps, "s": cfg.num_stages, "ws": int(cfg.WARP_SPECIALIZE),
           "flatten": int(cfg.FLATTEN), "subtile": int(cfg.EPILOGUE_SUBTILE)}
    try:
        k = triton.compile(ASTSource(matmul_tma_persistent_kernel, sig, consts, attrs),
                           target=GPUTarget("cuda", 90, 32),
                           options={"num_warps": cfg.num_warps, "num_stages": cfg.num_stages})
        row["shared_bytes"] = k.metadata.shared
        ptx = k.asm["ptx"]
        ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin",
                             "ptxas")
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "k.ptx")
            with open(p, "w") as f:
                f.write(ptx)
            r = subprocess.run([ptxas, "-v", "--gpu-name", "sm_90a", p, "-o",
                                os.path.join(d, "k.o")], capture_output=True, text=True)
        txt = r.stderr
        regs = [int(x) for x in re.findall(r"Used (\d+) registers", txt)]
        row["regs"] = max(regs) if regs else ""
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", txt)
        row["spill_store_bytes"], row["spill_load_bytes"] = (m.group(1), m.group(2)) if m \
            else ("", "")
        row["wgmma"] = int("wgmma.mma_async" in ptx)
        row["tma_copies"] = ptx.count("cp.async.bulk.tensor")
        row["tensormap_replace"] = int("tensormap.replace" in ptx)
        ttgir = k.asm.get("ttgir", "")
        row["ws_split"] = int("ttg.warp_specialize" in ttgir)
        row["ptx_md5"] = ptx_md5(ptx)
        if r.returncode != 0:
            row["status"] = "ptxas_error"
            row["error"] = txt.strip().replace("\n", " ")[:160]
        elif k.metadata.shared > SM90_SHARED_BYTES:
            row["status"] = "out_of_resources"
            row["error"] = f"shared memory {k.metadata.shared} B > {SM90_SHARED_BYTES} B"
        else:
            row["status"] = "ok"
            row["error"] = ""
    except Exception as e:  # noqa: BLE001
        name = type(e).__name__
        row["status"] = "out_of_resources" if "OutOfResources" in name else "compile_error"
        msg = str(e).strip().splitlines()
        row["error"] = f"{name}: {' '.join(msg)[:160]}"
    return row


def triton_version():
    import triton
    return triton.__version__


def listing(only=()):
    from origami_gemm.kernels.triton_tma import configs
    seen, out = set(), []
    for c in configs(group_sizes=(8,)):
        if only and not any(o in c.key() for o in only):
            continue
        if c.key() not in seen:
            seen.add(c.key())
            out.append(c)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16")
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--programs", type=int, default=132)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--only", nargs="*", default=(),
                    help="keep configs whose key contains one of these, e.g. 128x128x64_")
    a = ap.parse_args()
    if os.environ.get("TRITON_INTERPRET") == "1":
        sys.exit("tma_ptxas_stats: error: unset TRITON_INTERPRET: the interpreter compiles nothing")
    cfgs = listing(a.only)[: a.limit]
    if not cfgs:
        sys.exit("tma_ptxas_stats: error: no config in the listing matches --only")
    jobs = [(c, a.dtype, a.group, a.programs) for c in cfgs]
    t0 = time.time()
    tmp = a.out + ".part"
    with mp.get_context("spawn").Pool(a.jobs) as pool, open(tmp, "w", newline="") as f:
        f.write(f"# Persistent TMA matmul (python/origami_gemm/kernels/triton_tma.py), {a.dtype}, "
                f"GROUP_SIZE_M {a.group}, NUM_PROGRAMS {a.programs}, compiled for sm_90a by "
                f"Triton {triton_version()} on a CPU: python3 scripts/triton/tma_ptxas_stats.py "
                f"{' '.join(sys.argv[1:])}\n")
        wr = csv.DictWriter(f, fieldnames=FIELDS)
        wr.writeheader()
        for i, row in enumerate(pool.imap(one, jobs)):
            wr.writerow(row)
            f.flush()
            if (i + 1) % 50 == 0:
                print(f"{i + 1}/{len(jobs)} ({time.time() - t0:.0f} s)", flush=True)
    os.replace(tmp, a.out)
    print(f"{len(jobs)} configs in {time.time() - t0:.0f} s -> {a.out}")


if __name__ == "__main__":
    main()
