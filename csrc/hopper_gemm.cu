// origami Hopper GEMM kernel family: C[M,N] = A[M,K] * B[N,K]^T on sm_90a.
//
// The layout of the mma.sync family (csrc/gemm.cu): fp16 or bf16 inputs, fp32
// accumulation, output in the input type; A row-major M x K and B stored N x K (both
// K-contiguous), C row-major M x N. M and N are free; K must give 16-byte row pitches
// (K % 8 == 0), which the tensor maps need.
//
// Configuration by preprocessor defines (one compile per config, NVRTC or nvcc, target
// sm_90a: wgmma and setmaxnreg exist only there):
//
//   -DHG_BM=128 -DHG_BN=256 -DHG_BK=64 -DHG_STAGES=4 -DHG_CONSUMERS=2   [-DHG_BF16]
//   [-DHG_STREAM_K=1]   (an instance that can run Stream-K; see below)
//
// Kernel (fixed symbol):
//
//   extern "C" __global__ void origami_hopper_gemm(
//       const __grid_constant__ HgTmaDesc tma_a,   // A: dims {K, M}, box {BK, BM}, 128B swizzle
//       const __grid_constant__ HgTmaDesc tma_b,   // B: dims {K, N}, box {BK, BN}, 128B swizzle
//       const __grid_constant__ HgTmaDesc tma_c,   // C: dims {N, M}, box {HG_CW, 64},
//                                                  //    swizzle HG_CW * 2 bytes
//       unsigned short* C, int M, int N, int K, int group_m, int c_by_tma,
//       int k_per_split, float* workspace, int stream_k, int pair_n, int c_trans)
//
// The tensor maps are made by the host with cuTensorMapEncodeTiled (16-bit elements,
// interleave none, out-of-bounds fill zero); this file only reads them. C's map is used
// when c_by_tma is 1 (it needs N % 8 == 0: 16-byte row pitches); with 0 the epilogue
// stores C from registers and tma_c is not read.
//
// Split-K (k_per_split < ceil(K / BK)): the work is every tile's K tiles in runs of
// k_per_split (splits = ceil(K tiles / k_per_split), each run non-empty), the splits of a
// tile next to each other in the persistent order; each run writes its fp32 partial tile
// to workspace[split][M][N] (splits * M * N floats) and C is written by
//
//   extern "C" __global__ void origami_hopper_splitk_reduce(const float* workspace,
//       unsigned short* C, int M, int N, int splits)
//
// launched after it on the same stream (any grid; 256 threads a block), which adds the
// slices in split order: the result does not depend on timing (deterministic).
//
// Stream-K (stream_k == 1, an instance built with -DHG_STREAM_K=1; grid = min(SMs, tiles x
// K tiles)): whole tiles in rounds of the grid but for the last two rounds, whose K
// iterations go in one even range per CTA (WorkIter below), each range's pieces taken
// from its last tile back to its first, so every CTA starts at K tile 0 as the whole
// tiles do (the CTAs stay in step along K and share A's and B's K tiles in L2); a tile
// shared by CTAs is finished by the one holding its last K iteration, which adds the
// earlier CTAs' fp32 partial tiles in CTA order (deterministic). The workspace holds a
// BM x BN float slot per CTA, then one 32-bit flag per CTA, zero before the first launch
// (each launch leaves them zero). Every CTA must be resident at once (one per SM).
//
// Swapped operands (c_trans == 1): the host computes C^T = B A^T, passing B's map as
// tma_a, A's as tma_b, and M and N exchanged, so the kernel's M x N result is the user's
// C transposed; every store of C then goes to C[col][row] (leading dimension M, the
// kernel's M being the user's N): TMA stores through tma_c made for the user's C (dims
// {M, N} in the kernel's terms, box {64, HG_CW}, 128B swizzle) from chunks laid out
// column by column, the register path element by element, split-K's partial tiles in the
// same transposed order (so the reduction, which adds slices element by element, writes
// the user's C). What it is for: a problem with few rows (333 x 4096) gets its rows on
// wgmma's N, in steps of 16, instead of padding them to 64-row multiples.
//
// HG_CW (64, 32 or 16: the widest that divides BN) is exported as
// origami_hopper_gemm_c_box_cols.
// Launch: grid = (min(SMs, work items), 1, 1), block = ((HG_CONSUMERS + 1) * 128, 1, 1),
// dynamic shared memory = HG_SMEM_BYTES (exported as origami_hopper_gemm_smem_bytes),
// above 48 KiB only after the function's MAX_DYNAMIC_SHARED_SIZE_BYTES is raised.
//
// Design (this project's; after the structure public Hopper GEMM write-ups describe:
// the CUDA C++ Programming Guide's sections on the Tensor Memory Accelerator and
// asynchronous barriers, the PTX ISA for wgmma, cp.async.bulk.tensor, mbarrier and
// setmaxnreg):
//   * persistent: each CTA walks the tiles blockIdx.x, blockIdx.x + gridDim.x, ... in
//     Triton's grouped order (GROUP_SIZE_M = group_m);
//   * warpgroup 0 is the producer: one thread issues, per K tile, the two TMA copies of
//     A's and B's boxes into a HG_STAGES-deep ring in shared memory, each stage guarded
//     by a `full` barrier (expect_tx of the stage's bytes; the copy engine completes it)
//     and an `empty` barrier (one arrival per consumer warpgroup); it lowers its register
//     budget to 40 with setmaxnreg;
//   * warpgroups 1..HG_CONSUMERS are consumers: each owns BM / HG_CONSUMERS rows of the
//     tile, raises its register budget, waits on `full`, issues BK / 16 wgmma.mma_async
//     m64nBNk16 per 64 rows from 128B-swizzled shared-memory descriptors, keeps one
//     K tile of wgmma in flight (wait_group 1) and frees the previous stage;
//   * epilogue: each consumer converts its accumulators into 64 x HG_CW chunks in shared
//     memory with stmatrix (two buffers per consumer, laid out in the swizzle the TMA
//     store expects, so the writes are free of bank conflicts) and one thread stores each
//     chunk with a TMA bulk tensor store, which clips at M and N; the next chunk is written
//     while the last one is in flight. Without C's map, the accumulators go to C from
//     registers. The producer already loads the next tile meanwhile.

