// Development harness for csrc/hopper_gemm.cu on a Hopper GPU (nvcc on the device; the
// project's runner is the Rust one). One executable per config (the kernel's -D defines):
//
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Icsrc \
//        -DHG_BM=128 -DHG_BN=256 -DHG_STAGES=4 scripts/hopper/harness.cu \
//        -lcuda -lcublas -o hg_128x256
//   ./hg_128x256 M N K [fp16|bf16] [group_m] [tma|regs] [k_tiles_per_split]
//   (tma: C stored by TMA when N % 8 == 0, the default; regs: C stored from registers;
//    k_tiles_per_split below ceil(K / 64): split-K, its fp32 workspace and the reduction
//    kernel timed together with the GEMM)
//
// It fills A (M x K) and B (N x K) with uniform random values in [-1, 1) (fresh per
// run, seeded by the shape), makes the two tensor maps (cuTensorMapEncodeTiled: 16-bit,
// 128-byte swizzle, zero fill), runs the kernel once with C poisoned with NaN, checks C
// against cuBLAS (relative Frobenius error), then times both with CUDA graphs of 20
// launches (5 warm-up graphs, 15 timed, median) and prints one CSV line (config quoted):
//   config,m,n,k,dtype,kernel_us,cublas_us,kernel_tflops,cublas_tflops,rel_err,status
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hopper_gemm.cu"

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

static unsigned short f2h(float f, bool bf16) {
  if (bf16) {
    unsigned int u;
    memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1);
    return static_cast<unsigned short>(u >> 16);
  }
  __half h = __float2half_rn(f);
  unsigned short r;
  memcpy(&r, &h, 2);
  return r;
}

