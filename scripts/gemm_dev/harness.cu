// Device harness for csrc/gemm.cu (before the Rust runner exists).
//
// For each config: compile csrc/gemm.cu with NVRTC (-D defines, like the runner
// will), load it with the driver API, read NUM_REGS / LOCAL_SIZE_BYTES and the
// exported origami_gemm_smem_bytes (checked against the host mirror of the
// formula), then for each shape: fresh random inputs (uniform [-1,1], new seed per
// check), C poisoned with NaN, one launch, relative Frobenius error against cuBLAS
// (cublasGemmEx, TN, fp32 compute) and a count of unwritten (NaN) outputs; then
// timing: warm-up, then S samples, each a CUDA-event pair around R back-to-back
// launches (R chosen so that a sample lasts >= ~2 ms); median, CoV; same for
// cuBLAS on the same buffers.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 harness.cu -o harness -lcuda -lnvrtc -lcublas
// Usage: harness --src csrc/gemm.cu --arch sm_90 --dtype fp16|bf16
//                --configs "BMxBNxBK/wW/sS;..." | --configs-file F
//                --shapes "MxNxK;..." [--group G] [--samples S] [--csv out.csv]
//                [--attrs attrs.csv] [--no-time] [--rounds R (3)] [--force-time]
// Timing is interleaved: R rounds, each times cuBLAS then every config with S samples;
// the median and CoV are over the R*S pooled samples.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "%s:%d CUDA error %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)
#define CU(x)                                                                                  \
  do {                                                                                         \
    CUresult r_ = (x);                                                                         \
    if (r_ != CUDA_SUCCESS) {                                                                  \
      const char* s_ = nullptr;                                                                \
      cuGetErrorString(r_, &s_);                                                               \
      fprintf(stderr, "%s:%d driver error %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)
#define CB(x)                                                                              \
  do {                                                                                     \
    cublasStatus_t s_ = (x);                                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
      fprintf(stderr, "%s:%d cuBLAS error %s: %d\n", __FILE__, __LINE__, #x, (int)s_);     \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

struct Config {
  int bm, bn, bk, nw, ns;
  std::vector<std::string> flags;  // "+NAME" suffixes -> -DORIGAMI_NAME (development variants)
};
struct Shape {
  long long m, n, k;
};

// Host mirror of the kernel's formula (csrc/gemm.cu).
static int smem_bytes(const Config& c) {
  int pipe = c.ns * (c.bm + c.bn) * c.bk * 2;
  int epi = c.bm * (c.bn + 8) * 2;
  return std::max(pipe, epi);
}
static bool tiling_valid(const Config& c) {
  auto in = [](int v, std::initializer_list<int> s) { return std::find(s.begin(), s.end(), v) != s.end(); };
  if (!in(c.bm, {32, 64, 128, 256}) || !in(c.bn, {32, 64, 128, 256}) || !in(c.bk, {16, 32, 64, 128}) ||
      !in(c.nw, {4, 8}) || !in(c.ns, {2, 3, 4}))
    return false;
  int wm_ = (c.nw == 4) ? 2 : (c.bm >= c.bn ? 4 : 2);
  int wn_ = c.nw / wm_;
  int wm = c.bm / wm_, wn = c.bn / wn_;
  return wm % 16 == 0 && wn % 16 == 0 && wm >= 16 && wn >= 16;
}

__device__ __forceinline__ float hash_uniform(unsigned long long seed, unsigned long long i) {
  unsigned long long x = seed ^ (i * 0x9E3779B97F4A7C15ull);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return (float)((x >> 40) * (1.0 / 16777216.0)) * 2.f - 1.f;
}
template <bool BF16>
__global__ void fill_random(unsigned short* p, long long n, unsigned long long seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    float v = hash_uniform(seed, i);
    if (BF16) {
      __nv_bfloat16 h = __float2bfloat16_rn(v);
      p[i] = *reinterpret_cast<unsigned short*>(&h);
    } else {
      __half h = __float2half_rn(v);
      p[i] = *reinterpret_cast<unsigned short*>(&h);
    }
  }
}
__global__ void fill_u16(unsigned short* p, long long n, unsigned short v) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    p[i] = v;
}
template <bool BF16>
__device__ __forceinline__ float to_f(unsigned short u) {
  if (BF16) return __uint_as_float(((unsigned)u) << 16);
  __half h = *reinterpret_cast<__half*>(&u);
  return __half2float(h);
}
// out[0] += sum (c-r)^2, out[1] += sum r^2, out[2] += count of non-finite c
template <bool BF16>
__global__ void rel_err(const unsigned short* c, const unsigned short* r, long long n, double* out) {
  double d2 = 0, r2 = 0, bad = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    float cv = to_f<BF16>(c[i]), rv = to_f<BF16>(r[i]);
    if (!isfinite(cv)) {
      bad += 1;
      continue;
    }
    double d = (double)cv - (double)rv;
    d2 += d * d;
    r2 += (double)rv * rv;
  }
  __shared__ double sh[3][256];
  sh[0][threadIdx.x] = d2;
  sh[1][threadIdx.x] = r2;
  sh[2][threadIdx.x] = bad;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      for (int j = 0; j < 3; ++j) sh[j][threadIdx.x] += sh[j][threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int j = 0; j < 3; ++j) atomicAdd(&out[j], sh[j][0]);
}

static std::vector<std::string> split(const std::string& s, char d) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(s);
  while (std::getline(is, cur, d))
    if (!cur.empty()) out.push_back(cur);
  return out;
}
static bool parse_config(const std::string& s, Config& c) {
  std::vector<std::string> parts = split(s, '+');
  if (parts.empty()) return false;
  for (size_t i = 1; i < parts.size(); ++i) c.flags.push_back(parts[i]);
  return sscanf(parts[0].c_str(), "%dx%dx%d/w%d/s%d", &c.bm, &c.bn, &c.bk, &c.nw, &c.ns) == 5;
}
static std::string cfg_name(const Config& c) {
  char b[64];
  snprintf(b, sizeof b, "%dx%dx%d/w%d/s%d", c.bm, c.bn, c.bk, c.nw, c.ns);
  std::string r = b;
  for (auto& f : c.flags) r += "+" + f;
  return r;
}

struct Stats {
  double median_ms, cov;
  int n, reps;
};
static Stats stats_of(const std::vector<double>& v, int reps) {
  if (v.empty()) return {0, 0, 0, reps};
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  double med = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  for (double x : v) var += (x - mean) * (x - mean);
  var /= std::max<size_t>(1, v.size() - 1);
  return {med, std::sqrt(var) / mean, (int)v.size(), reps};
}
// Appends `samples` per-launch times (ms) to `out`: each sample is one event pair
// around `reps` back-to-back launches. reps <= 0: chosen so a sample lasts ~2 ms.
template <typename F>
static int time_samples(F launch, int samples, int reps, std::vector<double>& out) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) launch();  // warm-up
  CK(cudaDeviceSynchronize());
  if (reps <= 0) {
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float one = 0;
    CK(cudaEventElapsedTime(&one, e0, e1));
    reps = std::max(1, std::min(2000, (int)std::ceil(2.0 / std::max(one, 1e-4f))));
  }
  for (int s = 0; s < samples; ++s) {
    CK(cudaEventRecord(e0));
    for (int r = 0; r < reps; ++r) launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    out.push_back(ms / reps);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return reps;
}

