#!/usr/bin/env python3
"""Compile csrc/gemm.cu with NVRTC (no GPU needed) for a few configs and arches.

Usage: nvrtc_check.py LIBNVRTC_PATH [arch ...]
Exits non-zero if any compile fails; prints the log of failures.
"""
import ctypes, sys, os

lib = ctypes.CDLL(sys.argv[1])
arches = sys.argv[2:] or ["sm_80", "sm_86", "sm_89", "sm_90"]
src_path = os.path.join(os.path.dirname(__file__), "..", "..", "csrc", "gemm.cu")
src = open(src_path, "rb").read()
configs = [(128, 128, 32, 8, 3, "fp16"), (128, 256, 64, 8, 3, "bf16"), (32, 32, 16, 4, 2, "fp16"),
           (256, 128, 128, 8, 2, "bf16"), (64, 64, 64, 4, 4, "fp16")]
fails = 0
for arch in arches:
    for bm, bn, bk, nw, ns, dt in configs:
        prog = ctypes.c_void_p()
        rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"gemm.cu", 0, None, None)
        assert rc == 0, rc
        opts = [f"--gpu-architecture={arch}", "-std=c++17", f"-DBLOCK_M={bm}", f"-DBLOCK_N={bn}",
                f"-DBLOCK_K={bk}", f"-DNUM_WARPS={nw}", f"-DNUM_STAGES={ns}"]
        if dt == "bf16":
            opts.append("-DDTYPE_BF16")
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        cub = ctypes.c_size_t()
        if rc == 0:
            lib.nvrtcGetCUBINSize(prog, ctypes.byref(cub))
        print(f"{arch} {bm}x{bn}x{bk} w{nw} s{ns} {dt}: rc={rc} cubin={cub.value} bytes")
        if rc != 0:
            fails += 1
            print(log.value.decode(errors="replace"))
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
sys.exit(1 if fails else 0)
