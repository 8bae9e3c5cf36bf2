// origami GEMM kernel family: C[M,N] = A[M,K] * B[N,K]^T
//
// fp16 or bf16 inputs, fp32 accumulation, output in the input dtype; or fp32 inputs
// and output through TF32 tensor cores (-DDTYPE_TF32: mma.sync m16n8k8 .tf32, each
// operand rounded to TF32 with cvt.rna, as cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32).
// A is row-major M x K, B is stored N x K (row-major, i.e. both operands are
// K-contiguous: the "TN" layout). C is row-major M x N.
//
// One source, compiled once per configuration (by NVRTC at run time, by nvcc
// for the register table). The configuration arrives as preprocessor defines:
//
//   -DBLOCK_M=128 -DBLOCK_N=256 -DBLOCK_K=64 -DNUM_WARPS=8 -DNUM_STAGES=3 -DWARPS_M=2
//   -DDTYPE_BF16            (omit for fp16)
//   -DDTYPE_TF32            (fp32 A, B and C, TF32 math; BLOCK_K counts fp32 elements)
//   -DCACHE_ALL             (cp.async.ca: loads also allocate in L1; default cp.async.cg)
//   -DUNPREDICATED          (no bounds checks: M, N, K multiples of the tile, C 16-byte
//                            aligned; the Rust family refuses other shapes)
//
// so that the kernel symbol is fixed:
//
//   extern "C" __global__ void origami_gemm(const void* A, const void* B, void* C,
//                                          int M, int N, int K, int group_size_m)
//
// T is a 16-bit storage type (fp16 or bf16 bit patterns; declared here as
// unsigned short so that no header is needed under NVRTC), or float with DTYPE_TF32.
// The pointers are declared void* so that one symbol serves every type.
//
// TF32 reuses the 16-bit kernel byte for byte: a row of BLOCK_K fp32 elements is a row
// of 2 x BLOCK_K 16-bit units, and the fragments one ldmatrix.x4 gives for an m16n8k16
// step (16 rows x 32 bytes of A, 8 rows x 32 bytes of B) are exactly the registers of an
// m16n8k8 tf32 MMA (a0..a3 = rows 0-7 / 8-15 x k 0-3 / 4-7; b0, b1 = k 0-3 / 4-7). The
// body below works in 16-bit units (BK16, K16); only the MMA, the rounding and the
// epilogue's fp32 output differ.
//
// The config rule is not stated here: which configs exist, their warp grid
// (WARPS_M), their shared memory and which are valid belong to the Rust family,
// src/model/family/origami.rs, which also gives the defines above
// (`origami-bench configs` lists them for every config). This file computes
// what its code needs from the defines and only checks, with static_asserts,
// that they fit what the code assumes.
//
// Launch: grid = (ceil(M/BLOCK_M) * ceil(N/BLOCK_N), 1, 1), block = (NUM_WARPS*32, 1, 1),
// dynamic shared memory = ORIGAMI_GEMM_SMEM_BYTES (raise the function's
// MAX_DYNAMIC_SHARED_SIZE_BYTES attribute first when it is above 48 KiB). The
// module also exports the value as `extern "C" __device__ const int
// origami_gemm_smem_bytes` (and `origami_gemm_threads`), so that the host can
// compare it with the family's formula.
//
// Alignment rule: K % 8 == 0 (K % 4 == 0 for TF32) and A, B 16-byte aligned (every 16-byte cp.async
// chunk of a row is either fully inside or fully outside the matrix). M and N
// are arbitrary: out-of-range rows are zero-filled on load and not stored;
// C stores are 16 bytes wide when N % 8 == 0 (N % 4 == 0 for TF32) and C is 16-byte
// aligned, element by element otherwise.
//
// Launch order: Triton's grouped order with run-time GROUP_SIZE_M
//   group_id = pid / (G*grid_n); first_m = group_id*G;
//   gsz = min(grid_m - first_m, G); pid_m = first_m + (pid % (G*grid_n)) % gsz;
//   pid_n = (pid % (G*grid_n)) / gsz        (G < 1 is treated as 1)
//
// Design: NUM_STAGES-deep cp.async.cg (16-byte) ring in shared memory with an
// XOR swizzle of 16-byte chunks so that both the cp.async stores and the
// ldmatrix.x4 reads are bank-conflict free; mma.sync.m16n8k16 with fp32
// accumulators held in registers (WM x WN warp tile); fragments double-buffered
// in registers across k-steps (the next k-step's ldmatrix is issued before the
// current k-step's MMAs, across the tile boundary too); one __syncthreads per
// K tile; epilogue staged through shared memory for 16-byte coalesced stores.

