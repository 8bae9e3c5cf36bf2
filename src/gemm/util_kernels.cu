// Helper kernels of the Rust GEMM runner (src/gemm/runner.rs), compiled with NVRTC, no
// header: fresh random inputs, the NaN poison of C, and the relative Frobenius error of C
// against cuBLAS's result. The same three jobs as the development harness's fill_random /
// fill_u16 / rel_err (scripts/gemm_dev/harness.cu, in git history up to commit c051717),
// written here for 16-bit storage with PTX conversions, and for fp32 storage (the tf32
// problems). `kind`: 0 fp16, 1 bf16, 2 fp32; `n` counts elements of that kind.

__device__ __forceinline__ float hash_uniform(unsigned long long seed, unsigned long long i) {
  unsigned long long x = seed ^ (i * 0x9E3779B97F4A7C15ull);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return (float)((x >> 40) * (1.0 / 16777216.0)) * 2.f - 1.f;
}

__device__ __forceinline__ unsigned short f32_to_16(float v, int bf16) {
  unsigned short u;
  if (bf16) {
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(u) : "f"(v));
  } else {
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(u) : "f"(v));
  }
  return u;
}

__device__ __forceinline__ float f16_to_f32(unsigned short u, int bf16) {
  if (bf16) return __uint_as_float(((unsigned)u) << 16);
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(u));
  return f;
}

// Element i of a buffer of `kind`.
__device__ __forceinline__ float load_elem(const unsigned short* p, long long i, int kind) {
  if (kind == 2) return reinterpret_cast<const float*>(p)[i];
  return f16_to_f32(p[i], kind);
}

// Uniform [-1, 1] values, a new sequence for each seed.
extern "C" __global__ void origami_fill_random(unsigned short* p, long long n,
                                               unsigned long long seed, int kind) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float v = hash_uniform(seed, i);
    if (kind == 2) {
      reinterpret_cast<float*>(p)[i] = v;
    } else {
      p[i] = f32_to_16(v, kind);
    }
  }
}

// Every 16-bit slot set to `v` (0xFFFF is a NaN in fp16 and in bf16, and two of them
// 0xFFFFFFFF, a NaN in fp32).
extern "C" __global__ void origami_fill_u16(unsigned short* p, long long n, unsigned int v) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    p[i] = (unsigned short)v;
}

// out[0] += sum (c - r)^2 over finite c, out[1] += sum r^2, out[2] += count of non-finite c.
extern "C" __global__ void origami_rel_err(const unsigned short* c, const unsigned short* r,
                                           long long n, double* out, int kind) {
  double d2 = 0, r2 = 0, bad = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    float cv = load_elem(c, i, kind), rv = load_elem(r, i, kind);
    if ((__float_as_uint(cv) & 0x7f800000u) == 0x7f800000u) {
      bad += 1;
    } else {
      double d = (double)cv - (double)rv;
      d2 += d * d;
    }
    r2 += (double)rv * (double)rv;
  }
  for (int o = 16; o > 0; o >>= 1) {
    d2 += __shfl_down_sync(0xffffffffu, d2, o);
    r2 += __shfl_down_sync(0xffffffffu, r2, o);
    bad += __shfl_down_sync(0xffffffffu, bad, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&out[0], d2);
    atomicAdd(&out[1], r2);
    atomicAdd(&out[2], bad);
  }
}
