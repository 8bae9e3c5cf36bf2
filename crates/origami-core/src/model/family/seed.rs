//! The `seed` kernel family: the space the NVIDIA port report scored (section 2.1):
//! 5 x 5 x 6 = 150 tiles, num_warps 8, num_stages 2, shared memory (BM BK + BK BN) x bytes,
//! and no register check (the port's failure: it picks tiles that spill).

use crate::constants::ModelConstants;
use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::problem::Config;

use super::{operand_tile_bytes, KernelFamily};

/// Command-line name.
pub const NAME: &str = "seed";

const TILE_MN: [u32; 5] = [16, 32, 64, 128, 256];
const TILE_K: [u32; 6] = [16, 32, 64, 128, 256, 512];

/// The 150 (BLOCK_M, BLOCK_N, BLOCK_K) tiles of the report (also the Triton family's).
pub fn seed_tiles() -> Vec<(u32, u32, u32)> {
    let mut v = Vec::with_capacity(150);
    for bm in TILE_MN {
        for bn in TILE_MN {
            for bk in TILE_K {
                v.push((bm, bn, bk));
            }
        }
    }
    v
}

/// The NVIDIA port report's family.
pub struct SeedFamily;

impl KernelFamily for SeedFamily {
    fn name(&self) -> &'static str {
        NAME
    }
    fn tiles(&self) -> Vec<(u32, u32, u32)> {
        seed_tiles()
    }
    fn launches(&self) -> Vec<(u32, u32)> {
        vec![(8, 2)]
    }
    fn smem_bytes(&self, c: &Config, dtype: Dtype) -> u64 {
        operand_tile_bytes(c, dtype).ceil() as u64
    }
    fn registers(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> Option<u32> {
        None
    }
    fn launch_preference(&self, _c: &Config, _k: &ModelConstants) -> f64 {
        0.0
    }
    /// The report names no warp split; the throughput model reads it as the project
    /// kernel's.
    fn warp_grid(&self, c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> (u32, u32) {
        super::origami::warp_grid(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;

    #[test]
    fn seed_family_on_rtx4090_has_about_122_feasible() {
        let gpu = preset("rtx4090").unwrap().gpu;
        let c = SeedFamily.candidates(Dtype::Fp16, &gpu);
        assert_eq!(c.len(), 150);
        let feasible = c.iter().filter(|c| c.feasible()).count();
        // The NVIDIA port report (section 2.1) counts "~122 valid configs" with 99 KB.
        assert!((115..=130).contains(&feasible), "{feasible}");
    }
}
