// Where the block scheduler puts the blocks of a one-block-per-SM launch, and which SMs
// share a GPC (origami-calibrate `--only topology`, measurement `sm_topology`; issue 11:
// the programs of a persistent kernel that run side by side in one GPC share their L2
// reads). The host drives them from src/calibrate/bench_topology.rs.
//
//  * topo_where: thread 0 of each block writes its %smid to out[blockIdx.x], then every
//    thread spins ~spin_cycles SM cycles (clock64), so that all blocks of a launch are
//    resident together and none can take the SM of one that finished. The host launches it
//    with the opt-in maximum of dynamic shared memory per block: one block per SM, as a
//    persistent GEMM's operand ring leaves it.
//  * topo_where_cluster{16,8,4,2}: the same in thread-block clusters of C blocks
//    (`__cluster_dims__`). The blocks of a cluster run on SMs of one GPC, so SMs seen in
//    one cluster share a GPC. Clusters exist from compute capability 9.0: these kernels
//    are compiled for sm_90 and later only, and size 16 (above the portable 8) launches
//    only after the host allowed non-portable cluster sizes on the kernel.
//
// Launch: P blocks of 128 threads (P <= SMs; a multiple of C for the cluster kernels),
// out[P].
#include "common.cuh"

namespace sm_topology_detail {

// Record this block's SM, then hold it for spin_cycles.
__device__ __forceinline__ void record_and_spin(u32* out, i64 spin_cycles) {
    if (threadIdx.x == 0) out[blockIdx.x] = origami_smid();
    const i64 t0 = clock64();
    while (clock64() - t0 < spin_cycles) {
    }
}

}  // namespace sm_topology_detail

extern "C" __global__ void __launch_bounds__(128) topo_where(u32* out, i64 spin_cycles) {
    sm_topology_detail::record_and_spin(out, spin_cycles);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

// topo_where in clusters of C blocks.
#define SM_TOPOLOGY_CLUSTER_KERNEL(C)                                                  \
    extern "C" __global__ void __cluster_dims__(C, 1, 1) __launch_bounds__(128)        \
        topo_where_cluster##C(u32* out, i64 spin_cycles) {                             \
        sm_topology_detail::record_and_spin(out, spin_cycles);                         \
    }

SM_TOPOLOGY_CLUSTER_KERNEL(16)
SM_TOPOLOGY_CLUSTER_KERNEL(8)
SM_TOPOLOGY_CLUSTER_KERNEL(4)
SM_TOPOLOGY_CLUSTER_KERNEL(2)

#endif
