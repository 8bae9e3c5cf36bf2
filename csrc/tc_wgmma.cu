// wgmma throughput per SM (origami-calibrate, `--only tc-rate` on compute capability 9.0:
// metrics `wgmma_f16_nNNN_wgW_flop_per_cycle_per_sm`, curves
// `wgmma_f16_flop_per_cycle_per_sm_vs_n_wgW`). sm_90a only: wgmma exists only on the
// arch-specific target (NVRTC with --gpu-architecture=sm_90a, nvcc with -arch=sm_90a).
//
// One CTA per SM (the host asks for more than half of the SM's shared memory) of 1 or 2
// warpgroups. Each warpgroup owns a 64 x 64 fp16 A tile and all share an N x 64 fp16 B
// tile, both K-major in shared memory with the 128-byte swizzle, read through wgmma
// descriptors exactly as the Hopper GEMM's consumers read a stage (csrc/hopper_gemm.cu:
// desc_sw128, 4 x m64nNk16 per 64-wide K slice, one commit group per slice, one group
// left in flight with wait_group 1). The tiles hold random fp16 values in [0.25, 2) with
// random signs, written by the threads and made visible to the async proxy with
// fence.proxy.async before the first wgmma (with `zero_a` set the A tiles hold zeros: the
// energy of a wgmma whose A rows are a tile's zero fill past M, `--only energy`). Thread 0
// reads clock64 between two block-wide
// barriers around the loop; the host takes (cycles(2N) - cycles(N)) per CTA and the median
// over CTAs, and counts 2 x 64 x N x 16 dense FLOP per wgmma.
#include "common.cuh"
#include "hopper_ptx.cuh"
#include "hopper_wgmma.cuh"

namespace tc_wgmma_detail {

using namespace hopper_ptx;

// An fp16 bit pattern in [0.25, 2) with a random sign: exponent 13..15, any mantissa.
__device__ __forceinline__ u32 rand_f16(u32 h) {
    const u32 sign = (h >> 31) & 1u;
    const u32 exp = 13u + (h >> 10) % 3u;
    const u32 man = h & 0x3FFu;
    return (sign << 15) | (exp << 10) | man;
}

template <int N>
__device__ __forceinline__ void rate(u32 iters, u32 seed, u32 zero_a, float* out, u64* cycles) {
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const u32 base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const int wgs = blockDim.x / 128;
    const int wg = threadIdx.x / 128;
    const u32 a_tile = base + wg * 8192u;   // 64 rows x 128 bytes per warpgroup
    const u32 b_tile = base + wgs * 8192u;  // N rows x 128 bytes, shared
    // Fill A tiles and B with random fp16 pairs (the swizzle only permutes 16-byte chunks
    // inside each row: random data stays random).
    const u32 words = (wgs * 8192u + N * 128u) / 4u;
    for (u32 i = threadIdx.x; i < words; i += blockDim.x) {
        const u32 h = origami_hash(i ^ seed);
        const bool in_a = i < wgs * 8192u / 4u;
        const u32 v = (zero_a && in_a) ? 0u : rand_f16(h) | (rand_f16(origami_hash(h)) << 16);
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(base + 4u * i), "r"(v) : "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();

    float acc[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; ++i) acc[i] = 0.0f;
    const i64 t0 = clock64();
    for (u32 it = 0; it < iters; ++it) {
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            Wgmma<N, false>::run(acc, desc_sw128(a_tile + kk * 32), desc_sw128(b_tile + kk * 32),
                                 1);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    __syncthreads();
    const i64 t1 = clock64();
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += acc[i];
    out[threadIdx.x] = s;
    if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<u64>(t1 - t0);
}

}  // namespace tc_wgmma_detail

// Launch: grid = SMs, block = 128 x warpgroups (1 or 2), dynamic shared memory at least
// 1024 + warpgroups x 8192 + N x 128 bytes (the host asks for more: one CTA per SM).
#define TC_WGMMA_KERNEL(N)                                                                     \
    extern "C" __global__ void __launch_bounds__(256, 1)                                        \
        tc_wgmma_n##N(u32 iters, u32 seed, u32 zero_a, float* out, u64* cycles) {               \
        tc_wgmma_detail::rate<N>(iters, seed, zero_a, out, cycles);                             \
    }

TC_WGMMA_KERNEL(16)
TC_WGMMA_KERNEL(64)
TC_WGMMA_KERNEL(128)
TC_WGMMA_KERNEL(256)
