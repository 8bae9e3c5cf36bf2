// Sustained SM clock under load (origami-calibrate, metric `sm_clock`).
//
// A grid of blocks on every SM runs dependent FMA chains for `iters` rounds. Thread 0 of
// each block reads clock64 (this SM's cycles) and %globaltimer (nanoseconds, common to all
// SMs) at its start and end; the host divides cycles by nanoseconds per block. The perf
// ratios divide bandwidth by this clock.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
sm_clock_load(u32 iters, float seed, float* sink, u64* rec) {
    OrigamiClockRec r;
    if (threadIdx.x == 0) r.start();
    float x0 = seed + threadIdx.x, x1 = x0 * 0.5f, x2 = x0 * 0.25f, x3 = x0 * 0.125f;
    const float m = 0.999999f, c = 1e-7f;
    for (u32 i = 0; i < iters; ++i) {
        x0 = fmaf(x0, m, c);
        x1 = fmaf(x1, m, c);
        x2 = fmaf(x2, m, c);
        x3 = fmaf(x3, m, c);
    }
    const float s = x0 + x1 + x2 + x3;
    if (s == 1234.5f) sink[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0) r.stop(rec + 4u * blockIdx.x);
}