#if !defined(BLOCK_M) || !defined(BLOCK_N) || !defined(BLOCK_K) || !defined(NUM_WARPS) || \
    !defined(NUM_STAGES) || !defined(WARPS_M)
#error "csrc/gemm.cu needs -DBLOCK_M -DBLOCK_N -DBLOCK_K -DNUM_WARPS -DNUM_STAGES -DWARPS_M (origami-bench configs lists them)"
#endif
// The element kind: 0 fp16, 1 bf16, 2 fp32 data with TF32 math.
#if defined(DTYPE_TF32) && defined(DTYPE_BF16)
#error "csrc/gemm.cu takes one of DTYPE_BF16 and DTYPE_TF32"
#elif defined(DTYPE_TF32)
#define ORIGAMI_GEMM_KIND 2
#elif defined(DTYPE_BF16)
#define ORIGAMI_GEMM_KIND 1
#else
#define ORIGAMI_GEMM_KIND 0
#endif
// 16-bit units per element of A and B, bytes per element of C.
#define ORIGAMI_GEMM_UNITS (ORIGAMI_GEMM_KIND == 2 ? 2 : 1)
#define ORIGAMI_GEMM_OUT_BYTES (ORIGAMI_GEMM_KIND == 2 ? 4 : 2)

namespace origami_gemm_detail {

typedef unsigned short elem_t;   // fp16 / bf16 bit pattern
typedef unsigned int u32;

// BK is in 16-bit units (2 x BLOCK_K for TF32); OUT_BYTES is C's element size.
template <int BM, int BN, int BK, int NW, int NS, int WGM, int OUT_BYTES>
struct Cfg {
  static constexpr int THREADS = NW * 32;
  static constexpr int WARP_GRID_M = WGM;  // the WARPS_M define
  static constexpr int WARP_GRID_N = NW / WARP_GRID_M;
  static constexpr int WM = BM / WARP_GRID_M;
  static constexpr int WN = BN / WARP_GRID_N;
  static constexpr int MI = WM / 16;      // m16 tiles per warp
  static constexpr int NJ = WN / 16;      // n16 ldmatrix groups per warp
  static constexpr int NI = WN / 8;       // n8 MMA tiles per warp
  static constexpr int KSTEPS = BK / 16;  // k16 steps per K tile
  static constexpr int CH = BK / 8;       // 16-byte chunks per shared-memory row
  static constexpr int A_STAGE_BYTES = BM * BK * 2;
  static constexpr int B_STAGE_BYTES = BN * BK * 2;
  static constexpr int PIPE_BYTES = NS * (A_STAGE_BYTES + B_STAGE_BYTES);
  static constexpr int C_LD = BN + 8;     // epilogue row pitch in C elements
  static constexpr int EPI_BYTES = BM * C_LD * OUT_BYTES;
  static constexpr int SMEM_BYTES = PIPE_BYTES > EPI_BYTES ? PIPE_BYTES : EPI_BYTES;
  static constexpr int A_CHUNKS = BM * CH;
  static constexpr int B_CHUNKS = BN * CH;
  static constexpr int A_ITERS = (A_CHUNKS + THREADS - 1) / THREADS;
  static constexpr int B_ITERS = (B_CHUNKS + THREADS - 1) / THREADS;
  static constexpr int ROWS_PER_ITER = THREADS / CH;
  static constexpr int SWIZZLE_ROW_PERIOD = CH == 4 ? 16 : 8;  // of swz<CH> below

