// L2 read bandwidth (origami-calibrate, metric `l2_bw`).
//
// Every thread of a grid that fills all SMs issues L2_UNROLL independent 16-byte
// `ld.global.cg` loads (cached in L2, not L1) per step, grid-striding over a footprint
// that fits L2 comfortably, for `passes` passes. The start of each pass rotates by a few
// blocks so that an SM's share of the footprint changes from pass to pass. The host times
// the kernel with CUDA events and counts the bytes the loads asked for:
//   passes * steps * threads * L2_UNROLL * 16, steps = ceil(n_vec / (threads * L2_UNROLL)).
// The footprint is a power of two of 16-byte vectors (indices wrap with a mask).
#include "common.cuh"

#ifndef L2_UNROLL
#define L2_UNROLL 4
#endif

extern "C" __global__ void __launch_bounds__(512)
l2_read(const uint4* __restrict__ buf, u32 n_vec, u32 passes, u32* sink, u64* clk) {
    OrigamiClockRec rec;
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    if (leader) rec.start();
    const u32 mask = n_vec - 1;
    const u32 nthreads = gridDim.x * blockDim.x;
    const u32 tid = blockIdx.x * blockDim.x + threadIdx.x;
    u32 acc = 0;
    for (u32 p = 0; p < passes; ++p) {
        const u32 base = tid + p * (blockDim.x * 5u);
        for (u32 i = 0; i < n_vec; i += nthreads * L2_UNROLL) {
            uint4 v[L2_UNROLL];
#pragma unroll
            for (int u = 0; u < L2_UNROLL; ++u) {
                v[u] = origami_ld_cg(buf + ((base + i + (u32)u * nthreads) & mask));
            }
#pragma unroll
            for (int u = 0; u < L2_UNROLL; ++u) {
                acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
            }
        }
    }
    // Data-dependent store so the loads cannot be removed; almost never taken.
    if (acc == 0x9e3779b9u) sink[tid & 1023u] = acc;
    if (leader) rec.stop(clk);
}