#ifndef HG_BM
#define HG_BM 128
#endif
#ifndef HG_BN
#define HG_BN 256
#endif
#ifndef HG_BK
#define HG_BK 64
#endif
#ifndef HG_STAGES
#define HG_STAGES 4
#endif
#ifndef HG_CONSUMERS
#define HG_CONSUMERS 2
#endif
#ifndef HG_CW
#if HG_BN % 64 == 0
#define HG_CW 64
#elif HG_BN % 32 == 0
#define HG_CW 32
#else
#define HG_CW 16
#endif
#endif
#ifdef HG_BF16
#define HG_IS_BF16 true
#else
#define HG_IS_BF16 false
#endif
// Stream-K's hand-over is compiled only into instances built with -DHG_STREAM_K=1 (its
// fix-up holds more registers live: without it the plain and split-K instances keep
// their registers); elsewhere the stream_k argument is ignored.
#ifndef HG_STREAM_K
#define HG_STREAM_K 0
#endif

// Clusters (HG_CLUSTER 2: an instance whose CTAs run in pairs, `__cluster_dims__(2, 1, 1)`):
// with pair_n == 0 the two CTAs of a cluster take the two tiles of one 2 BM x BN pair, rows
// tm = 2 tp and 2 tp + 1 of the same column tn, which share B's BN x BK slice of every K
// tile. Each CTA's producer loads its own A box and half of B's (BN / 2 rows: tma_b's box
// must have BN / 2 rows) and multicasts that half into both CTAs' stage at the same offset,
// completing on both CTAs' `full` barrier (each expects A + all of B: the peer's half
// arrives through the peer's copy). With pair_n == 1 the roles of A and B swap: the pair
// takes columns tn = 2 tp and 2 tp + 1 of one row, which share A's BM x BK slice; each CTA
// loads its own B box and half of A's (tma_a's box has BM / 2 rows) and multicasts it (the
// host picks the direction that leaves the fewer pairs: 33 x 4 tiles pair into 33 x 2 along
// N but 17 x 4 along M). A stage is refilled only when the consumers of both CTAs freed it: each
// consumer arrives on the `empty` barrier of both CTAs (CONSUMERS x 2 arrivals). The pairs
// walk the grid in the grouped order over pair rows; the grid (even) is the number of
// CTAs; split-K and Stream-K are not combined with it (k_per_split and stream_k ignored).
// Both CTAs end together (a cluster barrier) so that no copy or arrival targets a CTA that
// left. L2 reads of B per CTA halve; what it costs: the pair's slower CTA sets the pace.
#ifndef HG_CLUSTER
#define HG_CLUSTER 1
#endif

#include "hopper_ptx.cuh"
#include "hopper_wgmma.cuh"

// A CUtensorMap's 128 bytes (cuda.h's type, declared here so that NVRTC needs no header).
struct __align__(64) HgTmaDesc {
  unsigned long long opaque[16];
};

