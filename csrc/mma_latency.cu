// Tensor-core MMA latency and single-warp throughput (origami-calibrate, metrics
// `mma_f16_latency`, `mma_bf16_latency`, `mma_tf32_latency`, `mma_fp8_latency` and their
// `_ilpN` issue intervals).
//
// One warp runs `iters` rounds of ILP independent accumulator chains of
// `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.f32` (m16n8k8 .tf32 for tf32, the
// instruction of csrc/gemm.cu's fp32 path; m16n8k32 e4m3 for fp8, sm_89 and later); each chain feeds its result back as the next accumulator, so with ILP = 1
// every instruction waits for the previous one: cycles / iters is the latency. With ILP > 1,
// cycles / (iters * ILP) is the issue interval of one warp (its throughput). Timed with
// clock64 by lane 0. Kernels of an instruction the architecture lacks compile to a body
// that writes 0 cycles; the host never launches them there.
#include "common.cuh"

#define MMA_K16(TY, d, a, b)                                                                  \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY                            \
                 ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                  \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

#define MMA_TF32(d, a, b)                                                                      \
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "                          \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                       \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

#define MMA_FP8(d, a, b)                                                                       \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "                         \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                       \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

#define MMA_KERNEL(NAME, ILP, BODY)                                                            \
    extern "C" __global__ void __launch_bounds__(32)                                           \
    NAME(const u32* __restrict__ in, u32 iters, float* out, u64* cycles) {                     \
        const u32 lane = threadIdx.x & 31u;                                                    \
        u32 a[4], b[2];                                                                        \
        for (int i = 0; i < 4; ++i) a[i] = in[lane * 6u + i];                                  \
        for (int i = 0; i < 2; ++i) b[i] = in[lane * 6u + 4 + i];                              \
        float d[ILP][4];                                                                       \
        for (int c = 0; c < ILP; ++c)                                                          \
            for (int i = 0; i < 4; ++i) d[c][i] = 0.0f;                                        \
        __syncwarp();                                                                          \
        const i64 t0 = clock64();                                                              \
        BODY                                                                                   \
        const i64 t1 = clock64();                                                              \
        float s = 0.0f;                                                                        \
        for (int c = 0; c < ILP; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];              \
        out[threadIdx.x] = s;                                                                  \
        if (lane == 0) cycles[0] = (u64)(t1 - t0);                                             \
    }

#define ROUNDS(ILP, ONE)                                                                       \
    for (u32 it = 0; it < iters; ++it) {                                                       \
        _Pragma("unroll") for (int c = 0; c < ILP; ++c) { ONE(d[c]); }                         \
    }

#define F16_ONE(dc) MMA_K16("f16", dc, a, b)
#define BF16_ONE(dc) MMA_K16("bf16", dc, a, b)
#define TF32_ONE(dc) MMA_TF32(dc, a, b)
#define FP8_ONE(dc) MMA_FP8(dc, a, b)

MMA_KERNEL(mma_f16_ilp1, 1, ROUNDS(1, F16_ONE))
MMA_KERNEL(mma_f16_ilp2, 2, ROUNDS(2, F16_ONE))
MMA_KERNEL(mma_f16_ilp4, 4, ROUNDS(4, F16_ONE))
MMA_KERNEL(mma_f16_ilp8, 8, ROUNDS(8, F16_ONE))
MMA_KERNEL(mma_bf16_ilp1, 1, ROUNDS(1, BF16_ONE))
MMA_KERNEL(mma_bf16_ilp2, 2, ROUNDS(2, BF16_ONE))
MMA_KERNEL(mma_bf16_ilp4, 4, ROUNDS(4, BF16_ONE))
MMA_KERNEL(mma_bf16_ilp8, 8, ROUNDS(8, BF16_ONE))
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define TF32_ROUNDS(ILP) ROUNDS(ILP, TF32_ONE)
#else
#define TF32_ROUNDS(ILP) { (void)a; (void)b; (void)iters; } /* tf32 mma.sync needs sm_80+ */
#endif
MMA_KERNEL(mma_tf32_ilp1, 1, TF32_ROUNDS(1))
MMA_KERNEL(mma_tf32_ilp2, 2, TF32_ROUNDS(2))
MMA_KERNEL(mma_tf32_ilp4, 4, TF32_ROUNDS(4))
MMA_KERNEL(mma_tf32_ilp8, 8, TF32_ROUNDS(8))

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
#define FP8_ROUNDS(ILP) ROUNDS(ILP, FP8_ONE)
#else
#define FP8_ROUNDS(ILP) { (void)a; (void)b; (void)iters; } /* e4m3 mma.sync needs sm_89+ */
#endif
MMA_KERNEL(mma_fp8_ilp1, 1, FP8_ROUNDS(1))
MMA_KERNEL(mma_fp8_ilp2, 2, FP8_ROUNDS(2))
MMA_KERNEL(mma_fp8_ilp4, 4, FP8_ROUNDS(4))
MMA_KERNEL(mma_fp8_ilp8, 8, FP8_ROUNDS(8))