int main(int argc, char** argv) {
  std::string src_path = "csrc/gemm.cu", arch = "sm_90", dtype = "fp16", cfgs_s, cfgs_file, shapes_s,
              csv_path, attrs_path;
  int group = 8, samples = 15, rounds = 3;
  bool do_time = true, force_time = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto nx = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "missing value for %s\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--src") src_path = nx();
    else if (a == "--arch") arch = nx();
    else if (a == "--dtype") dtype = nx();
    else if (a == "--configs") cfgs_s = nx();
    else if (a == "--configs-file") cfgs_file = nx();
    else if (a == "--shapes") shapes_s = nx();
    else if (a == "--group") group = atoi(nx().c_str());
    else if (a == "--samples") samples = atoi(nx().c_str());
    else if (a == "--rounds") rounds = std::max(1, atoi(nx().c_str()));
    else if (a == "--csv") csv_path = nx();
    else if (a == "--attrs") attrs_path = nx();
    else if (a == "--no-time") do_time = false;
    else if (a == "--force-time") force_time = true;
    else {
      fprintf(stderr, "unknown arg %s\n", a.c_str());
      return 2;
    }
  }
  const bool bf16 = dtype == "bf16";
  if (!bf16 && dtype != "fp16") {
    fprintf(stderr, "dtype must be fp16 or bf16\n");
    return 2;
  }
  std::vector<Config> cfgs;
  std::vector<std::string> cfg_strs = split(cfgs_s, ';');
  if (!cfgs_file.empty()) {
    std::ifstream f(cfgs_file);
    std::string line;
    while (std::getline(f, line))
      if (!line.empty() && line[0] != '#') cfg_strs.push_back(line);
  }
  for (auto& s : cfg_strs) {
    Config c;
    if (!parse_config(s, c)) {
      fprintf(stderr, "bad config %s\n", s.c_str());
      return 2;
    }
    cfgs.push_back(c);
  }
  std::vector<Shape> shapes;
  for (auto& s : split(shapes_s, ';')) {
    Shape sh;
    if (sscanf(s.c_str(), "%lldx%lldx%lld", &sh.m, &sh.n, &sh.k) != 3) {
      fprintf(stderr, "bad shape %s\n", s.c_str());
      return 2;
    }
    if (sh.k % 8 != 0) {
      fprintf(stderr, "shape %s: K must be a multiple of 8 (origami_gemm alignment rule)\n", s.c_str());
      return 2;
    }
    shapes.push_back(sh);
  }
  std::ifstream sf(src_path);
  if (!sf) {
    fprintf(stderr, "cannot read %s\n", src_path.c_str());
    return 2;
  }
  std::string src((std::istreambuf_iterator<char>(sf)), std::istreambuf_iterator<char>());

  CK(cudaFree(0));
  CU(cuInit(0));
  int dev = 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  int smem_optin = 0;
  CK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  printf("# device %s, cc %d.%d, %d SMs, smem opt-in %d, dtype %s, group %d\n", prop.name, prop.major,
         prop.minor, prop.multiProcessorCount, smem_optin, dtype.c_str(), group);
  cublasHandle_t h;
  CB(cublasCreate(&h));
  cudaDataType_t dt = bf16 ? CUDA_R_16BF : CUDA_R_16F;

  FILE* csv = csv_path.empty() ? nullptr : fopen(csv_path.c_str(), "a");
  FILE* attrs = attrs_path.empty() ? nullptr : fopen(attrs_path.c_str(), "a");
  if (csv && ftell(csv) == 0)
    fprintf(csv,
            "dtype,block_m,block_n,block_k,num_warps,num_stages,group,M,N,K,rel_err,unwritten,pass,"
            "ms,cov,samples,reps,tflops,cublas_ms,cublas_cov,cublas_tflops,ratio,variant,ref_norm\n");
  if (attrs && ftell(attrs) == 0)
    fprintf(attrs,
            "arch,dtype,block_m,block_n,block_k,num_warps,num_stages,num_regs,local_size_bytes,"
            "smem_bytes,max_threads,compile_ms,variant\n");

  // Compile all configs first.
  struct Mod {
    Config c;
    CUmodule mod = nullptr;
    CUfunction fn = nullptr;
    int smem = 0;
    bool ok = false;
  };
  std::vector<Mod> mods;
  for (auto& c : cfgs) {
    Mod m;
    m.c = c;
    m.smem = smem_bytes(c);
    if (!tiling_valid(c) || m.smem > smem_optin) {
      printf("SKIP %s: invalid (tiling or smem %d > %d)\n", cfg_name(c).c_str(), m.smem, smem_optin);
      mods.push_back(m);
      continue;
    }
    auto hc0 = std::chrono::steady_clock::now();
    nvrtcProgram prog;
    nvrtcCreateProgram(&prog, src.c_str(), "gemm.cu", 0, nullptr, nullptr);
    std::vector<std::string> o = {"--gpu-architecture=" + arch, "-std=c++17",
                                  "-DBLOCK_M=" + std::to_string(c.bm), "-DBLOCK_N=" + std::to_string(c.bn),
                                  "-DBLOCK_K=" + std::to_string(c.bk), "-DNUM_WARPS=" + std::to_string(c.nw),
                                  "-DNUM_STAGES=" + std::to_string(c.ns)};
    if (bf16) o.push_back("-DDTYPE_BF16");
    for (auto& f : c.flags) o.push_back("-DORIGAMI_" + f);
    std::vector<const char*> op;
    for (auto& s : o) op.push_back(s.c_str());
    nvrtcResult r = nvrtcCompileProgram(prog, (int)op.size(), op.data());
    if (r != NVRTC_SUCCESS) {
      size_t n;
      nvrtcGetProgramLogSize(prog, &n);
      std::string log(n, 0);
      nvrtcGetProgramLog(prog, &log[0]);
      printf("COMPILE FAIL %s: %s\n%s\n", cfg_name(c).c_str(), nvrtcGetErrorString(r), log.c_str());
      mods.push_back(m);
      continue;
    }
    size_t n;
    nvrtcGetCUBINSize(prog, &n);
    std::string cubin(n, 0);
    nvrtcGetCUBIN(prog, &cubin[0]);
    nvrtcDestroyProgram(&prog);
    double cms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - hc0).count();
    CU(cuModuleLoadData(&m.mod, cubin.data()));
    CU(cuModuleGetFunction(&m.fn, m.mod, "origami_gemm"));
    CUdeviceptr gp;
    size_t gsz;
    CU(cuModuleGetGlobal(&gp, &gsz, m.mod, "origami_gemm_smem_bytes"));
    int dev_smem = 0;
    CU(cuMemcpyDtoH(&dev_smem, gp, sizeof(int)));
    if (!c.flags.empty()) m.smem = dev_smem;  // variants may add bytes (e.g. MBAR_PIPE: +64)
    if (dev_smem != m.smem) {
      printf("FORMULA MISMATCH %s: kernel %d host %d\n", cfg_name(c).c_str(), dev_smem, m.smem);
      exit(1);
    }
    CU(cuFuncSetAttribute(m.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, m.smem));
    int regs, local, maxthr;
    CU(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, m.fn));
    CU(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, m.fn));
    CU(cuFuncGetAttribute(&maxthr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, m.fn));
    printf("ATTR %s %s regs=%d local=%d smem=%d maxthreads=%d compile=%.0fms\n", cfg_name(c).c_str(),
           dtype.c_str(), regs, local, m.smem, maxthr, cms);
    if (attrs)
      fprintf(attrs, "%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.1f,%s\n", arch.c_str(), dtype.c_str(), c.bm, c.bn, c.bk,
              c.nw, c.ns, regs, local, m.smem, maxthr, cms, cfg_name(c).c_str());
    m.ok = true;
    mods.push_back(m);
  }
  if (attrs) fflush(attrs);

  unsigned long long seed = 0x5eed0000ull + (unsigned long long)time(nullptr);
  auto fill = [&](unsigned short* p, long long n) {
    ++seed;
    if (bf16) fill_random<true><<<2048, 256>>>(p, n, seed * 0x2545F4914F6CDD1Dull);
    else fill_random<false><<<2048, 256>>>(p, n, seed * 0x2545F4914F6CDD1Dull);
    CK(cudaGetLastError());
  };
  const float alpha = 1.f, beta = 0.f;
  int n_fail = 0;
  printf("%-20s %-18s %10s %6s %9s %6s %9s %9s %6s %7s\n", "config", "shape", "rel_err", "unwr", "ms", "cov",
         "TFLOP/s", "cuBLAS", "cov", "ratio");
  for (auto& sh : shapes) {
    const long long M = sh.m, N = sh.n, K = sh.k;
    unsigned short *A, *B, *C, *R;
    CK(cudaMalloc(&A, M * K * 2));
    CK(cudaMalloc(&B, N * K * 2));
    CK(cudaMalloc(&C, M * N * 2));
    CK(cudaMalloc(&R, M * N * 2));
    double* acc;
    CK(cudaMalloc(&acc, 3 * sizeof(double)));
    auto cublas_run = [&](unsigned short* out) {
      CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, B, dt, (int)K, A, dt, (int)K,
                      &beta, out, dt, (int)N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    int Mi = (int)M, Ni = (int)N, Ki = (int)K, g = group;
    void* args[] = {&A, &B, &C, &Mi, &Ni, &Ki, &g};
    auto launch_of = [&](const Mod& m) {
      unsigned grid = (unsigned)(((M + m.c.bm - 1) / m.c.bm) * ((N + m.c.bn - 1) / m.c.bn));
      return [&m, grid, &args]() {
        CU(cuLaunchKernel(m.fn, grid, 1, 1, m.c.nw * 32, 1, 1, m.smem, 0, args, nullptr));
      };
    };
    double flop = 2.0 * M * N * K;
    char shs[64];
    snprintf(shs, sizeof shs, "%lldx%lldx%lld", M, N, K);
    // 1. correctness: fresh random inputs for every config, C poisoned with NaN.
    struct Res {
      double rel = 0, ref_norm = 0;
      long long unwritten = 0;
      bool pass = false;
      std::vector<double> samples;
      int reps = 0;
    };
    std::vector<Res> res(mods.size());
    for (size_t i = 0; i < mods.size(); ++i) {
      const Mod& m = mods[i];
      if (!m.ok) continue;
      fill(A, M * K);
      fill(B, N * K);
      cublas_run(R);
      fill_u16<<<2048, 256>>>(C, M * N, 0xFFFF);  // NaN in fp16 and bf16
      CK(cudaGetLastError());
      launch_of(m)();
      CK(cudaDeviceSynchronize());
      CK(cudaMemset(acc, 0, 3 * sizeof(double)));
      if (bf16) rel_err<true><<<1024, 256>>>(C, R, M * N, acc);
      else rel_err<false><<<1024, 256>>>(C, R, M * N, acc);
      CK(cudaGetLastError());
      double hacc[3];
      CK(cudaMemcpy(hacc, acc, sizeof hacc, cudaMemcpyDeviceToHost));
      res[i].rel = std::sqrt(hacc[0] / std::max(hacc[1], 1e-300));
      res[i].ref_norm = std::sqrt(hacc[1]);
      res[i].unwritten = (long long)hacc[2];
      double bound = bf16 ? 1e-2 : 2e-3;
      res[i].pass = res[i].unwritten == 0 && res[i].rel <= bound && std::isfinite(res[i].rel) && hacc[1] > 0;
      if (!res[i].pass) ++n_fail;
    }
    // 2. timing: `rounds` rounds, each times cuBLAS then every config (interleaved, so
    //    that drifts in clocks or power spread over all of them); samples pooled.
    std::vector<double> cb_samples;
    int cb_reps = 0;
    if (do_time) {
      for (int r = 0; r < rounds; ++r) {
        cb_reps = time_samples([&]() { cublas_run(R); }, samples, r == 0 ? 0 : cb_reps, cb_samples);
        for (size_t i = 0; i < mods.size(); ++i) {
          if (!mods[i].ok || !(res[i].pass || force_time)) continue;
          res[i].reps = time_samples(launch_of(mods[i]), samples, r == 0 ? 0 : res[i].reps, res[i].samples);
        }
      }
    }
    Stats cb = stats_of(cb_samples, cb_reps);
    double ctf = do_time ? flop / cb.median_ms / 1e9 : 0;
    if (do_time)
      printf("%-20s %-18s %10s %6s %9.4f %6.3f %9.1f\n", "cuBLAS", shs, "-", "-", cb.median_ms, cb.cov, ctf);
    for (size_t i = 0; i < mods.size(); ++i) {
      const Mod& m = mods[i];
      if (!m.ok) continue;
      const Config& c = m.c;
      const Res& q = res[i];
      Stats st = stats_of(q.samples, q.reps);
      double tf = st.n ? flop / st.median_ms / 1e9 : 0;
      printf("%-20s %-18s %10.3e %6lld %9.4f %6.3f %9.1f %9.1f %6.3f %7.3f %s\n", cfg_name(c).c_str(), shs, q.rel,
             q.unwritten, st.median_ms, st.cov, tf, ctf, cb.cov, ctf > 0 ? tf / ctf : 0.0, q.pass ? "" : "FAIL");
      if (csv)
        fprintf(csv, "%s,%d,%d,%d,%d,%d,%d,%lld,%lld,%lld,%.4e,%lld,%d,%.5f,%.4f,%d,%d,%.2f,%.5f,%.4f,%.2f,%.4f,%s,%.4e\n",
                dtype.c_str(), c.bm, c.bn, c.bk, c.nw, c.ns, group, M, N, K, q.rel, q.unwritten, q.pass ? 1 : 0,
                st.median_ms, st.cov, st.n, st.reps, tf, cb.median_ms, cb.cov, ctf, ctf > 0 ? tf / ctf : 0.0,
                cfg_name(c).c_str(), q.ref_norm);
    }
    fflush(stdout);
    if (csv) fflush(csv);
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(R));
    CK(cudaFree(acc));
  }
  if (csv) fclose(csv);
  if (attrs) fclose(attrs);
  printf("# failures: %d\n", n_fail);
  return n_fail ? 1 : 0;
}
