// Shared helpers of the origami calibration microbenchmarks (csrc/*.cu).
//
// No standard headers: these files are compiled by nvcc at build time and by NVRTC at run
// time, and NVRTC has no system include path. build.rs inlines this header into each
// embedded source.
#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

// The SM this thread runs on (PTX special register %smid).
__device__ __forceinline__ u32 origami_smid() {
    u32 r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

// Global nanosecond timer (PTX %globaltimer); coarse-grained but shared by all SMs.
__device__ __forceinline__ u64 origami_globaltimer() {
    u64 r;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r));
    return r;
}

// 16-byte load that caches in L2 only (ld.global.cg): keeps L1 out of L2/DRAM figures.
__device__ __forceinline__ uint4 origami_ld_cg(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// The streaming read of the L2, DRAM and energy kernels: `passes` passes over a footprint
// of n_vec 16-byte vectors (a power of two), every thread of the grid UNROLL independent
// `ld.global.cg` loads a step, grid-striding, each pass starting a few blocks further so
// that an SM's share of the footprint changes from pass to pass. Linear vector j of a pass
// (masked to the footprint) is read at index(j). Returns the XOR of what it read, for a
// data-dependent store that keeps the loads.
template <int UNROLL, typename Index>
__device__ __forceinline__ u32 origami_stream_xor(const uint4* __restrict__ buf, u32 n_vec,
                                                  u32 passes, Index index) {
    const u32 mask = n_vec - 1u;
    const u32 nthreads = gridDim.x * blockDim.x;
    const u32 tid = blockIdx.x * blockDim.x + threadIdx.x;
    u32 acc = 0;
    for (u32 p = 0; p < passes; ++p) {
        const u32 start = tid + p * (blockDim.x * 5u);
        for (u32 i = 0; i < n_vec; i += nthreads * UNROLL) {
            uint4 v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                v[u] = origami_ld_cg(buf + index((start + i + (u32)u * nthreads) & mask));
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
        }
    }
    return acc;
}

// The footprint read in order: vector j at j.
struct OrigamiInOrder {
    __device__ __forceinline__ u32 operator()(u32 j) const { return j; }
};

// 4-byte load that caches in L2 only, for the pointer chase.
__device__ __forceinline__ u32 origami_ld_cg_u32(const u32* p) {
    u32 v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

// A 32-bit mixing hash (fresh, non-zero data from a seed without a host upload).
__device__ __forceinline__ u32 origami_hash(u32 x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// Fill `n` 16-byte vectors with hashed data derived from `seed` (never zeros).
extern "C" __global__ void origami_fill(uint4* buf, u64 n, u32 seed) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        u32 h = origami_hash((u32)i ^ seed) | 1u;
        buf[i] = make_uint4(h, h * 3u + 1u, h ^ 0x9e3779b9u, h + (u32)(i >> 32));
    }
}

// Record clock64 and %globaltimer at the start and end of a kernel from thread 0 of block
// 0, so the SM clock during a bandwidth kernel can be read back: rec[0..4] = clk0, clk1,
// ns0, ns1.
struct OrigamiClockRec {
    i64 clk0;
    u64 ns0;
    __device__ __forceinline__ void start() {
        ns0 = origami_globaltimer();
        clk0 = clock64();
    }
    __device__ __forceinline__ void stop(u64* rec) {
        i64 clk1 = clock64();
        u64 ns1 = origami_globaltimer();
        rec[0] = (u64)clk0;
        rec[1] = (u64)clk1;
        rec[2] = ns0;
        rec[3] = ns1;
    }
};
