// L2 read bandwidth (origami-calibrate, metric `l2_bw`).
//
// Every thread of a grid that fills all SMs issues L2_UNROLL independent 16-byte
// `ld.global.cg` loads (cached in L2, not L1) per step, grid-striding over a footprint
// that fits L2 comfortably, for `passes` passes. The start of each pass rotates by a few
// blocks so that an SM's share of the footprint changes from pass to pass. The host times
// the kernel with CUDA events and counts the bytes the loads asked for:
//   passes * steps * threads * L2_UNROLL * 16, steps = ceil(n_vec / (threads * L2_UNROLL)).
// The footprint is a power of two of 16-byte vectors (indices wrap with a mask). The loop
// is `origami_stream_xor` (common.cuh), which the energy kernels share.
#include "common.cuh"

#ifndef L2_UNROLL
#define L2_UNROLL 4
#endif

extern "C" __global__ void __launch_bounds__(512)
l2_read(const uint4* __restrict__ buf, u32 n_vec, u32 passes, u32* sink, u64* clk) {
    OrigamiClockRec rec;
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    if (leader) rec.start();
    const u32 acc = origami_stream_xor<L2_UNROLL>(buf, n_vec, passes, OrigamiInOrder{});
    // Data-dependent store so the loads cannot be removed; almost never taken.
    if (acc == 0x9e3779b9u) sink[(blockIdx.x * blockDim.x + threadIdx.x) & 1023u] = acc;
    if (leader) rec.stop(clk);
}

