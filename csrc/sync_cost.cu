// CTA barrier cost and kernel launch cost (origami-calibrate, metrics
// `bar_sync_cycles_t{128,256,384}`, `launch_stream_us`, `launch_graph_us`).
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
