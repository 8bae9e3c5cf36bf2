// TMA load latency and throughput (origami-calibrate, `--only tma` on compute capability
// 9.0: metrics `tma_latency_{l2,dram}_cycles`, `tma_{l2,dram}_bytes_per_cycle_per_sm`,
// `tma_{l2,dram}_gbps`). sm_90a only (compiled for the arch-specific target, as the Hopper
// GEMM is; cp.async.bulk.tensor and mbarrier expect_tx exist from sm_90).
//
// The loads are the Hopper GEMM's (csrc/hopper_gemm.cu): `cp.async.bulk.tensor.2d` of a
// 64-row x 64-element fp16 box (64 rows of 128 bytes, 8 KiB, 128-byte swizzle) into
// shared memory, completing on an mbarrier armed with `mbarrier.arrive.expect_tx` for the
// box's bytes. The tensor map is made by the host (cuTensorMapEncodeTiled, origami's
// gpu::tma) over a row-major matrix whose rows are `boxes_x` boxes wide, and passed by
// value as a __grid_constant__ parameter. Box b of the matrix is at element column
// (b % boxes_x) * 64, row (b / boxes_x) * 64.
//
//  * tma_latency: one thread of one CTA, pinned to the SM `target_smid` (the first block
//    that lands there claims the work; the others exit), issues one load at a time and
//    waits for its barrier: clock64 from before the arrive.expect_tx to after the wait
//    returns. Boxes start + i * stride (mod boxes_total); the first `warm` are not counted.
//    out = {sum of cycles, min, max, loads counted, %smid}.
//  * tma_stream: one thread per CTA keeps `stages` loads in flight in a ring of boxes
//    (a stage is reused once its barrier completed); CTA c loads boxes c * cta_stride + j
//    (mod boxes_total), j < per_cta (DRAM: cta_stride = per_cta, every box once; L2: a
//    small stride, so the CTAs do not all read the same box at the same time). cycles[c] = clock64 from the first issue to the last
//    completion; block 0 records clock64 / %globaltimer (the SM clock during the run).
#include "common.cuh"
#include "hopper_ptx.cuh"

// A CUtensorMap's 128 bytes (declared here: NVRTC has no cuda.h).
struct __align__(64) TmaMap {
    u64 opaque[16];
};

#define TMA_BOX_BYTES 8192u

namespace tma_load_detail {

using namespace hopper_ptx;

__device__ __forceinline__ void load_box(u32 dst, const TmaMap* map, u32 b, u32 boxes_x,
                                         u32 bar) {
    const int c0 = static_cast<int>((b % boxes_x) * 64u);
    const int c1 = static_cast<int>((b / boxes_x) * 64u);
    tma_load_2d(dst, map, c0, c1, bar);
}

// The 1024-byte aligned start of the dynamic shared memory (the 128B swizzle's atom).
__device__ __forceinline__ u32 ring_base(const unsigned char* raw) {
    return (smem_u32(raw) + 1023u) & ~1023u;
}

}  // namespace tma_load_detail

// Launch: grid >= 2 x SMs blocks of 32 threads; dynamic shared memory >= 1024 + 8192 + 8.
extern "C" __global__ void tma_latency(const __grid_constant__ TmaMap map, u32 boxes_x,
                                       u32 boxes_total, u32 start, u32 stride, u32 warm,
                                       u32 count, u32 target_smid, u32* claim, u64* out) {
    using namespace tma_load_detail;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    if (threadIdx.x != 0) return;
    const u32 smid = origami_smid();
    if (smid != target_smid) return;
    if (atomicAdd(claim, 1u) != 0u) return;
    const u32 box = ring_base(smem_raw);
    const u32 bar = box + TMA_BOX_BYTES;
    mbar_init(bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(&map)) : "memory");
    u32 parity = 0;
    u64 sum = 0, mn = ~0ull, mx = 0;
    for (u32 i = 0; i < warm + count; ++i) {
        const u32 b = static_cast<u32>((static_cast<u64>(start) + static_cast<u64>(i) * stride) %
                                       boxes_total);
        const i64 t0 = clock64();
        mbar_expect_tx(bar, TMA_BOX_BYTES);
        load_box(box, &map, b, boxes_x, bar);
        mbar_wait(bar, parity);
        const i64 t1 = clock64();
        parity ^= 1u;
        if (i >= warm) {
            const u64 c = static_cast<u64>(t1 - t0);
            sum += c;
            mn = c < mn ? c : mn;
            mx = c > mx ? c : mx;
        }
    }
    out[0] = sum;
    out[1] = mn;
    out[2] = mx;
    out[3] = count;
    out[4] = smid;
}

// Launch: grid = SMs (one CTA per SM: the host asks for more than half of the SM's shared
// memory), 32 threads; dynamic shared memory >= 1024 + stages x (8192 + 8).
extern "C" __global__ void tma_stream(const __grid_constant__ TmaMap map, u32 boxes_x,
                                      u32 boxes_total, u32 per_cta, u32 cta_stride,
                                      u32 stages, u64* cycles, u64* rec) {
    using namespace tma_load_detail;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    if (threadIdx.x != 0) return;
    OrigamiClockRec clk;
    if (blockIdx.x == 0) clk.start();
    const u32 ring = ring_base(smem_raw);
    const u32 bars = ring + stages * TMA_BOX_BYTES;
    for (u32 s = 0; s < stages; ++s) mbar_init(bars + 8u * s, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(&map)) : "memory");
    const u64 first = static_cast<u64>(blockIdx.x) * cta_stride;
    const i64 t0 = clock64();
    for (u32 j = 0; j < per_cta; ++j) {
        const u32 s = j % stages;
        // the stage's previous load (j - stages) completed phase (j / stages - 1)
        if (j >= stages) mbar_wait(bars + 8u * s, (j / stages - 1u) & 1u);
        mbar_expect_tx(bars + 8u * s, TMA_BOX_BYTES);
        load_box(ring + s * TMA_BOX_BYTES, &map, static_cast<u32>((first + j) % boxes_total),
                 boxes_x, bars + 8u * s);
    }
    // drain: the last min(stages, per_cta) loads
    const u32 tail = per_cta < stages ? per_cta : stages;
    for (u32 j = per_cta - tail; j < per_cta; ++j) mbar_wait(bars + 8u * (j % stages), (j / stages) & 1u);
    const i64 t1 = clock64();
    cycles[blockIdx.x] = static_cast<u64>(t1 - t0);
    if (blockIdx.x == 0) clk.stop(rec);
}