// SM-limited variant `l2_read_sms` (origami-calibrate --only l2-sms; the L2 counterpart of
// dram_bw.cu's dram_read_sms): the grid fills every SM, each block reads %smid and exits
// unless smid < smid_limit (the host picks the limit so that exactly k SMs stay). The
// surviving blocks pull chunks of `chunk_vec` 16-byte vectors from a global work counter
// (`counter` zero at launch), `n_vec` vectors in all, and read vector (j & mask) of an
// L2-resident footprint of mask + 1 vectors, so the k SMs share the work whatever the
// block-to-SM placement and every byte comes from L2. Each block marks its SM in
// `sm_mask`. chunk_vec must be a multiple of blockDim.x * L2_UNROLL.
extern "C" __global__ void __launch_bounds__(512)
l2_read_sms(const uint4* __restrict__ buf, u32 mask, u64 n_vec, u32 chunk_vec, u32 smid_limit,
            u32* counter, u32* sm_mask, u32* sink) {
    __shared__ u32 chunk;
    const u32 s = origami_smid();
    if (s >= smid_limit) return;
    if (threadIdx.x == 0) atomicOr(sm_mask + (s >> 5), 1u << (s & 31u));
    const u64 n_chunks = (n_vec + chunk_vec - 1) / chunk_vec;
    u32 acc = 0;
    for (;;) {
        if (threadIdx.x == 0) chunk = atomicAdd(counter, 1u);
        __syncthreads();
        const u64 c = chunk;
        __syncthreads();
        if (c >= n_chunks) break;
        const u64 lo = c * chunk_vec;
        for (u64 i = lo + threadIdx.x; i < lo + chunk_vec; i += (u64)blockDim.x * L2_UNROLL) {
            uint4 v[L2_UNROLL];
#pragma unroll
            for (int u = 0; u < L2_UNROLL; ++u) {
                v[u] = origami_ld_cg(buf + ((i + (u64)u * blockDim.x) & mask));
            }
#pragma unroll
            for (int u = 0; u < L2_UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
        }
    }
    if (acc == 0x9e3779b9u) sink[threadIdx.x & 1023u] = acc;
}

// Vector j of the footprint read in segments of 2^seg_shift vectors a 2^pitch_shift-vector
// pitch apart (a bijection of the footprint; see `l2_read_rows`).
__device__ __forceinline__ u32 origami_row_vector(u32 j, u32 seg_shift, u32 pitch_shift,
                                                  u32 rows_shift) {
    const u32 r = j >> seg_shift;
    const u32 col = (((r >> rows_shift) << seg_shift) + (j & ((1u << seg_shift) - 1u))) &
                    ((1u << pitch_shift) - 1u);
    return ((r & ((1u << rows_shift) - 1u)) << pitch_shift) + col;
}

// `origami_row_vector` as the index of `origami_stream_xor`.
struct OrigamiRowVector {
    u32 seg_shift, pitch_shift, rows_shift;
    __device__ __forceinline__ u32 operator()(u32 j) const {
        return origami_row_vector(j, seg_shift, pitch_shift, rows_shift);
    }
};

// Row-segment variant `l2_read_rows` (origami-calibrate --only l2-rows): the loads of a
// GEMM tile whose rows are short. A tile of BLOCK_K = 16 fp16 columns reads 32 contiguous
// bytes of each row, the next row one pitch (K x 2 bytes) further, so a warp's 16-byte
// loads touch a new 128-byte line every two threads. The grid fills all SMs; linear
// vector j of a pass (j = thread + step, masked to the footprint of n_vec vectors, a power
// of two, L2-resident) is mapped to segment r = j >> seg_shift, vector c = j & (2^seg_shift
// - 1) of it, and read at row (r mod R) of a 2^pitch_shift-vector pitch (R = n_vec /
// pitch), column ((r div R) << seg_shift) + c: a bijection of the footprint, so each pass
// reads every vector once, in segments of 2^seg_shift vectors that start a pitch apart.
// seg_shift = pitch_shift reads the footprint in order (the contiguous reference).
// Same loads, unroll and rotation as `l2_read`; bytes = passes x steps x threads x
// L2_UNROLL x 16.
extern "C" __global__ void __launch_bounds__(512)
l2_read_rows(const uint4* __restrict__ buf, u32 n_vec, u32 seg_shift, u32 pitch_shift,
             u32 passes, u32* sink) {
    const u32 rows_shift = (31u - (u32)__clz(n_vec)) - pitch_shift;
    const u32 acc = origami_stream_xor<L2_UNROLL>(
        buf, n_vec, passes, OrigamiRowVector{seg_shift, pitch_shift, rows_shift});
    if (acc == 0x9e3779b9u) sink[(blockIdx.x * blockDim.x + threadIdx.x) & 1023u] = acc;
}

// The same reads as the GEMM kernels copy: `cp.async.cg.shared.global` of 16 bytes into a
// block's shared memory (256 threads, two groups of L2_UNROLL slots per thread: a step's
// copies are committed as a group and the previous step's group is waited for, so up to
// 2 x L2_UNROLL copies are in flight per thread). Needs sm_80 or later; dynamic shared
// memory of blockDim x 2 x L2_UNROLL x 16 bytes.
extern "C" __global__ void __launch_bounds__(256)
l2_cp_rows(const uint4* __restrict__ buf, u32 n_vec, u32 seg_shift, u32 pitch_shift,
           u32 passes, u32* sink) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    extern __shared__ uint4 slots[];
    const u32 mask = n_vec - 1;
    const u32 rows_shift = (31u - (u32)__clz(n_vec)) - pitch_shift;
    const u32 nthreads = gridDim.x * blockDim.x;
    const u32 tid = blockIdx.x * blockDim.x + threadIdx.x;
    u32 step = 0;
    for (u32 p = 0; p < passes; ++p) {
        const u32 base = tid + p * (blockDim.x * 5u);
        for (u32 i = 0; i < n_vec; i += nthreads * L2_UNROLL, ++step) {
            const u32 half = (step & 1u) * L2_UNROLL;
#pragma unroll
            for (int u = 0; u < L2_UNROLL; ++u) {
                const u32 j = (base + i + (u32)u * nthreads) & mask;
                const uint4* src = buf + origami_row_vector(j, seg_shift, pitch_shift, rows_shift);
                const u32 dst = (u32)__cvta_generic_to_shared(
                    &slots[(half + (u32)u) * blockDim.x + threadIdx.x]);
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src)
                             : "memory");
            }
            asm volatile("cp.async.commit_group;" ::: "memory");
            asm volatile("cp.async.wait_group 1;" ::: "memory");
        }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    if (slots[threadIdx.x].x == 0x9e3779b9u) sink[tid & 1023u] = 1u;
#else
    if (threadIdx.x == 0 && blockIdx.x == 0) sink[0] = 0u;
#endif
}
