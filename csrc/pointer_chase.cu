// Pointer-chase latency (origami-calibrate, metrics `l2_hit_latency`,
// `dram_latency_page_local`, `dram_latency_random`).
//
// One thread follows a chain of 4-byte indices, one per 128-byte line, with `ld.global.cg`
// (L2, not L1), and times `steps` dependent loads with clock64: cycles per step is the load
// latency as dependent code sees it (the index arithmetic is the same in every variant, so
// it cancels in hbm_latency_penalty = DRAM latency - L2 hit latency).
//
// For the L2 variant the footprint is warmed by `chase_touch_sm` from the SM that chases.
// The chain is built on the device by `chase_build` from a keyed pseudo-random bijection
// on line numbers, so every sample gets a fresh random permutation without uploading the
// array. Lines are visited in groups of 2^bits_local lines: inside a group in permuted
// order, groups one after another. bits_local = bits_total gives one fully random cycle
// over the footprint; bits_local = log2(2 MiB / 128 B) = 14 keeps each stretch of the
// chain inside one 2 MiB page (TLB-warm: the "page-local" variant).
#include "common.cuh"

#define CHASE_LINE_WORDS 32u  // 128-byte lines of 4-byte words

// A bijection on [0, 2^bits): multiplication by an odd number, addition and
// x ^= x >> s are each invertible modulo 2^bits.
__device__ __forceinline__ u32 chase_perm(u32 x, u32 bits, u32 k0, u32 k1, u32 k2) {
    const u32 mask = bits >= 32 ? 0xffffffffu : ((1u << bits) - 1u);
    const u32 s1 = (bits + 1u) / 2u, s2 = bits / 3u + 1u;
    x = (x * (k0 | 1u) + k1) & mask;
    x ^= x >> s1;
    x = (x * (k2 | 1u)) & mask;
    x ^= x >> s2;
    x = (x * 0x2c1b3c6du + k0) & mask;
    x ^= x >> s1;
    return x;
}

__device__ __forceinline__ u32 chase_line(u32 i, u32 bits_total, u32 bits_local, u32 k0, u32 k1,
                                          u32 k2) {
    const u32 local_mask = (1u << bits_local) - 1u;
    const u32 g = bits_local >= bits_total ? 0u : (i >> bits_local);
    const u32 j = i & local_mask;
    const u32 kg = origami_hash(k1 ^ (g * 0x9e3779b9u));
    return (g << bits_local) | chase_perm(j, bits_local, k0, kg, k2);
}

// next[line(i) * 32] = line(i + 1) * 32 for i in [0, 2^bits_total): one cycle through every
// line. bits_total <= 26 (indices are 32-bit word offsets).
extern "C" __global__ void chase_build(u32* next, u32 bits_total, u32 bits_local, u32 k0, u32 k1,
                                       u32 k2) {
    const u32 n = 1u << bits_total;
    const u32 stride = gridDim.x * blockDim.x;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const u32 a = chase_line(i, bits_total, bits_local, k0, k1, k2);
        const u32 b = chase_line((i + 1u) & (n - 1u), bits_total, bits_local, k0, k1, k2);
        next[a * CHASE_LINE_WORDS] = b * CHASE_LINE_WORDS;
    }
}

// Read `n_vec` 16-byte vectors through L2 (to warm L2 with a footprint, or to evict it by
// reading another buffer).
extern "C" __global__ void chase_touch(const uint4* __restrict__ buf, u64 n_vec, u32* sink) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u32 acc = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        uint4 v = origami_ld_cg(buf + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[threadIdx.x] = acc;
}

