// Tensor-core throughput of mma.sync per SM against resident warps (origami-calibrate,
// `--only tc-rate`: metrics `mma_sync_f16_per_cycle_per_sm_wNN` and the curve
// `mma_sync_f16_per_cycle_per_sm_vs_warps`).
//
// One block of W warps per SM (the host asks for more than half of the SM's shared memory,
// so no second block fits). Every warp runs `iters` rounds of TC_ILP independent
// accumulator chains of `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`: with 8
// chains a warp always has an instruction whose inputs are ready (the dependent latency is
// ~24 cycles and one warp issues one every ~6 cycles on Hopper, csrc/mma_latency.cu), so
// the tensor pipes of the SM, not the latency, limit the rate once enough warps are
// resident. Thread 0 reads clock64 between two block-wide barriers around the loop; the
// host takes (cycles(2N) - cycles(N)) per block, which removes the fixed cost of the
// barriers, the clock reads and the drain, and the median over blocks.
//
// Operands are random non-zero fp16 pairs from the host (data-dependent power is real on
// tensor cores: zeros would flatter the rate).
#include "common.cuh"

#define TC_ILP 8

#define TC_MMA_F16(d, a, b)                                                                    \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "                          \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                       \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

// in: 32 x 6 words (lane-indexed A and B fragments); out: one float per thread of a block
// (a sink); cycles: one per block, written by thread 0.
extern "C" __global__ void __launch_bounds__(512)
    tc_mma_rate(const u32* __restrict__ in, u32 iters, float* out, u64* cycles) {
    const u32 lane = threadIdx.x & 31u;
    u32 a[4], b[2];
    for (int i = 0; i < 4; ++i) a[i] = in[lane * 6u + i];
    for (int i = 0; i < 2; ++i) b[i] = in[lane * 6u + 4 + i];
    float d[TC_ILP][4];
    for (int c = 0; c < TC_ILP; ++c)
        for (int i = 0; i < 4; ++i) d[c][i] = 0.0f;
    __syncthreads();
    const i64 t0 = clock64();
    for (u32 it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < TC_ILP; ++c) TC_MMA_F16(d[c], a, b);
    }
    __syncthreads();
    const i64 t1 = clock64();
    float s = 0.0f;
    for (int c = 0; c < TC_ILP; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
    out[threadIdx.x] = s;
    if (threadIdx.x == 0) cycles[blockIdx.x] = (u64)(t1 - t0);
}
