// sm_90a PTX helpers shared by the Hopper GEMM (csrc/hopper_gemm.cu) and the Hopper
// microbenchmarks (csrc/tma_load.cu, csrc/tc_wgmma.cu), so that a benchmark measures the
// GEMM's own mbarrier protocol, TMA copy and wgmma operand layout (PTX ISA: mbarrier,
// cp.async.bulk.tensor, wgmma.mma_async's matrix descriptor).
#pragma once

namespace hopper_ptx {

__device__ __forceinline__ unsigned int smem_u32(const void* p) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(unsigned int bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(unsigned int bar, unsigned int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned int bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned int bar, unsigned int parity) {
  unsigned int done;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// One box of a 2-D tensor map (`map`: a __grid_constant__ CUtensorMap) at element
// coordinates (c0, c1) into shared memory at `dst`, completing on the mbarrier `bar`.
__device__ __forceinline__ void tma_load_2d(unsigned int dst, const void* map, int c0, int c1,
                                            unsigned int bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// wgmma shared-memory descriptor of a K-major tile with 128-byte swizzle: rows of 128
// bytes, 8-row groups 1024 bytes apart (stride byte offset), the leading byte offset
// unused for this layout (1), swizzle mode 1 (128B) in bits 62-63.
__device__ __forceinline__ unsigned long long desc_sw128(unsigned int addr) {
  return (static_cast<unsigned long long>((addr & 0x3FFFF) >> 4)) |
         (static_cast<unsigned long long>(1) << 16) |
         (static_cast<unsigned long long>(1024 >> 4) << 32) |
         (static_cast<unsigned long long>(1) << 62);
}

}  // namespace hopper_ptx