// Warm L2 with `n_vec` 16-byte vectors of `buf` from SM `target_smid` only (the first block
// there claims the work through `claim`, which must be 0 at launch): where a line is cached
// depends on the SM that missed on it, so the SM that chases is the SM that warms.
extern "C" __global__ void chase_touch_sm(const uint4* __restrict__ buf, u64 n_vec,
                                          u32 target_smid, u32* claim, u32* sink) {
    __shared__ u32 mine;
    if (threadIdx.x == 0) {
        mine = origami_smid() == target_smid && atomicCAS(claim, 0u, 1u) == 0u;
    }
    __syncthreads();
    if (!mine) return;
    u32 acc = 0;
    for (u64 i = threadIdx.x; i < n_vec; i += blockDim.x) {
        uint4 v = origami_ld_cg(buf + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[threadIdx.x] = acc;
}

// `warm` untimed then `steps` timed dependent loads (a multiple of 4) from index `p`: the
// timed cycles in *cycles, the final index returned (it keeps the chain alive).
__device__ __forceinline__ u32 chase_steps(const u32* __restrict__ next, u32 p, u32 warm,
                                           u32 steps, u64* cycles) {
    for (u32 i = 0; i < warm; ++i) p = origami_ld_cg_u32(next + p);
    const i64 t0 = clock64();
    for (u32 i = 0; i < steps; i += 4) {
        p = origami_ld_cg_u32(next + p);
        p = origami_ld_cg_u32(next + p);
        p = origami_ld_cg_u32(next + p);
        p = origami_ld_cg_u32(next + p);
    }
    *cycles = (u64)(clock64() - t0);
    return p;
}

// One thread: `warm` untimed steps, then `steps` timed dependent loads (a multiple of 4).
// L2 hit latency depends on which SM issues the load (distance to the L2 slice), so the
// chase runs on one chosen SM: the grid covers every SM, and the first block that finds
// itself on SM `target_smid` claims the work (`claim` must be 0 at launch).
// out[0] = cycles of the timed steps, out[1] = the final index (keeps the chain alive),
// out[2] = the SM that ran it.
extern "C" __global__ void chase(const u32* __restrict__ next, u32 start, u32 warm, u32 steps,
                                 u64* out, u32 target_smid, u32* claim) {
    if (threadIdx.x != 0 || origami_smid() != target_smid) return;
    if (atomicCAS(claim, 0u, 1u) != 0u) return;
    u64 cycles;
    out[1] = chase_steps(next, start, warm, steps, &cycles);
    out[0] = cycles;
    out[2] = target_smid;
}

// Loaded latency (origami-calibrate --only latency-loaded): the chase above on SM
// `target_smid` while every other block of a full-occupancy grid of 512-thread blocks
// streams a buffer with 16-byte ld.global.cg loads (4 in flight per thread), as a GEMM's
// SMs load their tiles while one load waits. The first block that finds itself on the
// target SM claims the chase (`claim` 0 at launch): its thread 0 waits `delay` cycles (the
// streamers start), runs `warm` untimed and `steps` timed dependent loads, and writes
// out[0] = cycles, out[1] = the final index, out[2] = the SM, out[3] = %globaltimer at its
// end; its other threads exit. Every other block reads vectors (i & stream_mask) of
// `stream` over `passes` grid-strided passes of stream_mask + 1 vectors, then lowers
// `stream_end` (u64 max at launch) to its %globaltimer: the host keeps a sample only when
// the chase ended before the first streamer did (out[3] < stream_end), else it retries
// with more passes. No block waits on another, so nothing can hang.
extern "C" __global__ void __launch_bounds__(512)
    chase_loaded(const u32* __restrict__ next, u32 start, u32 warm, u32 steps, u64* out,
                 u32 target_smid, u32* claim, u64 delay, const uint4* __restrict__ stream,
                 u64 stream_mask, u32 passes, u64* stream_end, u32* sink) {
    __shared__ u32 chaser;
    if (threadIdx.x == 0) {
        chaser = origami_smid() == target_smid && atomicCAS(claim, 0u, 1u) == 0u;
    }
    __syncthreads();
    if (chaser) {
        if (threadIdx.x != 0) return;
        const i64 d0 = clock64();
        while ((u64)(clock64() - d0) < delay) {
        }
        u64 cycles;
        out[1] = chase_steps(next, start, warm, steps, &cycles);
        out[0] = cycles;
        out[2] = target_smid;
        out[3] = origami_globaltimer();
        return;
    }
    const u64 nthreads = (u64)gridDim.x * blockDim.x;
    const u64 n = stream_mask + 1;
    u32 acc = 0;
    for (u32 ps = 0; ps < passes; ++ps) {
        const u64 base = (u64)blockIdx.x * blockDim.x + threadIdx.x + (u64)ps * blockDim.x * 5u;
        for (u64 i = 0; i < n; i += nthreads * 4) {
            uint4 v[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) v[u] = origami_ld_cg(stream + ((base + i + (u64)u * nthreads) & stream_mask));
#pragma unroll
            for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
        }
    }
    if (acc == 0x9e3779b9u) sink[threadIdx.x & 1023u] = acc;
    __syncthreads();
    if (threadIdx.x == 0) atomicMin((unsigned long long*)stream_end, (unsigned long long)origami_globaltimer());
}
