//! Thread blocks resident per SM: the CUDA occupancy rules (CUDA C Programming Guide,
//! "Compute Capabilities" table and the occupancy calculator's allocation rules) applied to
//! one launch: shared memory with the 1 KiB the runtime reserves per block, registers
//! allocated per warp in units of 256, resident warps and resident blocks per SM.
//!
//! The SM's shared memory is the opt-in per-block limit plus that 1 KiB reservation on every
//! architecture the presets describe (sm_80 164 KiB, sm_86/89 100 KiB, sm_90/100 228 KiB).

use crate::hw::GpuDesc;

/// Shared memory the runtime reserves per resident block, bytes (sm_80 and later).
pub const RESERVED_SMEM_PER_BLOCK: u64 = 1024;
/// Registers are allocated to a warp in units of this many.
pub const REGISTER_ALLOCATION_UNIT: u64 = 256;

/// Per-SM limits of one architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmLimits {
    pub smem_bytes: u64,
    pub registers: u64,
    pub max_warps: u64,
    pub max_blocks: u64,
}

/// The limits of a GPU, from its description and compute capability.
pub fn sm_limits(gpu: &GpuDesc) -> SmLimits {
    let [major, minor] = gpu.compute_capability;
    let (max_warps, max_blocks) = match (major, minor) {
        (7, 5) => (32, 16),
        (8, 6) | (8, 7) => (48, 16),
        (8, 9) => (48, 24),
        (12, _) => (48, 32),
        _ => (64, 32),
    };
    SmLimits {
        smem_bytes: gpu.smem_per_block_optin_bytes + RESERVED_SMEM_PER_BLOCK,
        registers: u64::from(gpu.registers_per_sm),
        max_warps,
        max_blocks,
    }
}

/// Blocks of `warps` warps, `smem_bytes` of shared memory and `registers` per thread (when
/// known) that fit on one SM at once; 0 when not even one does.
pub fn blocks_per_sm(lim: &SmLimits, smem_bytes: u64, registers: Option<u32>, warps: u32) -> u32 {
    let warps = u64::from(warps.max(1));
    let by_smem = lim.smem_bytes / (smem_bytes + RESERVED_SMEM_PER_BLOCK);
    let by_warps = lim.max_warps / warps;
    let by_regs = match registers {
        Some(r) => {
            let per_warp =
                (u64::from(r) * 32).div_ceil(REGISTER_ALLOCATION_UNIT) * REGISTER_ALLOCATION_UNIT;
            lim.registers / (per_warp * warps).max(1)
        }
        None => u64::MAX,
    };
    by_smem
        .min(by_warps)
        .min(by_regs)
        .min(lim.max_blocks)
        .try_into()
        .unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;

    #[test]
    fn hopper_limits_and_known_occupancies() {
        let gpu = preset("h200").unwrap().gpu;
        let lim = sm_limits(&gpu);
        assert_eq!(lim.smem_bytes, 233_472); // 228 KiB
        assert_eq!((lim.max_warps, lim.max_blocks), (64, 32));
        // 128x128x64, 3 stages: 96 KiB of ring, 221 registers at 4 warps: shared memory
        // allows 2, registers (224 x 32 = 7168 per warp, 28672 per block) allow 2.
        assert_eq!(blocks_per_sm(&lim, 98_304, Some(221), 4), 2);
        // The same at 8 warps: registers allow only 1.
        assert_eq!(blocks_per_sm(&lim, 98_304, Some(221), 8), 1);
        // A small tile is limited by the 32-block cap, then by warps.
        assert_eq!(blocks_per_sm(&lim, 4_096, Some(32), 1), 32);
        assert_eq!(blocks_per_sm(&lim, 4_096, Some(32), 4), 16);
        // Shared memory over the SM's: none.
        assert_eq!(blocks_per_sm(&lim, 240_000, Some(32), 4), 0);
        // Unknown registers: shared memory and warps only.
        assert_eq!(blocks_per_sm(&lim, 98_304, None, 8), 2);
    }

    #[test]
    fn ampere_and_ada_limits() {
        let a100 = sm_limits(&preset("a100").unwrap().gpu);
        assert_eq!(a100.smem_bytes, 167_936); // 164 KiB
        let ada = sm_limits(&preset("rtx4090").unwrap().gpu);
        assert_eq!(ada.smem_bytes, 102_400); // 100 KiB
        assert_eq!((ada.max_warps, ada.max_blocks), (48, 24));
    }
}
