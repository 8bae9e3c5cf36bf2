// Shared-memory read bandwidth per SM (origami-calibrate, metrics
// `smem_read_v4_bytes_per_cycle_sm` and `smem_ldmatrix_x4_bytes_per_cycle_sm`).
//
// Every block (SMEM_THREADS threads, as many blocks as fit on each SM) fills a 32 KiB
// shared array, waits at a barrier, and then every warp issues `iters` rounds of
// SMEM_UNROLL independent 512-byte warp reads:
//   smem_read_v4:       ld.shared.v4.u32, lane l reads the 16 bytes at warp_base + 16 l;
//   smem_ldmatrix_x4:   ldmatrix.sync.aligned.m8n8.x4.shared.b16, lane l gives the row
//                       address warp_base + 16 l (four 8x8 b16 matrices, 512 bytes).
// Both patterns touch 32 consecutive 16-byte chunks per warp instruction, so each 128-byte
// phase covers all 32 banks once: conflict-free. `asm volatile` binds only the compiler
// front end: ptxas removed repeated loads of one address (a version that read four fixed
// slices twice per round measured 493 B per SM cycle on an H100, one whose slices rotated by
// a constant step 254, against the banks' 128). So the SMEM_UNROLL loads of a round read
// SMEM_UNROLL different 4 KiB slices, the rotation steps by a number ptxas cannot see (from
// the seed argument), and the v4 read is `ld.volatile.shared`. Results are XOR-folded into
// a value stored only if it hits a magic number.
//
// Timing: thread 0 reads clock64 after the barrier that follows the fill and after a
// barrier that follows the loop, and writes rec[block] = {smid, clk0, clk1}. clock64 is a
// per-SM counter, so the host groups blocks by %smid and divides the bytes of all the
// blocks of one SM by the span from their earliest start to their latest end (`per_sm_rate`
// in src/calibrate/bench_extra.rs); the sample is the median over SMs, in bytes per SM
// cycle. No CUDA event or SM clock enters the figure.
#include "common.cuh"

#ifndef SMEM_THREADS
#define SMEM_THREADS 1024
#endif
#ifndef SMEM_UNROLL
#define SMEM_UNROLL 8
#endif
// 32 KiB of 16-byte chunks: two per thread of a 1024-thread block.
#define SMEM_CHUNKS 2048

__device__ __forceinline__ void smem_ld_v4(u32 addr, uint4& v) {
    asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr));
}

__device__ __forceinline__ void smem_ldmatrix_x4(u32 addr, uint4& v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr));
#else
    smem_ld_v4(addr, v); // ldmatrix needs sm_75; the host never launches this below it
#endif
}

#define SMEM_KERNEL(NAME, LOAD)                                                                \
    extern "C" __global__ void __launch_bounds__(SMEM_THREADS)                                 \
    NAME(u32 iters, u32 seed, u32* sink, u64* rec) {                                           \
        __shared__ uint4 buf[SMEM_CHUNKS];                                                     \
        for (u32 i = threadIdx.x; i < SMEM_CHUNKS; i += blockDim.x) {                          \
            const u32 h = origami_hash(i ^ seed);                                              \
            buf[i] = make_uint4(h, h + 1u, h ^ 0x5bd1e995u, h * 7u);                           \
        }                                                                                      \
        /* Lane l of warp w reads chunk 32 (w mod 8) + l of slice (rot + u) mod 8 (a slice  \
           is 4 KiB, 256 chunks) in load u; rot grows by a step known only at run time:   \
           no two loads of a round share an address, nor can ptxas match rounds. */        \
        const u32 step = 1u + (seed >> 29);                                                    \
        u32 rot = 0;                                                                           \
        const u32 base = (u32)__cvta_generic_to_shared(buf) + 16u * (threadIdx.x & 255u);      \
        u32 acc = 0;                                                                           \
        i64 t0 = 0;                                                                            \
        __syncthreads();                                                                       \
        if (threadIdx.x == 0) t0 = clock64();                                                  \
        for (u32 it = 0; it < iters; ++it) {                                                   \
            uint4 v[SMEM_UNROLL];                                                              \
            _Pragma("unroll") for (int u = 0; u < SMEM_UNROLL; ++u) {                          \
                LOAD(base + (((u32)u + rot) & 7u) * 4096u, v[u]);                              \
            }                                                                                  \
            _Pragma("unroll") for (int u = 0; u < SMEM_UNROLL; ++u) {                          \
                acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;                                      \
            }                                                                                  \
            rot += step;                                                                       \
        }                                                                                      \
        __syncthreads();                                                                       \
        if (threadIdx.x == 0) {                                                                \
            const i64 t1 = clock64();                                                          \
            rec[3u * blockIdx.x + 0u] = origami_smid();                                        \
            rec[3u * blockIdx.x + 1u] = (u64)t0;                                               \
            rec[3u * blockIdx.x + 2u] = (u64)t1;                                               \
        }                                                                                      \
        if (acc == 0x9e3779b9u) sink[threadIdx.x & 1023u] = acc;                               \
    }

SMEM_KERNEL(smem_read_v4, smem_ld_v4)
SMEM_KERNEL(smem_ldmatrix_x4, smem_ldmatrix_x4)