namespace hopper_gemm_detail {

typedef unsigned short elem_t;
typedef unsigned int u32;
typedef unsigned long long u64;

constexpr int BM = HG_BM, BN = HG_BN, BK = HG_BK, STAGES = HG_STAGES;
constexpr int CONSUMERS = HG_CONSUMERS;
constexpr int THREADS = (CONSUMERS + 1) * 128;
constexpr int WG_ROWS = BM / CONSUMERS;      // rows of the tile per consumer warpgroup
constexpr int MI = WG_ROWS / 64;             // m64 blocks per consumer warpgroup
constexpr int ACC = BN / 2;                  // accumulators per thread per m64 block
constexpr int A_STAGE = BM * BK * 2;         // bytes
constexpr int B_STAGE = BN * BK * 2;
constexpr int STAGE_BYTES = A_STAGE + B_STAGE;
constexpr int CW = HG_CW;                    // columns of one epilogue chunk
constexpr int CHUNK_BYTES = 64 * CW * 2;     // one 64-row chunk of C
constexpr int EPI_BYTES = CONSUMERS * 2 * CHUNK_BYTES;
constexpr u32 C_SWIZZLE_MASK = CW == 64 ? 7 : (CW == 32 ? 3 : 1);
constexpr int CLUSTER = HG_CLUSTER;
constexpr int B_PART = B_STAGE / CLUSTER;    // bytes of B each CTA of a cluster loads
constexpr int A_PART = A_STAGE / CLUSTER;    // bytes of A each CTA loads when pairs share A
constexpr int CONSUMER_REGS = CONSUMERS == 1 ? 240 : 232;
constexpr int PRODUCER_REGS = 40;

static_assert(BK == 64, "one 128-byte swizzle atom per row: BK = 64 16-bit elements");
static_assert(BM % (64 * CONSUMERS) == 0, "BM must be a multiple of 64 per consumer");
static_assert(BN % 16 == 0 && BN >= 16 && BN <= 256, "BN in 16..256, a multiple of 16");
static_assert(BM <= 256, "a TMA box holds at most 256 rows");
static_assert(CONSUMERS == 1 || CONSUMERS == 2, "one or two consumer warpgroups");
static_assert(CLUSTER == 1 || CLUSTER == 2, "clusters of one or two CTAs");
static_assert(B_PART % 1024 == 0, "each CTA's part of B keeps whole swizzle atoms");
static_assert(A_PART % 1024 == 0, "each CTA's part of A keeps whole swizzle atoms");
static_assert(MI * ACC <= 128 + 64 * (CONSUMERS == 1), "accumulators must fit the registers");
static_assert(A_STAGE % 1024 == 0 && B_STAGE % 1024 == 0, "stages stay 1024-byte aligned");
static_assert(BN % CW == 0 && (CW == 64 || CW == 32 || CW == 16), "C chunks split BN");
static_assert(STAGES * STAGE_BYTES + EPI_BYTES + 1024 + 16 * STAGES <= 232448,
              "shared memory over the 227 KiB a Hopper block can have");

// Two floats stored or loaded as one 8-byte access (no header needed under NVRTC).
struct __align__(8) F2 {
  float x, y;
};

using namespace hopper_ptx;

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

__device__ __forceinline__ void tma_store_2d(const HgTmaDesc* map, int c0, int c1, u32 src) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
          reinterpret_cast<u64>(map)),
      "r"(c0), "r"(c1), "r"(src)
      : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Wait until at most one bulk store of this thread still reads shared memory.
__device__ __forceinline__ void tma_store_wait_read1() {
  asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
}
__device__ __forceinline__ void tma_store_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// The 128 threads of consumer warpgroup c meet (named barrier 1 + c; 0 is __syncthreads).
__device__ __forceinline__ void consumer_sync(int c) {
  asm volatile("bar.sync %0, 128;" ::"r"(1 + c) : "memory");
}

