// DRAM bandwidth, STREAM-like (origami-calibrate, metrics `dram_read_bw`, `dram_copy_bw`,
// `dram_triad_bw`, and the curve `dram_read_bw_vs_sms`).
//
// Arrays of at least 8x L2 (the host sizes them), 16-byte accesses, DRAM_UNROLL
// independent loads in flight per thread before the first use. Bytes counted: read n*16,
// copy 2*n*16, triad 3*n*16 (STREAM's convention: no write-allocate traffic counted).
//
// SM-limited variant `dram_read_sms`: the grid fills every SM, each block reads %smid and
// exits unless smid < smid_limit (the host picks smid_limit so that exactly k SMs stay,
// from the SM ids that `smid_map` saw: ids need not be contiguous). The surviving blocks
// pull 16-byte-vector chunks from a global work counter, so the k SMs share the window
// whatever the block-to-SM placement, and mark their SM in `sm_mask` for a check.
#include "common.cuh"

#ifndef DRAM_UNROLL
#define DRAM_UNROLL 4
#endif

extern "C" __global__ void __launch_bounds__(512)
dram_read(const uint4* __restrict__ a, u64 n_vec, u32* sink, u64* clk) {
    OrigamiClockRec rec;
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    if (leader) rec.start();
    const u64 nthreads = (u64)gridDim.x * blockDim.x;
    const u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u32 acc = 0;
    u64 i = tid;
    for (; i + (DRAM_UNROLL - 1) * nthreads < n_vec; i += DRAM_UNROLL * nthreads) {
        uint4 v[DRAM_UNROLL];
#pragma unroll
        for (int u = 0; u < DRAM_UNROLL; ++u) v[u] = origami_ld_cg(a + i + u * nthreads);
#pragma unroll
        for (int u = 0; u < DRAM_UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n_vec; i += nthreads) {
        uint4 v = origami_ld_cg(a + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[tid & 1023u] = acc;
    if (leader) rec.stop(clk);
}

extern "C" __global__ void __launch_bounds__(512)
dram_copy(const uint4* __restrict__ a, uint4* __restrict__ b, u64 n_vec) {
    const u64 nthreads = (u64)gridDim.x * blockDim.x;
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (DRAM_UNROLL - 1) * nthreads < n_vec; i += DRAM_UNROLL * nthreads) {
        uint4 v[DRAM_UNROLL];
#pragma unroll
        for (int u = 0; u < DRAM_UNROLL; ++u) v[u] = origami_ld_cg(a + i + u * nthreads);
#pragma unroll
        for (int u = 0; u < DRAM_UNROLL; ++u) b[i + u * nthreads] = v[u];
    }
    for (; i < n_vec; i += nthreads) b[i] = origami_ld_cg(a + i);
}

__device__ __forceinline__ float4 origami_as_f4(uint4 v) {
    return make_float4(__uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z),
                       __uint_as_float(v.w));
}

// a = b + s * c, on float4 vectors.
extern "C" __global__ void __launch_bounds__(512)
dram_triad(float4* __restrict__ a, const uint4* __restrict__ b, const uint4* __restrict__ c,
           float s, u64 n_vec) {
    const u64 nthreads = (u64)gridDim.x * blockDim.x;
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (DRAM_UNROLL - 1) * nthreads < n_vec; i += DRAM_UNROLL * nthreads) {
        float4 x[DRAM_UNROLL], y[DRAM_UNROLL];
#pragma unroll
        for (int u = 0; u < DRAM_UNROLL; ++u) {
            x[u] = origami_as_f4(origami_ld_cg(b + i + u * nthreads));
            y[u] = origami_as_f4(origami_ld_cg(c + i + u * nthreads));
        }
#pragma unroll
        for (int u = 0; u < DRAM_UNROLL; ++u) {
            a[i + u * nthreads] = make_float4(x[u].x + s * y[u].x, x[u].y + s * y[u].y,
                                              x[u].z + s * y[u].z, x[u].w + s * y[u].w);
        }
    }
    for (; i < n_vec; i += nthreads) {
        float4 x = origami_as_f4(origami_ld_cg(b + i));
        float4 y = origami_as_f4(origami_ld_cg(c + i));
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}

// Every block marks its SM: the host learns which %smid values exist.
extern "C" __global__ void smid_map(u32* sm_mask) {
    if (threadIdx.x == 0) {
        u32 s = origami_smid();
        atomicOr(sm_mask + (s >> 5), 1u << (s & 31u));
    }
}

// Read `n_vec` vectors starting at `offset_vec` with only the SMs whose id is below
// `smid_limit`; `counter` must be zero at launch. chunk_vec must be a multiple of
// blockDim.x * DRAM_UNROLL.
extern "C" __global__ void __launch_bounds__(512)
dram_read_sms(const uint4* __restrict__ a, u64 offset_vec, u64 n_vec, u32 chunk_vec,
              u32 smid_limit, u32* counter, u32* sm_mask, u32* sink) {
    __shared__ u32 chunk;
    const u32 s = origami_smid();
    if (s >= smid_limit) return;
    if (threadIdx.x == 0) atomicOr(sm_mask + (s >> 5), 1u << (s & 31u));
    const u64 n_chunks = (n_vec + chunk_vec - 1) / chunk_vec;
    const uint4* base = a + offset_vec;
    u32 acc = 0;
    for (;;) {
        if (threadIdx.x == 0) chunk = atomicAdd(counter, 1u);
        __syncthreads();
        const u64 c = chunk;
        __syncthreads();
        if (c >= n_chunks) break;
        const u64 lo = c * chunk_vec;
        const u64 hi = (lo + chunk_vec < n_vec) ? lo + chunk_vec : n_vec;
        for (u64 i = lo + threadIdx.x; i < hi; i += (u64)blockDim.x * DRAM_UNROLL) {
            uint4 v[DRAM_UNROLL];
#pragma unroll
            for (int u = 0; u < DRAM_UNROLL; ++u) {
                const u64 j = i + (u64)u * blockDim.x;
                v[u] = j < hi ? origami_ld_cg(base + j) : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int u = 0; u < DRAM_UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
        }
    }
    if (acc == 0x9e3779b9u) sink[threadIdx.x & 1023u] = acc;
}
