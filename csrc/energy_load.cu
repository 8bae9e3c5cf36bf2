// Loads for the energy costs (origami-calibrate --only energy; issue 15, section 3:
// energy per GEMM from static power x time plus dynamic energy per tensor-core FLOP and
// per byte moved from DRAM, L2 and shared memory). The host (src/calibrate/bench_energy.rs)
// replays each kernel back to back for NVML energy-counter windows of ~0.5 s and divides
// the power above the spin kernel's by the kernel's rate (operations per second).
//
// Each kernel runs for a loop count given as an argument (the host sizes one launch to
// ~2 ms) and folds what it loads into a value stored only if it equals a magic number, so
// nothing is optimised away:
//
//   energy_spin   one warp per SM (grid = SM count x 32 threads) spins on clock64 for
//                 `cycles` cycles; each block marks its %smid in `sm_mask` (the host
//                 counts the SMs covered). The GPU is awake and clocked, nothing moves:
//                 the static power that the other kernels' power is measured above.
//   energy_mma    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 from registers,
//                 ENERGY_MMA_ILP independent accumulators per warp, as many 256-thread
//                 blocks as fit per SM. The operands are two sets of random non-zero fp16
//                 fragments from the host, and consecutive mma instructions alternate
//                 between them, so the tensor cores' inputs switch as in a GEMM (where
//                 each mma gets new fragments); one constant operand set would flatter
//                 the energy. Dense FLOP per launch = warps x iters x ILP x 4096.
//   energy_mma_tf32  the same with mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
//                 (csrc/gemm.cu's tf32 path; sm_80 and later) and random fp32 operands:
//                 warps x iters x ILP x 2048 FLOP per launch.
//   energy_smem   ld.volatile.shared.v4.u32 (16 bytes per lane, 512 per warp
//                 instruction), ENERGY_SMEM_UNROLL per round, the pattern of
//                 csrc/smem_bw.cu: each warp instruction reads 32 consecutive 16-byte
//                 chunks (conflict-free), the loads of a round read different 4 KiB
//                 slices, and the slices rotate by a step from the seed argument, so
//                 ptxas can neither merge the loads of a round nor match rounds (it
//                 folded repeated shared loads of one address in smem_bw's first
//                 versions). 512-thread blocks with a 32 KiB array, as many as fit.
//   energy_l2     ld.global.cg.v4.u32 (L2, not L1) over a power-of-two buffer of about a
//   energy_dram   quarter of L2 (hits) or of at least 8 x L2 (misses: each pass reads the
//                 whole buffer, so a line is evicted long before it is read again). One
//                 body (energy_stream), so the two differ only in where the bytes come
//                 from: the host subtracts the L2 cost per byte from the DRAM one.
//                 ENERGY_LD_UNROLL independent loads in flight per thread; each pass
//                 starts a few blocks further on (as csrc/l2_bw.cu), so that no address
//                 repeats within a pass and an SM's share moves from pass to pass.
//                 Bytes per launch = passes x ceil(n_vec / (threads x UNROLL)) x threads
//                 x UNROLL x 16 (indices wrap with a mask; every requested byte counted).
#include "common.cuh"

#define ENERGY_MMA_ILP 2
#define ENERGY_MMA_THREADS 256
#define ENERGY_SMEM_THREADS 512
#define ENERGY_SMEM_UNROLL 8
// 32 KiB of 16-byte chunks: 8 slices of 4 KiB.
#define ENERGY_SMEM_CHUNKS 2048
#define ENERGY_LD_THREADS 512
#define ENERGY_LD_UNROLL 4

extern "C" __global__ void __launch_bounds__(32)
    energy_spin(u64 cycles, u32* sm_mask, u32* sink) {
    const i64 t0 = clock64();
    if (threadIdx.x == 0) {
        const u32 sm = origami_smid();
        atomicOr(&sm_mask[(sm >> 5) & 63u], 1u << (sm & 31u));
    }
    u32 n = 0;
    while ((u64)(clock64() - t0) < cycles) ++n;
    if (n == 0x9e3779b9u) sink[threadIdx.x] = n;
}

#define ENERGY_MMA_F16(d, a, b)                                                                \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "                          \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                       \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

#define ENERGY_MMA_TF32(d, a, b)                                                               \
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "                          \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                       \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