// stmatrix: four 8x8 16-bit matrices from the warp's fragments (a lane holds row lane / 4,
// columns 2 (lane % 4) and the next of each, as wgmma's accumulators do) to the shared
// memory rows lanes 8m..8m+7 name for matrix m; `.trans` writes each matrix transposed.
__device__ __forceinline__ void stmatrix_x4(u32 addr, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

__device__ __forceinline__ void stmatrix_x4_trans(u32 addr, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                   addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

__device__ __forceinline__ u32 pack2(float lo, float hi) {
  u32 r;
  if (HG_IS_BF16) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  }
  return r;
}

// Triton's grouped order: the tile's (row, column) for linear index t.
__device__ __forceinline__ void tile_coords(int t, int grid_m, int grid_n, int group_m,
                                            int& tm, int& tn) {
  const int g = group_m < 1 ? 1 : group_m;
  const int width = g * grid_n;
  const int group_id = t / width;
  const int first_m = group_id * g;
  const int gsz = min(grid_m - first_m, g);
  const int r = t % width;
  tm = first_m + r % gsz;
  tn = r / gsz;
}

// This CTA's rank in its cluster.
__device__ __forceinline__ u32 cluster_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster (release / acquire).
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Arrive on the mbarrier at shared offset `bar` of the cluster's CTA `rank`. The default
// semantics (release at CTA scope): a cluster-scope release made each arrival wait for the
// consumer's wgmma still in flight, which halved the clustered kernel's speed.
__device__ __forceinline__ void mbar_arrive_rank(u32 bar, u32 rank) {
  u32 remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(bar), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// A consumer frees stage `bar`'s slot: on its own CTA's barrier, and with clusters on the
// other CTAs' too (their producers multicast into this CTA's stage).
__device__ __forceinline__ void release_stage(u32 bar, u32 rank) {
  mbar_arrive(bar);
#pragma unroll
  for (int r = 0; r < CLUSTER; ++r) {
    if (r != static_cast<int>(rank)) mbar_arrive_rank(bar, r);
  }
}

// One box of a 2-D tensor map into shared offset `dst` of every CTA in `mask`, completing
// on the mbarrier at offset `bar` of each.
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst, const void* map, int c0, int c1,
                                                      u32 bar, unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
}

// The consumer warpgroups together (named barrier 1 + CONSUMERS): Stream-K's hand-over.
__device__ __forceinline__ void consumers_sync() {
  asm volatile("bar.sync %0, %1;" ::"r"(1 + CONSUMERS), "r"(CONSUMERS * 128) : "memory");
}

__device__ __forceinline__ void st_release_u32(u32* p, u32 v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Two floats from L2 (past L1, which may hold another CTA's stale lines).
__device__ __forceinline__ F2 ld_cg_f2(const float* p) {
  F2 v;
  asm volatile("ld.global.cg.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ u32 ld_acquire_u32(const u32* p) {
  u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// A CTA's work, in order: segments (a tile, a run of its K tiles [kt0, kt1)).
//  * tiles or split-K (stream_k == 0): work items blockIdx.x, + gridDim.x, ... of
//    tiles * splits; item w is run w % splits of tile w / splits (runs of k_per_split).
//  * Stream-K (stream_k == 1): whole tiles first, in rounds of gridDim.x as above, for
//    all but the last two rounds (the data-parallel tiles, sk_first of them: the rounds
//    keep their tiles together in the grouped order, as the plain grid does); then the
//    rest's iterations (the last partial round and one whole round: between one and two
//    tiles a CTA), tile-major, cut into gridDim.x contiguous ranges as even as whole
//    iterations allow; a range's segments are the pieces of it within one tile, taken
//    from the range's last to its first. With fewer tiles than CTAs every tile is in the
//    ranges; with a whole number of rounds, none is. A piece that ends before the tile's
//    last K tile (the head of the range's last tile, or a range inside one tile) is a
//    contributor: at most one per CTA, always its first segment, so no CTA waits before
//    contributing; the piece that holds a tile's last K tile but not its first (the
//    range's first piece, its CTA's last segment) finishes the tile: it adds the partial
//    tiles of the earlier CTAs that hold the tile's other pieces and stores C.
struct WorkIter {
  int tiles, k_tiles, splits, k_per_split, stream_k;
  long long next_w, end, step, sk_first, next_t;

  __device__ void begin(int tiles_, int k_tiles_, int splits_, int k_per_split_, int stream_k_) {
    tiles = tiles_;
    k_tiles = k_tiles_;
    splits = splits_;
    k_per_split = k_per_split_;
    stream_k = stream_k_;
    if (stream_k) {
      sk_first = stream_k_first_tile(tiles, gridDim.x);
      next_t = blockIdx.x;
      next_w = range_start(blockIdx.x);
      end = range_start(blockIdx.x + 1);
    } else {
      // with clusters, a work item is a pair tile and both CTAs of a cluster take it
      next_w = blockIdx.x / CLUSTER;
      step = gridDim.x / CLUSTER;
      end = static_cast<long long>(tiles) * splits;
    }
  }

  // The first tile of the Stream-K ranges: all tiles but the last partial round and one
  // whole round before it (0 with fewer than two rounds; all of them with whole rounds).
  __device__ static long long stream_k_first_tile(long long tiles, long long g) {
    if (tiles % g == 0) return tiles;
    return tiles / g >= 1 ? (tiles / g - 1) * g : 0;
  }

  // First iteration of CTA c's Stream-K range (an iteration of the whole launch).
  __device__ long long range_start(long long c) const {
    const long long first = sk_first * k_tiles;
    const long long total = static_cast<long long>(tiles) * k_tiles - first;
    const long long g = gridDim.x;
    return first + c * (total / g) + min(c, total % g);
  }

  __device__ bool next(int& t, int& kt0, int& kt1, int& run) {
    if (stream_k && next_t < sk_first) {
      t = static_cast<int>(next_t);
      kt0 = 0;
      kt1 = k_tiles;
      run = 0;
      next_t += gridDim.x;
      return true;
    }
    if (stream_k) {
      // the range's pieces from its last to its first (`end` moves down to `next_w`):
      // every range that holds a tile's first K tile starts there, so the CTAs begin
      // their ranges at K tile 0 together, as whole tiles do, and a tile's earlier pieces
      // come first in their CTAs
      if (end <= next_w) return false;
      const long long last = end - 1;
      t = static_cast<int>(last / k_tiles);
      const long long tile_start = static_cast<long long>(t) * k_tiles;
      const long long piece_start = max(next_w, tile_start);
      kt0 = static_cast<int>(piece_start - tile_start);
      kt1 = static_cast<int>(end - tile_start);
      run = 0;
      end = piece_start;
      return true;
    }
    if (next_w >= end) return false;
    t = static_cast<int>(next_w / splits);
    run = static_cast<int>(next_w % splits);
    kt0 = run * k_per_split;
    kt1 = min(kt0 + k_per_split, k_tiles);
    next_w += step;
    return true;
  }
};

}  // namespace hopper_gemm_detail

extern "C" __device__ const int origami_hopper_gemm_smem_bytes =
    hopper_gemm_detail::STAGES * hopper_gemm_detail::STAGE_BYTES +
    hopper_gemm_detail::EPI_BYTES + 1024 + 2 * 8 * HG_STAGES;
extern "C" __device__ const int origami_hopper_gemm_c_box_cols = HG_CW;
extern "C" __device__ const int origami_hopper_gemm_threads = hopper_gemm_detail::THREADS;

extern "C" __global__ void __launch_bounds__(hopper_gemm_detail::THREADS, 1)
#if HG_CLUSTER > 1
    __cluster_dims__(HG_CLUSTER, 1, 1)
#endif
    origami_hopper_gemm(const __grid_constant__ HgTmaDesc tma_a,
                        const __grid_constant__ HgTmaDesc tma_b,
                        const __grid_constant__ HgTmaDesc tma_c, unsigned short* C, int M,
                        int N, int K, int group_m, int c_by_tma, int k_per_split,
                        float* workspace, int stream_k, int pair_n, int c_trans) {
  using namespace hopper_gemm_detail;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // the ring starts at the first 1024-byte boundary (the swizzle's atom)
  const u32 raw = smem_u32(smem_raw);
  const u32 ring = (raw + 1023u) & ~1023u;
  const u32 epi = ring + STAGES * STAGE_BYTES;   // C chunks: [consumer][2]
  const u32 bars = epi + EPI_BYTES;              // full[STAGES] then empty[STAGES]
  auto a_stage = [&](int s) { return ring + s * STAGE_BYTES; };
  auto b_stage = [&](int s) { return ring + s * STAGE_BYTES + A_STAGE; };
  auto full_bar = [&](int s) { return bars + 8 * s; };
  auto empty_bar = [&](int s) { return bars + 8 * (STAGES + s); };

  const int wg = threadIdx.x / 128;
  const int grid_m = (M + BM - 1) / BM;
  const int grid_n = (N + BN - 1) / BN;
  // with clusters the work is over pair rows (tile row tm = CLUSTER x pair row + rank) or,
  // with pair_n, pair columns (tn = CLUSTER x pair column + rank)
  if (CLUSTER == 1) pair_n = 0;
  const int grid_mc = pair_n ? grid_m : (grid_m + CLUSTER - 1) / CLUSTER;
  const int grid_nc = pair_n ? (grid_n + CLUSTER - 1) / CLUSTER : grid_n;
  const int tiles = grid_mc * grid_nc;
  const int k_tiles = (K + BK - 1) / BK;
  const int rank = CLUSTER > 1 ? static_cast<int>(cluster_rank()) : 0;
  // split-K: each tile's K tiles in runs of k_per_split, every run non-empty
  if (!HG_STREAM_K || CLUSTER > 1) stream_k = 0;
  if (CLUSTER > 1) k_per_split = k_tiles;
  if (stream_k || k_per_split < 1 || k_per_split > k_tiles) k_per_split = k_tiles;
  const int splits = (k_tiles + k_per_split - 1) / k_per_split;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full_bar(s), 1);
      mbar_init(empty_bar(s), CONSUMERS * CLUSTER);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  // the peer's barriers must be initialized before any copy or arrival reaches them
  if (CLUSTER > 1) {
    cluster_sync_all();
  } else {
    __syncthreads();
  }

  if (wg == 0) {
    // Producer.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(PRODUCER_REGS));
    if (threadIdx.x == 0) {
      asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(&tma_a)) : "memory");
      asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(&tma_b)) : "memory");
      int s = 0;
      u32 phase = 0;
      WorkIter work;
      work.begin(tiles, k_tiles, splits, k_per_split, stream_k);
      int t, kt0, kt1, sp;
      while (work.next(t, kt0, kt1, sp)) {
        int tm, tn;
        tile_coords(t, grid_mc, grid_nc, group_m, tm, tn);
        if (pair_n) {
          tn = tn * CLUSTER + rank;
        } else {
          tm = tm * CLUSTER + rank;
        }
        const unsigned short both = static_cast<unsigned short>((1u << CLUSTER) - 1u);
        for (int kt = kt0; kt < kt1; ++kt) {
          mbar_wait(empty_bar(s), phase ^ 1u);
          mbar_expect_tx(full_bar(s), STAGE_BYTES);
          if (CLUSTER == 1) {
            tma_load_2d(a_stage(s), &tma_a, kt * BK, tm * BM, full_bar(s));
            tma_load_2d(b_stage(s), &tma_b, kt * BK, tn * BN, full_bar(s));
          } else if (pair_n) {
            tma_load_2d_multicast(a_stage(s) + rank * A_PART, &tma_a, kt * BK,
                                  tm * BM + rank * (BM / CLUSTER), full_bar(s), both);
            tma_load_2d(b_stage(s), &tma_b, kt * BK, tn * BN, full_bar(s));
          } else {
            tma_load_2d(a_stage(s), &tma_a, kt * BK, tm * BM, full_bar(s));
            tma_load_2d_multicast(b_stage(s) + rank * B_PART, &tma_b, kt * BK,
                                  tn * BN + rank * (BN / CLUSTER), full_bar(s), both);
          }
          if (++s == STAGES) {
            s = 0;
            phase ^= 1u;
          }
        }
      }
    }
  } else {
    // Consumers.
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMER_REGS));
    const int c = wg - 1;
    const int lane = threadIdx.x % 32;
    const int warp = (threadIdx.x / 32) % 4;
    float acc[MI][ACC];
    int s = 0;
    u32 phase = 0;
    u32 chunk = 0;  // epilogue chunks written by this consumer (its buffer: chunk % 2)
    WorkIter work;
    work.begin(tiles, k_tiles, splits, k_per_split, stream_k);
    int t, kt0, kt1, sp;
    while (work.next(t, kt0, kt1, sp)) {
      int tm, tn;
      tile_coords(t, grid_mc, grid_nc, group_m, tm, tn);
      if (pair_n) {
        tn = tn * CLUSTER + rank;
      } else {
        tm = tm * CLUSTER + rank;
      }
      int prev = -1;  // the stage whose wgmma may still be reading
      for (int kt = kt0; kt < kt1; ++kt) {
        mbar_wait(full_bar(s), phase);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          const u64 db = desc_sw128(b_stage(s) + kk * 32);
#pragma unroll
          for (int i = 0; i < MI; ++i) {
            const u64 da = desc_sw128(a_stage(s) + (c * WG_ROWS + i * 64) * 128 + kk * 32);
            Wgmma<BN, HG_IS_BF16>::run(acc[i], da, db, (kt > kt0 || kk > 0) ? 1 : 0);
          }
        }
        wgmma_commit();
        // keep this K tile's wgmma in flight; the previous one is done: free its stage
        wgmma_wait<1>();
        if (prev >= 0 && threadIdx.x % 128 == 0) release_stage(empty_bar(prev), rank);
        prev = s;
        if (++s == STAGES) {
          s = 0;
          phase ^= 1u;
        }
      }
      wgmma_wait<0>();
      if (prev >= 0 && threadIdx.x % 128 == 0) release_stage(empty_bar(prev), rank);

      // Epilogue: accumulator (i, 4 * j + 2 * h + e) of this thread is row
      // 16 * warp + lane / 4 + 8 * h, column 8 * j + 2 * (lane % 4) + e of m64 block i.
      if (HG_STREAM_K && stream_k && (kt0 > 0 || kt1 < k_tiles)) {
        // Stream-K's hand-over, through the workspace: a BM x BN fp32 slot per CTA, then
        // one flag per CTA (zero between launches).
        float* slots = workspace;
        u32* flags = reinterpret_cast<u32*>(workspace + static_cast<long long>(gridDim.x) * BM * BN);
        const int lrow0 = c * WG_ROWS + warp * 16 + lane / 4;
        const int lcol0 = 2 * (lane % 4);
        if (kt1 < k_tiles) {
          // a contributor: this piece of the tile goes to this CTA's slot, then its flag
          float* slot = slots + static_cast<long long>(blockIdx.x) * BM * BN;
#pragma unroll
          for (int i = 0; i < MI; ++i) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              float* srow = slot + (lrow0 + i * 64 + h * 8) * BN;
#pragma unroll
              for (int j = 0; j < BN / 8; ++j) {
                *reinterpret_cast<F2*>(srow + lcol0 + 8 * j) =
                    F2{acc[i][4 * j + 2 * h], acc[i][4 * j + 2 * h + 1]};
              }
            }
          }
          __threadfence();
          consumers_sync();
          if (threadIdx.x == 128) st_release_u32(flags + blockIdx.x, 1u);
          continue;
        }
        // the finisher (the tile's last K tiles): add the earlier CTAs' pieces, from the
        // CTA before this one down to the one holding K tile 0 (descending K order:
        // deterministic), then store C as a whole tile's epilogue does
        const long long tile_start = static_cast<long long>(t) * k_tiles;
        bool more = true;
        for (long long cta = static_cast<long long>(blockIdx.x) - 1; more && cta >= 0; --cta) {
          more = work.range_start(cta) > tile_start;
          if (threadIdx.x == 128) {
            while (ld_acquire_u32(flags + cta) == 0u) {
            }
          }
          consumers_sync();
          const float* slot = slots + cta * BM * BN;
#pragma unroll
          for (int i = 0; i < MI; ++i) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const float* srow = slot + (lrow0 + i * 64 + h * 8) * BN;
#pragma unroll
              for (int j = 0; j < BN / 8; ++j) {
                const F2 v = ld_cg_f2(srow + lcol0 + 8 * j);
                acc[i][4 * j + 2 * h] += v.x;
                acc[i][4 * j + 2 * h + 1] += v.y;
              }
            }
          }
          consumers_sync();
          if (threadIdx.x == 128) flags[cta] = 0u;
        }
      }
      if (splits > 1) {
        // One split of K: its fp32 partial tile goes to workspace slice sp
        // (origami_hopper_splitk_reduce adds the slices in order).
        float* part = workspace + static_cast<long long>(sp) * M * N;
        const int prow0 = tm * BM + c * WG_ROWS + warp * 16 + lane / 4;
        const int pcol0 = tn * BN + 2 * (lane % 4);
#pragma unroll
        for (int i = 0; i < MI; ++i) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = prow0 + i * 64 + h * 8;
            if (row >= M) continue;
            if (c_trans) {
              // the user's layout: element (row, col) at col * M + row
#pragma unroll
              for (int j = 0; j < BN / 8; ++j) {
                const int col = pcol0 + 8 * j;
                if (col < N) part[static_cast<long long>(col) * M + row] = acc[i][4 * j + 2 * h];
                if (col + 1 < N) {
                  part[static_cast<long long>(col + 1) * M + row] = acc[i][4 * j + 2 * h + 1];
                }
              }
              continue;
            }
            float* prow = part + static_cast<long long>(row) * N;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
              const int col = pcol0 + 8 * j;
              if ((N % 2) == 0 && col + 1 < N) {
                *reinterpret_cast<F2*>(prow + col) =
                    F2{acc[i][4 * j + 2 * h], acc[i][4 * j + 2 * h + 1]};
              } else {
                if (col < N) prow[col] = acc[i][4 * j + 2 * h];
                if (col + 1 < N) prow[col + 1] = acc[i][4 * j + 2 * h + 1];
              }
            }
          }
        }
        continue;
      }
      if (c_by_tma) {
        // The accumulators go to the chunk buffers with stmatrix: one instruction stores
        // four 8x8 16-bit matrices, the fragments (j, rows 0-7), (j, rows 8-15), (j + 1,
        // rows 0-7), (j + 1, rows 8-15) of the warp's 16 rows, each lane naming one row of
        // one matrix (lanes 8m..8m+7: matrix m). Each lane's address is fixed for the tile
        // but for a compile-time part, so a store costs a few integer instructions instead
        // of ten for every four bytes (results/h100/hopper/epilogue-probe/).
        const u32 lm = static_cast<u32>(lane) >> 3;  // the matrix this lane addresses
        // column by column (.trans: a matrix's columns become rows of 16 bytes): column
        // (jj + lm / 2) * 8 + lane % 8 of the chunk, 128 bytes a column, 128B swizzle
        // (the column's low three bits flip the 16-byte unit of the rows)
        const u32 trows = (warp * 16 + (lm & 1u) * 8) * 2;
        const u32 tlane = ((lm >> 1) * 8 + (lane & 7)) * 128 + (trows ^ ((lane & 7u) << 4));
        // row by row: row warp * 16 + (lm % 2) * 8 + lane % 8 of the chunk, CW * 2 bytes a
        // row, the swizzle of C's map (128, 64 or 32 bytes: the row's bits above 128 bytes
        // flip the 16-byte unit); unit jj + lm / 2 of the row, jj even, so the unit is
        // jj ^ (lm / 2 ^ the row's swizzle bits)
        const u32 srow = warp * 16 + (lm & 1u) * 8 + (lane & 7);
        const u32 sbase = srow * (CW * 2);
        const u32 sxor = (((sbase >> 7) & C_SWIZZLE_MASK) ^ (lm >> 1)) << 4;
        // Per 64-row slice i and chunk q of CW columns: wait until the chunk buffer's last
        // TMA store has read it, write the fragments (column by column when `trans`, else
        // row by row), make them visible to the async proxy and store the chunk. Called
        // with a literal `trans` in each branch below, so each call is compiled for its
        // layout alone (NVRTC compiles no generic lambda in device code, hence the flag).
        auto chunks = [&](const bool trans) {
#pragma unroll
          for (int i = 0; i < MI; ++i) {
#pragma unroll
            for (int q = 0; q < BN / CW; ++q) {
              const u32 buf = epi + (c * 2 + (chunk & 1)) * CHUNK_BYTES;
              if (threadIdx.x % 128 == 0) tma_store_wait_read1();
              consumer_sync(c);
#pragma unroll
              for (int jj = 0; jj < CW / 8; jj += 2) {
                const int j = q * (CW / 8) + jj;
                const u32 r0 = pack2(acc[i][4 * j], acc[i][4 * j + 1]);
                const u32 r1 = pack2(acc[i][4 * j + 2], acc[i][4 * j + 3]);
                const u32 r2 = pack2(acc[i][4 * j + 4], acc[i][4 * j + 5]);
                const u32 r3 = pack2(acc[i][4 * j + 6], acc[i][4 * j + 7]);
                if (trans) {
                  stmatrix_x4_trans(buf + tlane + jj * 8 * 128, r0, r1, r2, r3);
                } else {
                  stmatrix_x4(buf + sbase + ((static_cast<u32>(jj) << 4) ^ sxor), r0, r1, r2, r3);
                }
              }
              asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
              consumer_sync(c);
              if (threadIdx.x % 128 == 0) {
                const int row = tm * BM + c * WG_ROWS + i * 64, col = tn * BN + q * CW;
                if (trans) {
                  tma_store_2d(&tma_c, row, col, buf);
                } else {
                  tma_store_2d(&tma_c, col, row, buf);
                }
              }
              ++chunk;
            }
          }
        };
        if (c_trans) {
          chunks(true);
        } else {
          chunks(false);
        }
        continue;
      }
      const int row0 = tm * BM + c * WG_ROWS + warp * 16 + lane / 4;
      const int col0 = tn * BN + 2 * (lane % 4);
      const bool pairs = (N % 2) == 0;