  // What the code below assumes of the defines (not which configs are used).
  static_assert(NS >= 2, "NUM_STAGES must be at least 2 (a ring of NUM_STAGES - 1 tiles in flight)");
  static_assert(THREADS <= 1024, "NUM_WARPS must be at most 32");
  static_assert(NW % WARP_GRID_M == 0, "WARPS_M must divide NUM_WARPS");
  static_assert(WM * WARP_GRID_M == BM && WN * WARP_GRID_N == BN, "the warp grid must split the tile evenly");
  static_assert(WM % 16 == 0 && WM >= 16, "warp tile M (BLOCK_M / WARPS_M) must be a multiple of 16");
  static_assert(WN % 16 == 0 && WN >= 16, "warp tile N (BLOCK_N / WARPS_N) must be a multiple of 16");
  static_assert(BK % 16 == 0 && (CH == 2 || CH == 4 || CH % 8 == 0),
                "BLOCK_K must be 16, 32 or a multiple of 64 (k16 steps, swizzle of 16-byte chunks)");
  static_assert(ROWS_PER_ITER * CH == THREADS && ROWS_PER_ITER % SWIZZLE_ROW_PERIOD == 0,
                "one copy iteration must cover whole swizzle periods of rows");
};

// Position (in 16-byte chunks) of chunk `c` of row `row` inside one stage's
// tile of rows of CH chunks. A bijection on each 128-byte line; for every set
// of 8 consecutive rows read at the same logical chunk (one ldmatrix phase)
// and for every 8 consecutive chunks written (one cp.async phase) the 8
// physical 16-byte slots lie in 8 different bank groups. It is periodic in the
// row with a period dividing 16, so swz(r + 16j, c) == 16j*CH + swz(r, c).
template <int CH>
__device__ __forceinline__ int swz(int row, int c) {
  if (CH >= 8) {
    return row * CH + (c ^ (row & 7));
  } else if (CH == 4) {
    return (row * 4 + c) ^ ((row >> 1) & 7);
  } else {  // CH == 2
    return (row * 2 + c) ^ ((row >> 2) & 1);
  }
}

__device__ __forceinline__ u32 smem_u32(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}

// The cache policy of the CUTLASS tuning study's "cache all" / "cache global" knob.
#ifdef CACHE_ALL
#define ORIGAMI_CP_ASYNC "cp.async.ca.shared.global"
#else
#define ORIGAMI_CP_ASYNC "cp.async.cg.shared.global"
#endif
// 16 bytes; src_bytes < 16 zero-fills the rest (the predicated path's out-of-range chunks).
__device__ __forceinline__ void cp_async_16(u32 dst, const void* src, int src_bytes) {
  asm volatile(ORIGAMI_CP_ASYNC " [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
// 16 bytes, no zero-fill operand (the unpredicated path).
__device__ __forceinline__ void cp_async_16_full(u32 dst, const void* src) {
  asm volatile(ORIGAMI_CP_ASYNC " [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// One k-step of a warp's m16n8 tile: m16n8k16 for 16-bit inputs, m16n8k8 for TF32 (the
// same registers hold 32 bytes of each row either way).
template <int KIND>
__device__ __forceinline__ void mma_16816(float (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  if (KIND == 2) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else if (KIND == 1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// An fp32 bit pattern rounded to TF32 (nearest, ties away from zero; cuBLAS's rounding).
__device__ __forceinline__ u32 to_tf32(u32 x) {
  u32 r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
  return r;
}

// Pack two floats into two 16-bit values (lo in the low half), round to nearest even.
template <bool BF16>
__device__ __forceinline__ u32 pack2(float lo, float hi) {
  u32 r;
  if (BF16) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  }
  return r;
}

// BK and K in 16-bit units (2 x BLOCK_K and 2 x K for TF32); out_t is C's element.
template <int BM, int BN, int BK, int NW, int NS, int WGM, int KIND, typename out_t>
__device__ __forceinline__ void gemm_body(const elem_t* __restrict__ A, const elem_t* __restrict__ B,
                                          out_t* __restrict__ C, int M, int N, int K, int group_size_m,
                                          unsigned char* smem) {
  typedef Cfg<BM, BN, BK, NW, NS, WGM, (int)sizeof(out_t)> G;
  constexpr int THREADS = G::THREADS;
  constexpr int CH = G::CH;
  constexpr int MI = G::MI, NJ = G::NJ, NI = G::NI, KSTEPS = G::KSTEPS;

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;

  // ---- Triton grouped launch order -------------------------------------------------
  const int grid_m = (M + BM - 1) / BM;
  const int grid_n = (N + BN - 1) / BN;
  const int gsm = group_size_m < 1 ? 1 : group_size_m;
  const int pid = blockIdx.x;
  const int width = gsm * grid_n;
  const int group_id = pid / width;
  const int first_m = group_id * gsm;
  const int gsz = min(grid_m - first_m, gsm);
  const int pid_in = pid - group_id * width;
  const int pid_m = first_m + pid_in % gsz;
  const int pid_n = pid_in / gsz;
  if (pid_m >= grid_m || pid_n >= grid_n) return;
  const int m0 = pid_m * BM;
  const int n0 = pid_n * BN;

  const u32 smem_base = smem_u32(smem);
  const u32 sA0 = smem_base;
  const u32 sB0 = smem_base + NS * G::A_STAGE_BYTES;

  // ---- global -> shared copy setup ---------------------------------------------------
  // Thread tid copies chunk (tid % CH) of rows tid/CH + it*ROWS_PER_ITER.
  const int ld_c = tid % CH;
  const int ld_r = tid / CH;
#ifndef UNPREDICATED
  const int m_rem = M - m0;
  const int n_rem = N - n0;
#endif
  const elem_t* a_src = A + (long long)(m0 + ld_r) * K + ld_c * 8;
  const elem_t* b_src = B + (long long)(n0 + ld_r) * K + ld_c * 8;
  const long long a_it_stride = (long long)G::ROWS_PER_ITER * K;
  const u32 ld_soff = (u32)swz<CH>(ld_r, ld_c) * 16u;  // + it*THREADS*16 (period argument above)

  // Copies with combined index i in [lo, hi): A copies are 0..A_ITERS-1, B copies follow.
  auto load_tile_part = [&](int stage, int kt, int lo, int hi) {
    const int kofs = kt * BK;
#ifndef UNPREDICATED
    const bool k_ok = kofs + ld_c * 8 < K;
#endif
    const u32 sa = sA0 + stage * G::A_STAGE_BYTES + ld_soff;
#pragma unroll
    for (int it = 0; it < G::A_ITERS; ++it) {
      if (it < lo || it >= hi) continue;
      if (G::A_CHUNKS % THREADS == 0 || tid + it * THREADS < G::A_CHUNKS) {
#ifdef UNPREDICATED
        cp_async_16_full(sa + it * THREADS * 16, a_src + it * a_it_stride + kofs);
#else
        const bool ok = k_ok && (ld_r + it * G::ROWS_PER_ITER < m_rem);
        const elem_t* src = ok ? a_src + it * a_it_stride + kofs : A;
        cp_async_16(sa + it * THREADS * 16, src, ok ? 16 : 0);
#endif
      }
    }
    const u32 sb = sB0 + stage * G::B_STAGE_BYTES + ld_soff;
#pragma unroll
    for (int it = 0; it < G::B_ITERS; ++it) {
      if (G::A_ITERS + it < lo || G::A_ITERS + it >= hi) continue;
      if (G::B_CHUNKS % THREADS == 0 || tid + it * THREADS < G::B_CHUNKS) {
#ifdef UNPREDICATED
        cp_async_16_full(sb + it * THREADS * 16, b_src + it * a_it_stride + kofs);
#else
        const bool ok = k_ok && (ld_r + it * G::ROWS_PER_ITER < n_rem);
        const elem_t* src = ok ? b_src + it * a_it_stride + kofs : B;
        cp_async_16(sb + it * THREADS * 16, src, ok ? 16 : 0);
#endif
      }
    }
  };
  constexpr int NCOPY = G::A_ITERS + G::B_ITERS;
  auto load_tile = [&](int stage, int kt) { load_tile_part(stage, kt, 0, NCOPY); };

  // ---- shared -> register (ldmatrix) setup -------------------------------------------
  const int warp_m = warp / G::WARP_GRID_N;
  const int warp_n = warp % G::WARP_GRID_N;
  // A: matrices (rows 0-7,k0-7) (rows 8-15,k0-7) (rows 0-7,k8-15) (rows 8-15,k8-15)
  const int a_row = (lane & 7) + ((lane >> 3) & 1) * 8;
  const int a_half = lane >> 4;
  // B (N x K): matrices (n 0-7,k0-7) (n 0-7,k8-15) (n 8-15,k0-7) (n 8-15,k8-15)
  const int b_row = (lane & 7) + (lane >> 4) * 8;
  const int b_half = (lane >> 3) & 1;
  u32 a_off[KSTEPS], b_off[KSTEPS];
#pragma unroll
  for (int kk = 0; kk < KSTEPS; ++kk) {
    a_off[kk] = (u32)(warp_m * G::WM * BK * 2) + (u32)swz<CH>(a_row, kk * 2 + a_half) * 16u;
    b_off[kk] = (u32)(warp_n * G::WN * BK * 2) + (u32)swz<CH>(b_row, kk * 2 + b_half) * 16u;
  }

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

  u32 af[2][MI][4];
  u32 bfr[2][NJ][4];

  auto load_frags = [&](int buf, int stage, int kk) {
    const u32 sa = sA0 + stage * G::A_STAGE_BYTES + a_off[kk];
    const u32 sb = sB0 + stage * G::B_STAGE_BYTES + b_off[kk];
#pragma unroll
    for (int i = 0; i < MI; ++i) ldmatrix_x4(af[buf][i], sa + i * 16 * BK * 2);
#pragma unroll
    for (int j = 0; j < NJ; ++j) ldmatrix_x4(bfr[buf][j], sb + j * 16 * BK * 2);
    if (KIND == 2) {
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) af[buf][i][e] = to_tf32(af[buf][i][e]);
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) bfr[buf][j][e] = to_tf32(bfr[buf][j][e]);
    }
  };

  auto mma_all = [&](int buf) {
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
      for (int jj = 0; jj < NI; ++jj) {
        const int j = (i & 1) ? (NI - 1 - jj) : jj;  // serpentine: reuse B fragments
        mma_16816<KIND>(acc[i][j], af[buf][i], bfr[buf][j >> 1][(j & 1) * 2], bfr[buf][j >> 1][(j & 1) * 2 + 1]);
      }
    }
  };

  // ---- main loop -----------------------------------------------------------------
  const int KT = (K + BK - 1) / BK;
  // One __syncthreads per K tile.
#pragma unroll
  for (int s = 0; s < NS - 1; ++s) {
    if (s < KT) load_tile(s, s);
    cp_async_commit();
  }
  int rd = 0;
  int wr = NS - 1;
  cp_async_wait<NS - 2>();
  __syncthreads();
  load_frags(0, rd, 0);
  for (int kt = 0; kt < KT; ++kt) {
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
      if (kk == 0) {
        // Slot `wr` was last read during tile kt-1, finished before the barrier
        // that ended tile kt-1.
        const int nt = kt + NS - 1;
        if (nt < KT) load_tile(wr, nt);
        cp_async_commit();
        wr = (wr + 1 == NS) ? 0 : wr + 1;
      }
      if (kk == KSTEPS - 1) {
        // Tile kt+1 must have landed (this thread's copies), then everyone's.
        cp_async_wait<NS - 2>();
        __syncthreads();
        rd = (rd + 1 == NS) ? 0 : rd + 1;
        if (KSTEPS == 1) {
          mma_all(0);
          load_frags(0, rd, 0);
        } else {
          load_frags((kk + 1) & 1, rd, 0);
          mma_all(kk & 1);
        }
      } else {
        load_frags((kk + 1) & 1, rd, kk + 1);
        mma_all(kk & 1);
      }
    }
  }
  cp_async_wait<0>();

  // ---- epilogue: registers -> shared (as C's type) -> 16-byte coalesced stores -------
  __syncthreads();  // every warp is done with the ring (all copies were consumed)
  out_t* sC = reinterpret_cast<out_t*>(smem);
  {
    const int r0 = warp_m * G::WM + (lane >> 2);
    const int c0 = warp_n * G::WN + (lane & 3) * 2;
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int r = r0 + i * 16;
        const int c = c0 + j * 8;
        if (KIND == 2) {
          *reinterpret_cast<float2*>(sC + r * G::C_LD + c) = make_float2(acc[i][j][0], acc[i][j][1]);
          *reinterpret_cast<float2*>(sC + (r + 8) * G::C_LD + c) = make_float2(acc[i][j][2], acc[i][j][3]);
        } else {
          *reinterpret_cast<u32*>(sC + r * G::C_LD + c) = pack2<KIND == 1>(acc[i][j][0], acc[i][j][1]);
          *reinterpret_cast<u32*>(sC + (r + 8) * G::C_LD + c) = pack2<KIND == 1>(acc[i][j][2], acc[i][j][3]);
        }
      }
    }
  }
  __syncthreads();
  constexpr int EPC = 16 / (int)sizeof(out_t);  // C elements per 16-byte chunk
  constexpr int CCH = BN / EPC;                 // 16-byte chunks per C tile row
  constexpr int C_CHUNKS = BM * CCH;
  const bool vec = ((N & (EPC - 1)) == 0) && ((reinterpret_cast<unsigned long long>(C) & 15ull) == 0);
#pragma unroll
  for (int it = 0; it < (C_CHUNKS + THREADS - 1) / THREADS; ++it) {
    const int id = it * THREADS + tid;
    if (C_CHUNKS % THREADS == 0 || id < C_CHUNKS) {
      const int r = id / CCH;
      const int c = (id % CCH) * EPC;
      const int gm = m0 + r;
      const int gn = n0 + c;
#ifdef UNPREDICATED
      {
        const out_t* s = sC + r * G::C_LD + c;
        out_t* g = C + (long long)gm * N + gn;
        *reinterpret_cast<uint4*>(g) = *reinterpret_cast<const uint4*>(s);
      }
      (void)vec;
#else
      if (gm < M && gn < N) {
        const out_t* s = sC + r * G::C_LD + c;
        out_t* g = C + (long long)gm * N + gn;
        if (vec) {
          *reinterpret_cast<uint4*>(g) = *reinterpret_cast<const uint4*>(s);
        } else {
#pragma unroll
          for (int e = 0; e < EPC; ++e)
            if (gn + e < N) g[e] = s[e];
        }
      }
#endif
    }
  }
}

}  // namespace origami_gemm_detail

