// Fixed cost of one GEMM K-loop iteration without its MMAs (origami-calibrate, metrics
// `kloop_cycles_per_iter_w{4,8}_s{2..5}`, curves `kloop_cycles_vs_stages_w{4,8}`).
//
// One block of blockDim threads (4 or 8 warps) runs the main loop of a multistage
// cp.async GEMM (the shape of CUTLASS's sm80 multistage mainloop) on a ring of STAGES
// shared-memory stages of blockDim x 16 bytes, one 16-byte cp.async per thread per stage:
//   prologue: issue stages 0 .. STAGES-2, one commit group each;
//   iteration k: cp.async.wait_group STAGES-2 (stage k has landed);  bar.sync;
//                address of tile k + STAGES - 1 (wrapping over an L2-resident buffer) and
//                its cp.async.cg into the slot read in iteration k - 1;  commit;
//                ldmatrix.x4 of the warp's fragment from stage k (the 512 bytes that the
//                next warp copied, so the data crosses warps through the barrier);
//                fold it into a register.
// Thread 0 reads clock64 around the loop; the host runs N and 2N iterations and takes
// (cycles(2N) - cycles(N)) / N, which removes the prologue, the clock reads and the drain.
// A single block runs on an otherwise idle GPU, so the figure is the loop's own cost:
// barrier, address arithmetic, issue of the copy and the fragment load, and whatever L2
// latency STAGES - 1 copies in flight do not hide (the host fits a + b / (STAGES - 1)
// over the stages; `fit_stage_curve` in src/calibrate/bench_extra.rs).
//
// Below sm_80 (no cp.async) the copy is a plain synchronous load and store.
#include "common.cuh"

__device__ __forceinline__ void kl_copy16(u32 dst, const uint4* src) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
#else
    const uint4 v = origami_ld_cg(src);
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(dst), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
#endif
}

__device__ __forceinline__ void kl_commit() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void kl_wait() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

__device__ __forceinline__ void kl_fragment(u32 addr, uint4& v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
#else
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
#endif
}

// src: tile_mask + 1 tiles of blockDim 16-byte chunks each (a power of two of tiles).
template <int STAGES>
__device__ __forceinline__ void kloop(const uint4* __restrict__ src, u32 tile_mask, u32 iters,
                                      u64* cycles, u32* sink) {
    extern __shared__ uint4 ring[];
    const u32 nthreads = blockDim.x;
    const u32 stage_bytes = nthreads * 16u;
    const u32 ring_base = (u32)__cvta_generic_to_shared(ring);
    const u32 lane = threadIdx.x & 31u;
    const u32 nwarps = nthreads >> 5;
    const u32 warp = threadIdx.x >> 5;
    const u32 my_dst = threadIdx.x * 16u;
    const u32 my_frag = (((warp + 1u) % nwarps) * 32u + lane) * 16u;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        kl_copy16(ring_base + (u32)s * stage_bytes + my_dst,
                  src + ((u32)s & tile_mask) * nthreads + threadIdx.x);
        kl_commit();
    }
    u32 read_slot = 0;
    u32 write_slot = STAGES - 1;
    u32 next_tile = STAGES - 1;
    u32 acc = 0;
    __syncthreads();
    const i64 t0 = clock64();
#pragma unroll 1
    for (u32 k = 0; k < iters; ++k) {
        kl_wait<STAGES - 2>();
        __syncthreads();
        kl_copy16(ring_base + write_slot * stage_bytes + my_dst,
                  src + (next_tile & tile_mask) * nthreads + threadIdx.x);
        kl_commit();
        uint4 v;
        kl_fragment(ring_base + read_slot * stage_bytes + my_frag, v);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
        read_slot = read_slot + 1u == (u32)STAGES ? 0u : read_slot + 1u;
        write_slot = write_slot + 1u == (u32)STAGES ? 0u : write_slot + 1u;
        ++next_tile;
    }
    const i64 t1 = clock64();
    kl_wait<0>();
    if (threadIdx.x == 0) cycles[0] = (u64)(t1 - t0);
    if (acc == 0x9e3779b9u) sink[threadIdx.x & 1023u] = acc;
}

#define KLOOP_KERNEL(S)                                                                        \
    extern "C" __global__ void __launch_bounds__(256)                                          \
    kloop_s##S(const uint4* __restrict__ src, u32 tile_mask, u32 iters, u64* cycles,           \
               u32* sink) {                                                                    \
        kloop<S>(src, tile_mask, iters, cycles, sink);                                         \
    }

KLOOP_KERNEL(2)
KLOOP_KERNEL(3)
KLOOP_KERNEL(4)
KLOOP_KERNEL(5)