// in: 32 lanes x 12 words (two sets of A (4 words) and B (2 words) fragments per lane);
// out: a sink. MMA is one of the macros above (both take 4 A and 2 B registers).
template <int KIND>
__device__ __forceinline__ void energy_mma_body(const u32* __restrict__ in, u32 iters, float* out) {
    const u32 lane = threadIdx.x & 31u;
    u32 a0[4], b0[2], a1[4], b1[2];
    for (int i = 0; i < 4; ++i) {
        a0[i] = in[lane * 12u + i];
        a1[i] = in[lane * 12u + 6u + i];
    }
    for (int i = 0; i < 2; ++i) {
        b0[i] = in[lane * 12u + 4u + i];
        b1[i] = in[lane * 12u + 10u + i];
    }
    float d[ENERGY_MMA_ILP][4];
#pragma unroll
    for (int c = 0; c < ENERGY_MMA_ILP; ++c)
#pragma unroll
        for (int i = 0; i < 4; ++i) d[c][i] = 0.0f;
    for (u32 it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < ENERGY_MMA_ILP; c += 2) {
            if (KIND == 0) {
                ENERGY_MMA_F16(d[c], a0, b0);
                ENERGY_MMA_F16(d[c + 1], a1, b1);
            } else {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
                ENERGY_MMA_TF32(d[c], a0, b0);
                ENERGY_MMA_TF32(d[c + 1], a1, b1);
#endif
            }
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < ENERGY_MMA_ILP; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
    if (s == 1234.5f) out[threadIdx.x] = s;
}

extern "C" __global__ void __launch_bounds__(ENERGY_MMA_THREADS)
    energy_mma(const u32* __restrict__ in, u32 iters, float* out) {
    energy_mma_body<0>(in, iters, out);
}

// tf32 needs sm_80 (elsewhere the body is empty; the host never launches it there).
extern "C" __global__ void __launch_bounds__(ENERGY_MMA_THREADS)
    energy_mma_tf32(const u32* __restrict__ in, u32 iters, float* out) {
    energy_mma_body<1>(in, iters, out);
}

__device__ __forceinline__ void energy_lds_v4(u32 addr, uint4& v) {
    asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr));
}

extern "C" __global__ void __launch_bounds__(ENERGY_SMEM_THREADS)
    energy_smem(u32 iters, u32 seed, u32* sink) {
    __shared__ uint4 buf[ENERGY_SMEM_CHUNKS];
    for (u32 i = threadIdx.x; i < ENERGY_SMEM_CHUNKS; i += blockDim.x) {
        const u32 h = origami_hash(i ^ seed);
        buf[i] = make_uint4(h, h + 1u, h ^ 0x5bd1e995u, h * 7u);
    }
    // Lane l of warp w reads chunk 32 (w mod 8) + l of slice (rot + u) mod 8 in load u.
    const u32 step = 1u + (seed >> 29);
    u32 rot = 0;
    const u32 base = (u32)__cvta_generic_to_shared(buf) + 16u * (threadIdx.x & 255u);
    u32 acc = 0;
    __syncthreads();
    for (u32 it = 0; it < iters; ++it) {
        uint4 v[ENERGY_SMEM_UNROLL];
#pragma unroll
        for (int u = 0; u < ENERGY_SMEM_UNROLL; ++u) {
            energy_lds_v4(base + (((u32)u + rot) & 7u) * 4096u, v[u]);
        }
#pragma unroll
        for (int u = 0; u < ENERGY_SMEM_UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
        rot += step;
    }
    if (acc == 0x9e3779b9u) sink[threadIdx.x & 1023u] = acc;
}

// `passes` passes over n_vec 16-byte vectors (a power of two), every thread
// ENERGY_LD_UNROLL independent L2-only loads per step; returns the XOR of what it read.
__device__ __forceinline__ u32 energy_stream(const uint4* __restrict__ buf, u32 n_vec,
                                             u32 passes) {
    return origami_stream_xor<ENERGY_LD_UNROLL>(buf, n_vec, passes, OrigamiInOrder{});
}

extern "C" __global__ void __launch_bounds__(ENERGY_LD_THREADS)
    energy_l2(const uint4* __restrict__ buf, u32 n_vec, u32 passes, u32* sink) {
    const u32 acc = energy_stream(buf, n_vec, passes);
    if (acc == 0x9e3779b9u) sink[threadIdx.x & 1023u] = acc;
}

extern "C" __global__ void __launch_bounds__(ENERGY_LD_THREADS)
    energy_dram(const uint4* __restrict__ buf, u32 n_vec, u32 passes, u32* sink) {
    const u32 acc = energy_stream(buf, n_vec, passes);
    if (acc == 0x9e3779b9u) sink[threadIdx.x & 1023u] = acc;
}
