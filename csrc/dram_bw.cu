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

// Row-segment variant `dram_read_rows` (origami-calibrate --only dram-rows): a GEMM tile's
// walk along K over operands that stream from DRAM. The footprint (n_bands bands of
// 2^band_shift rows, each row a pitch of 2^pitch_shift 16-byte vectors; far larger than
// L2) is read band by band, one block per band at a time: step s of a band reads the s-th
// segment of 2^seg_shift vectors of each of its rows, the steps in order, as a K loop reads
// BLOCK_K columns of its tile's rows per iteration. Band vector j (0 <= j < rows x pitch)
// is step j >> (band_shift + seg_shift), row (j >> seg_shift) mod rows, vector j mod
// 2^seg_shift of that segment; DRAM_UNROLL loads in flight per thread, a block's 512
// threads reading consecutive j. seg_shift = pitch_shift reads each band in order (the
// contiguous reference). Bytes = n_bands x rows x pitch x 16.
extern "C" __global__ void __launch_bounds__(512)
dram_read_rows(const uint4* __restrict__ buf, u32 n_bands, u32 band_shift, u32 seg_shift,
               u32 pitch_shift, u32* sink) {
    const u32 band_vecs_shift = band_shift + pitch_shift;
    const u32 n = 1u << band_vecs_shift;
    const u32 step_shift = band_shift + seg_shift;
    const u32 step_mask = (1u << step_shift) - 1u;
    const u32 seg_mask = (1u << seg_shift) - 1u;
    u32 acc = 0;
    for (u32 band = blockIdx.x; band < n_bands; band += gridDim.x) {
        const uint4* base = buf + ((u64)band << band_vecs_shift);
        for (u32 i = threadIdx.x; i < n; i += blockDim.x * DRAM_UNROLL) {
            uint4 v[DRAM_UNROLL];
#pragma unroll
            for (int u = 0; u < DRAM_UNROLL; ++u) {
                const u32 j = i + (u32)u * blockDim.x;
                const u32 rem = j & step_mask;
                const u32 off = ((rem >> seg_shift) << pitch_shift) +
                                ((j >> step_shift) << seg_shift) + (rem & seg_mask);
                v[u] = origami_ld_cg(base + (j < n ? off : 0u));
            }
#pragma unroll
            for (int u = 0; u < DRAM_UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
        }
    }
    if (acc == 0x9e3779b9u) sink[threadIdx.x & 1023u] = acc;
}
