#!/usr/bin/env python3
"""Does Triton compile the `triton-tma` kernel differently when K is not a multiple of 16?

Compiles python/origami_gemm/kernels/triton_tma.py for sm_90a on a CPU (as tma_ptxas_stats.py
does) twice per config: with K and the row strides of A and B marked divisible by 16 (what
Triton's launcher specializes for K = 4096) and without (K = 3000, 4104), and prints the
shared memory, TMA copies, global loads, wgmma count and whether the PTX code (debug lines
left out) is identical. Needs triton (python/requirements-test.txt); no GPU.

Usage: python3 scripts/triton/tma_class_check.py
"""
import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from origami_gemm.kernels.triton_tma import matmul_tma_persistent_kernel  # noqa: E402

NAMES = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bn", "stride_cm",
         "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "NUM_PROGRAMS",
         "WARP_SPECIALIZE", "FLATTEN", "EPILOGUE_SUBTILE"]
TYPES = ["*fp16"] * 3 + ["i32"] * 6 + ["constexpr"] * 8
CLASSES = [("K a multiple of 16", (0, 1, 2, 4, 5, 6, 7, 8)),
           ("K not a multiple of 16", (0, 1, 2, 4, 8))]


def code_hash(ptx):
    code = "\n".join(line for line in ptx.splitlines()
                     if not line.strip().startswith((".loc", ".file", "//")))
    return hashlib.md5(code.encode()).hexdigest()[:10]


def main():
    sig = dict(zip(NAMES, TYPES))
    for bm, bn, bk, w, s, flatten in [(128, 256, 64, 8, 3, False), (128, 128, 64, 4, 5, True),
                                      (64, 128, 128, 4, 4, False)]:
        consts = {(9 + i,): v for i, v in enumerate([bm, bn, bk, 8, 132, False, flatten, False])}
        hashes = []
        for name, div in CLASSES:
            attrs = {(i,): [["tt.divisibility", 16]] for i in div}
            k = triton.compile(ASTSource(matmul_tma_persistent_kernel, sig, consts, attrs),
                               target=GPUTarget("cuda", 90, 32),
                               options={"num_warps": w, "num_stages": s})
            ptx = k.asm["ptx"]
            hashes.append(code_hash(ptx))
            print(f"{bm}x{bn}x{bk} w{w} s{s}{' flatten' if flatten else ''}, {name}: "
                  f"shared {k.metadata.shared} B, TMA copies {ptx.count('cp.async.bulk.tensor')}, "
                  f"ld.global {len(re.findall(r'ld[.]global', ptx))}, "
                  f"wgmma {ptx.count('wgmma.mma_async')}, PTX code {hashes[-1]}")
        print(f"  identical: {hashes[0] == hashes[1]}")


if __name__ == "__main__":
    main()