#define ORIGAMI_GEMM_THREADS (NUM_WARPS * 32)
#define ORIGAMI_GEMM_SMEM_BYTES                                                                 \
  (origami_gemm_detail::Cfg<BLOCK_M, BLOCK_N, BLOCK_K * ORIGAMI_GEMM_UNITS, NUM_WARPS, NUM_STAGES, \
                            WARPS_M, ORIGAMI_GEMM_OUT_BYTES>::SMEM_BYTES)

extern "C" __device__ const int origami_gemm_smem_bytes = ORIGAMI_GEMM_SMEM_BYTES;
extern "C" __device__ const int origami_gemm_threads = ORIGAMI_GEMM_THREADS;

extern "C" __global__ void __launch_bounds__(ORIGAMI_GEMM_THREADS, 1)
    origami_gemm(const void* A, const void* B, void* C, int M, int N, int K, int group_size_m) {
  extern __shared__ __align__(128) unsigned char origami_gemm_smem[];
#if ORIGAMI_GEMM_KIND == 2
  typedef float out_t;
#else
  typedef origami_gemm_detail::elem_t out_t;
#endif
  // A and B as 16-bit units: K fp32 elements per row are 2 x K units.
  origami_gemm_detail::gemm_body<BLOCK_M, BLOCK_N, BLOCK_K * ORIGAMI_GEMM_UNITS, NUM_WARPS, NUM_STAGES, WARPS_M,
                                 ORIGAMI_GEMM_KIND, out_t>(
      static_cast<const origami_gemm_detail::elem_t*>(A), static_cast<const origami_gemm_detail::elem_t*>(B),
      static_cast<out_t*>(C), M, N, K * ORIGAMI_GEMM_UNITS, group_size_m, origami_gemm_smem);
}