static float h2f(unsigned short v, bool bf16) {
  if (bf16) {
    unsigned int u = static_cast<unsigned int>(v) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  __half h;
  memcpy(&h, &v, 2);
  return __half2float(h);
}

// A 2-D map of a row-major rows x cols 16-bit matrix, box {box_cols, box_rows}, the swizzle
// as wide as the box's rows (128, 64 or 32 bytes).
static HgTmaDesc make_map(const void* base, int rows, int cols, int box_rows, int box_cols,
                          bool bf16) {
  CUtensorMap map;
  cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  cuuint32_t elem[2] = {1, 1};
  const CUtensorMapSwizzle sw = box_cols == 64   ? CU_TENSOR_MAP_SWIZZLE_128B
                                : box_cols == 32 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                 : CU_TENSOR_MAP_SWIZZLE_32B;
  CUresult r = cuTensorMapEncodeTiled(
      &map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
      const_cast<void*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    fprintf(stderr, "cuTensorMapEncodeTiled: %s\n", s ? s : "?");
    exit(1);
  }
  HgTmaDesc d;
  static_assert(sizeof(d) == sizeof(map), "tensor map size");
  memcpy(&d, &map, sizeof(d));
  return d;
}

template <typename F>
static float graph_us(F launch, cudaStream_t st) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 20; ++i) launch();
  CK(cudaStreamEndCapture(st, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int rep = 0; rep < 20; ++rep) {
    CK(cudaEventRecord(a, st));
    CK(cudaGraphLaunch(ge, st));
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (rep >= 5) t.push_back(ms * 1000.0f / 20.0f);
  }
  std::sort(t.begin(), t.end());
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s M N K [fp16|bf16] [group_m] [regs|tma] [K tiles per split|sk]\n", argv[0]);
    return 2;
  }
  const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
  const bool bf16 = argc > 4 && std::string(argv[4]) == "bf16";
  const int group_m = argc > 5 ? atoi(argv[5]) : 8;
  const bool c_regs = argc > 6 && std::string(argv[6]) == "regs";
  const int k_tiles = (K + HG_BK - 1) / HG_BK;
  // argv[7]: K tiles per split-K run, or "sk" for Stream-K
  const bool stream_k = argc > 7 && std::string(argv[7]) == "sk";
  int kps = argc > 7 && !stream_k ? atoi(argv[7]) : k_tiles;
  if (kps < 1 || kps > k_tiles) kps = k_tiles;
  const int splits = (k_tiles + kps - 1) / kps;
  if (bf16 != HG_IS_BF16) {
    fprintf(stderr, "this executable was built for %s\n", HG_IS_BF16 ? "bf16" : "fp16");
    return 2;
  }
  char cfg[64];
  char split_txt[32] = "";
  if (splits > 1) snprintf(split_txt, sizeof split_txt, ",split%d", splits);
  if (stream_k) snprintf(split_txt, sizeof split_txt, ",streamk");
  snprintf(cfg, sizeof cfg, "%dx%dx%d,s%d,c%d%s%s%s", HG_BM, HG_BN, HG_BK, HG_STAGES,
           HG_CONSUMERS, HG_CLUSTER > 1 ? ",cluster2" : "", c_regs ? ",regs" : "", split_txt);
  if (K % 8 != 0) {
    printf("\"%s\",%d,%d,%d,%s,,,,,,refused: K %% 8 != 0\n", cfg, M, N, K,
           bf16 ? "bf16" : "fp16");
    return 0;
  }
  std::mt19937 rng(static_cast<unsigned>(M * 7 + N * 13 + K));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<unsigned short> ha(static_cast<size_t>(M) * K), hb(static_cast<size_t>(N) * K);
  for (auto& x : ha) x = f2h(u(rng), bf16);
  for (auto& x : hb) x = f2h(u(rng), bf16);
  unsigned short *A, *B, *C, *R;
  CK(cudaMalloc(&A, ha.size() * 2));
  CK(cudaMalloc(&B, hb.size() * 2));
  CK(cudaMalloc(&C, static_cast<size_t>(M) * N * 2));
  CK(cudaMalloc(&R, static_cast<size_t>(M) * N * 2));
  CK(cudaMemcpy(A, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemset(C, 0xFF, static_cast<size_t>(M) * N * 2));  // NaN
  float* W = nullptr;
  if (splits > 1) {
    CK(cudaMalloc(&W, static_cast<size_t>(splits) * M * N * 4));
    CK(cudaMemset(W, 0xFF, static_cast<size_t>(splits) * M * N * 4));  // NaN
  }

  const HgTmaDesc ta = make_map(A, M, K, HG_BM, 64, bf16);
  // with clusters each CTA loads (and multicasts) BN / HG_CLUSTER rows of B
  const HgTmaDesc tb = make_map(B, N, K, HG_BN / HG_CLUSTER, 64, bf16);
  const int c_by_tma = (!c_regs && N % 8 == 0) ? 1 : 0;
  HgTmaDesc tc;
  memset(&tc, 0, sizeof tc);
  if (c_by_tma) tc = make_map(C, M, N, 64, HG_CW, bf16);
  int smem = 0, sms = 0;
  CK(cudaMemcpyFromSymbol(&smem, origami_hopper_gemm_smem_bytes, sizeof(int)));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaFuncSetAttribute(origami_hopper_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          smem));
  const int tiles = ((M + HG_BM - 1) / HG_BM) * ((N + HG_BN - 1) / HG_BN);
  const long long iters = static_cast<long long>(tiles) * k_tiles;
  int grid = stream_k ? static_cast<int>(std::min<long long>(iters, sms))
                      : std::min(tiles * splits, sms);
  if (HG_CLUSTER > 1) {
    // pairs of CTAs over pair tiles, as many clusters as can be resident at once
    const int pairs = ((M + 2 * HG_BM - 1) / (2 * HG_BM)) * ((N + HG_BN - 1) / HG_BN);
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(2 * pairs, 1, 1);
    lc.blockDim = dim3((HG_CONSUMERS + 1) * 128, 1, 1);
    lc.dynamicSmemBytes = smem;
    int resident = 0;
    if (cudaOccupancyMaxActiveClusters(&resident, origami_hopper_gemm, &lc) != cudaSuccess ||
        resident < 1) {
      cudaGetLastError();
      resident = sms / 2;
    }
    grid = 2 * std::min(pairs, resident);
    fprintf(stderr, "clusters: %d resident at most, grid %d CTAs\n", resident, grid);
  }
  if (stream_k) {
    // a BM x BN fp32 slot per CTA (NaN), then the CTAs' flags (zero)
    const size_t slots = static_cast<size_t>(grid) * HG_BM * HG_BN;
    CK(cudaMalloc(&W, (slots + grid) * 4));
    CK(cudaMemset(W, 0xFF, slots * 4));
    CK(cudaMemset(W + slots, 0, static_cast<size_t>(grid) * 4));
  }
  const int threads = (HG_CONSUMERS + 1) * 128;
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  auto launch = [&]() {
    origami_hopper_gemm<<<grid, threads, smem, st>>>(ta, tb, tc, C, M, N, K, group_m, c_by_tma,
                                                     kps, W, stream_k ? 1 : 0, 0, 0);
    if (splits > 1) origami_hopper_splitk_reduce<<<4 * sms, 256, 0, st>>>(W, C, M, N, splits);
  };
  launch();
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(st));

  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, st);
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType dt = bf16 ? CUDA_R_16BF : CUDA_R_16F;
  auto ref = [&]() {
    // C^T (N x M, column-major) = B (N x K as column-major K x N, transposed) * A^T
    cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, dt, K, A, dt, K, &zero, R, dt,
                 N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  ref();
  CK(cudaStreamSynchronize(st));
  std::vector<unsigned short> hc(static_cast<size_t>(M) * N), hr(hc.size());
  CK(cudaMemcpy(hc.data(), C, hc.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hr.data(), R, hr.size() * 2, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < hc.size(); ++i) {
    const double x = h2f(hc[i], bf16), y = h2f(hr[i], bf16);
    num += (x - y) * (x - y);
    den += y * y;
  }
  const double rel = std::sqrt(num / std::max(den, 1e-30));
  const double bound = bf16 ? 1e-2 : 2e-3;
  const bool ok = std::isfinite(rel) && rel <= bound;
  const float kus = graph_us(launch, st);
  const float cus = graph_us(ref, st);
  const double flop = 2.0 * M * N * static_cast<double>(K);
  printf("\"%s\",%d,%d,%d,%s,%.3f,%.3f,%.1f,%.1f,%.3e,%s\n", cfg, M, N, K, bf16 ? "bf16" : "fp16",
         kus, cus, flop / kus * 1e-6, flop / cus * 1e-6, rel, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
