// CTA barrier cost and kernel launch cost (origami-calibrate, metrics
// `bar_sync_cycles_t{128,256,384}`, `launch_stream_us`, `launch_graph_us`,
// `dependent_reduce_us`).
//
// bar_rounds: one block of blockDim threads runs `iters` rounds of SYNC_UNROLL
// `bar.sync 0` (what __syncthreads() compiles to); thread 0 reads clock64 around the loop.
// empty_rounds is the same loop with the barriers left out: the same counter, the same
// XOR into a register that is stored at the end (so the loop is kept). The host takes
// both at N and 2N rounds; (cycles(2N) - cycles(N)) removes the fixed cost of the clock
// reads and the loop's entry and exit, and subtracting the empty loop's difference removes
// the per-round loop overhead:
//   cycles per barrier = ((bar(2N) - bar(N)) - (empty(2N) - empty(N))) / (N x SYNC_UNROLL)
// (`per_op_cycles` in src/calibrate/bench_extra.rs).
//
// empty_kernel: no parameters, no body; the host launches it back to back on the stream
// and as the nodes of a captured CUDA graph and divides the event time by the launches.
//
// spin_all and reduce_pair: what a split-K launch pays for its second kernel beyond the
// bytes it moves. spin_all keeps every SM busy for `cycles` SM cycles (a GEMM's last
// wave); reduce_pair then adds two fp32 runs of `n` floats into a third (the shape of
// csrc/hopper_gemm.cu's split-K reduction, on a workspace small enough that its bytes take
// a few nanoseconds). The host times graphs of R x [spin_all] and R x [spin_all,
// reduce_pair]; their difference over R is the dependent kernel's cost in the graph: the
// drain of the first kernel, the second's launch and block dispatch, its loads' round
// trip and its stores.
#include "common.cuh"

#ifndef SYNC_UNROLL
#define SYNC_UNROLL 8
#endif

#define SYNC_KERNEL(NAME, BODY)                                                                \
    extern "C" __global__ void __launch_bounds__(1024)                                         \
    NAME(u32 iters, u64* cycles, u32* sink) {                                                  \
        u32 x = threadIdx.x;                                                                   \
        __syncthreads();                                                                       \
        const i64 t0 = clock64();                                                              \
        _Pragma("unroll 1") for (u32 it = 0; it < iters; ++it) {                               \
            BODY                                                                               \
            x ^= it;                                                                           \
        }                                                                                      \
        const i64 t1 = clock64();                                                              \
        if (threadIdx.x == 0) cycles[0] = (u64)(t1 - t0);                                      \
        if (x == 0x9e3779b9u) sink[threadIdx.x & 1023u] = x;                                   \
    }

#define SYNC_BARRIERS                                                                          \
    _Pragma("unroll") for (int u = 0; u < SYNC_UNROLL; ++u) {                                  \
        asm volatile("bar.sync 0;" ::: "memory");                                              \
    }

SYNC_KERNEL(bar_rounds, SYNC_BARRIERS)
SYNC_KERNEL(empty_rounds, )

extern "C" __global__ void empty_kernel() {}

extern "C" __global__ void spin_all(u64 cycles, u32* sink) {
    const i64 t0 = clock64();
    i64 t = t0;
    while ((u64)(t - t0) < cycles) t = clock64();
    if (t == 0x7fffffffffffffffLL) sink[threadIdx.x & 1023u] = (u32)t;
}

extern "C" __global__ void reduce_pair(const float* __restrict__ ws, float* __restrict__ out,
                                       u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = ws[i] + ws[i + n];
}