#pragma unroll
      for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = row0 + i * 64 + h * 8;
          if (row >= M) continue;
          if (c_trans) {
            // the user's C: element (row, col) at col * M + row
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
              const int col = col0 + 8 * j;
              const u32 v = pack2(acc[i][4 * j + 2 * h], acc[i][4 * j + 2 * h + 1]);
              if (col < N) C[static_cast<long long>(col) * M + row] = static_cast<unsigned short>(v & 0xFFFFu);
              if (col + 1 < N) {
                C[static_cast<long long>(col + 1) * M + row] = static_cast<unsigned short>(v >> 16);
              }
            }
            continue;
          }
          unsigned short* crow = C + static_cast<long long>(row) * N;
#pragma unroll
          for (int j = 0; j < BN / 8; ++j) {
            const int col = col0 + 8 * j;
            const u32 v = pack2(acc[i][4 * j + 2 * h], acc[i][4 * j + 2 * h + 1]);
            if (pairs && col + 1 < N) {
              *reinterpret_cast<u32*>(crow + col) = v;
            } else {
              if (col < N) crow[col] = static_cast<unsigned short>(v & 0xFFFFu);
              if (col + 1 < N) crow[col + 1] = static_cast<unsigned short>(v >> 16);
            }
          }
        }
      }
    }
    // the last chunks' stores must finish reading shared memory before the CTA ends
    if (c_by_tma && threadIdx.x % 128 == 0) tma_store_wait_all();
  }
  // no CTA of a cluster leaves while a peer's copies or arrivals may still reach it
  if (CLUSTER > 1) {
    __syncwarp();
    cluster_sync_all();
  }
}

// Split-K's second kernel: C = sum over the splits, in order, of the fp32 partial tiles.
extern "C" __global__ void __launch_bounds__(256)
    origami_hopper_splitk_reduce(const float* __restrict__ workspace, unsigned short* C, int M,
                                 int N, int splits) {
  using namespace hopper_gemm_detail;
  const long long total = static_cast<long long>(M) * N;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if ((total & 1) == 0) {
    // pairs of elements: every slice starts 8-byte aligned
    for (long long p = first; p < total / 2; p += stride) {
      F2 acc{0.0f, 0.0f};
      for (int sp = 0; sp < splits; ++sp) {
        const F2 v = reinterpret_cast<const F2*>(workspace + sp * total)[p];
        acc.x += v.x;
        acc.y += v.y;
      }
      reinterpret_cast<u32*>(C)[p] = pack2(acc.x, acc.y);
    }
    return;
  }
  for (long long e = first; e < total; e += stride) {
    float acc = 0.0f;
    for (int sp = 0; sp < splits; ++sp) acc += workspace[sp * total + e];
    C[e] = static_cast<unsigned short>(pack2(acc, 0.0f) & 0xFFFFu);
  }
}
