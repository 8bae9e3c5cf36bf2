//! The `triton` kernel family: Triton's tutorial matmul on NVIDIA. The NVIDIA port
//! report's 150 tiles, num_warps {4, 8}, num_stages {2, 3, 4}, shared memory num_stages x
//! (BM BK + BK BN) x bytes. On Hopper with 16-bit inputs Triton's own compiled numbers
//! decide (`compiled_table.rs`: registers, spills, shared memory, wgmma or mma.sync);
//! elsewhere a register estimate (fp32 accumulators + operand fragments + overhead) above
//! 255 per thread marks the config "spills", and it is never picked. A problem whose N or
//! K is not a multiple of 16 runs another compiled kernel (`triton/unaligned.rs`).

use crate::constants::ModelConstants;
use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::problem::{Config, Problem};

use super::seed::seed_tiles;
use super::{default_launch_preference, operand_tile_bytes, FamilyVariant, KernelFamily};

pub mod compiled_table;
pub mod unaligned;
pub mod unaligned_table;

use compiled_table::TritonCompiled;

/// Command-line name.
pub const NAME: &str = "triton";

/// Triton's tutorial matmul.
pub struct TritonFamily;

/// Register estimate constants of the Triton family (per thread).
pub struct TritonRegisterModel;

impl TritonRegisterModel {
    /// Registers for addresses, indices, loop state (assumed).
    pub const OVERHEAD: u32 = 40;
}

/// Why Triton's tutorial matmul cannot run a problem, if so: it indexes A, B and C with
/// 32-bit offsets (`offs_am[:, None] * stride_am + ...` in int32), so no operand may hold
/// 2^31 elements or more. The sweep script (`scripts/triton_sweep.py`) asserts the same.
pub fn problem_violation(p: &Problem) -> Option<String> {
    const LIMIT: u64 = 1 << 31;
    for (what, v) in [
        ("M x K", p.m * p.k),
        ("N x K", p.n * p.k),
        ("M x N", p.m * p.n),
    ] {
        if v >= LIMIT {
            return Some(format!(
                "{what} = {v} elements: Triton's matmul indexes its operands with 32-bit offsets (at most 2^31 - 1 = {} elements each)",
                LIMIT - 1
            ));
        }
    }
    None
}

impl KernelFamily for TritonFamily {
    fn name(&self) -> &'static str {
        NAME
    }
    /// `matmul_kernel` (the tutorial kernel, python/origami_gemm/kernels/triton_classic.py,
    /// which scripts/triton_sweep.py times).
    fn triton_kernel(&self) -> Option<&'static str> {
        Some("matmul_kernel")
    }
    fn problem_violation(&self, p: &Problem) -> Option<String> {
        problem_violation(p)
    }
    /// N or K not a multiple of 16: Triton compiles another kernel (`unaligned.rs`).
    fn problem_variant(&self, p: &Problem, gpu: &GpuDesc) -> Option<FamilyVariant> {
        unaligned::variant_for(p, gpu).map(|v| FamilyVariant {
            index: v.class as usize,
            family: v,
            note: v.note(),
        })
    }
    fn tiles(&self) -> Vec<(u32, u32, u32)> {
        seed_tiles()
    }
    fn launches(&self) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for w in [4, 8] {
            for s in [2, 3, 4] {
                v.push((w, s));
            }
        }
        v
    }
    fn smem_bytes(&self, c: &Config, dtype: Dtype) -> u64 {
        (f64::from(c.num_stages) * operand_tile_bytes(c, dtype)).ceil() as u64
    }
    fn compiled_smem_bytes(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u64> {
        triton_compiled(c, dtype, gpu).map(|t| t.smem_bytes)
    }
    /// Triton's compiler on Hopper (`compiled_table.rs`); elsewhere an estimate: fp32
    /// accumulators BM BN / threads, plus the operand fragments of one BK slice held in
    /// 32-bit registers ((BM + BN) BK bytes / 4 / threads), plus overhead.
    fn registers(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u32> {
        if let Some(t) = triton_compiled(c, dtype, gpu) {
            return Some(t.registers);
        }
        let threads = 32 * c.num_warps;
        let acc = (c.block_m * c.block_n).div_ceil(threads);
        let frag = (operand_tile_bytes(c, dtype) / 4.0 / f64::from(threads)).ceil() as u32;
        Some(acc + frag + TritonRegisterModel::OVERHEAD)
    }
    /// A config that spills in Triton's compiled kernel is never picked.
    fn invalid_reason(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<String> {
        triton_compiled(c, dtype, gpu)
            .filter(|t| t.spill_bytes > 0)
            .map(|t| {
                format!(
                    "spills: {} B of spill traffic at {} registers (Triton 3.6, sm_90a)",
                    t.spill_bytes, t.registers
                )
            })
    }
    fn launch_preference(&self, c: &Config, k: &ModelConstants) -> f64 {
        default_launch_preference(c, k)
    }
    /// On Hopper, Triton emits wgmma for BLOCK_M >= 64 with whole warpgroups and mma.sync
    /// below (results/h200/triton/analysis.md, table C): those configs run
    /// `wgmma_speedup` times faster (a calibration constant; 1 = not modelled).
    fn uses_wgmma(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> bool {
        triton_uses_wgmma(c, dtype, gpu)
    }
    fn compute_scale(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc, k: &ModelConstants) -> f64 {
        if triton_uses_wgmma(c, dtype, gpu) {
            1.0 / k.wgmma_speedup
        } else {
            1.0
        }
    }
    /// Who reads the operands from shared memory: on wgmma the warpgroups, stacked along M
    /// while BM has 64 rows for each, the rest along N; on mma.sync the warps, in Triton's
    /// split (`triton_mma_warps`).
    fn warp_grid(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> (u32, u32) {
        if triton_uses_wgmma(c, dtype, gpu) {
            wgmma_warp_grid(c)
        } else {
            triton_mma_warps(c)
        }
    }
}

/// The warpgroups of a wgmma config: along M while BM has 64 rows for each, the rest
/// along N.
fn wgmma_warp_grid(c: &Config) -> (u32, u32) {
    let groups = (c.num_warps / 4).max(1);
    let along_m = groups.min((c.block_m / 64).max(1));
    (along_m, groups / along_m)
}

/// Triton's compiled numbers for a config on this GPU, if its table covers them.
fn triton_compiled(c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<TritonCompiled> {
    compiled_table::compiled(c, dtype, gpu)
}

/// Whether Triton runs a config on Hopper's wgmma: its compiled kernel when the table
/// knows it, else the rule BLOCK_M >= 64 with whole warpgroups and 16-bit or narrower
/// inputs on compute capability 9.
fn triton_uses_wgmma(c: &Config, dtype: Dtype, gpu: &GpuDesc) -> bool {
    if let Some(t) = triton_compiled(c, dtype, gpu) {
        return t.wgmma;
    }
    gpu.compute_capability[0] == 9 && c.block_m >= 64 && c.num_warps % 4 == 0 && dtype.bits() <= 16
}

/// How Triton splits a block's warps over its tile for mma.sync (the behaviour of its
/// tensor-core layout choice as observed, not its code): warps double along M while
/// M per warp (in 16-row units) is at least N per warp (in 16-column units) and M has room,
/// otherwise along N; a split past the tile's own size replicates warps.
pub fn triton_mma_warps(c: &Config) -> (u32, u32) {
    let (mut wm, mut wn) = (1u32, 1u32);
    while wm * wn < c.num_warps {
        let m_units = c.block_m / 16 / wm;
        let n_units = c.block_n / 16 / wn;
        if m_units >= n_units && m_units > 1 {
            wm *= 2;
        } else if n_units > 1 {
            wn *= 2;
        } else {
            wm *= 2;
        }
    }
    (wm, wn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;

    #[test]
    fn triton_never_allows_256x256_fp32_accumulators() {
        let gpu = preset("h100-sxm").unwrap().gpu;
        for cand in TritonFamily.candidates(Dtype::Fp16, &gpu) {
            let c = cand.config;
            if c.block_m == 256 && c.block_n == 256 {
                assert!(!cand.feasible(), "{c}");
            }
        }
    }

    #[test]
    fn triton_smem_counts_stages() {
        let c = Config {
            block_m: 128,
            block_n: 128,
            block_k: 64,
            group_m: 1,
            num_warps: 8,
            num_stages: 3,
            switches: crate::model::Switches::NONE,
            split_k: 1,
            stream_k: false,
        };
        assert_eq!(
            TritonFamily.smem_bytes(&c, Dtype::Fp16),
            3 * (128 * 64 * 2) * 2
        );
    }

    #[test]
    fn triton_wgmma_scale_follows_the_constant() {
        let gpu = preset("h200").unwrap().gpu;
        let mut k = ModelConstants::default();
        let c = |bm, w, s| Config {
            block_m: bm,
            block_n: 128,
            block_k: 64,
            group_m: 1,
            num_warps: w,
            num_stages: s,
            switches: crate::model::Switches::NONE,
            split_k: 1,
            stream_k: false,
        };
        // Off by default.
        assert_eq!(
            TritonFamily.compute_scale(&c(128, 4, 3), Dtype::Fp16, &gpu, &k),
            1.0
        );
        k.wgmma_speedup = 2.0;
        assert_eq!(
            TritonFamily.compute_scale(&c(128, 4, 3), Dtype::Fp16, &gpu, &k),
            0.5
        );
        assert_eq!(
            TritonFamily.compute_scale(&c(32, 4, 3), Dtype::Fp16, &gpu, &k),
            1.0
        );
        let mut ampere = gpu.clone();
        ampere.compute_capability = [8, 0];
        assert_eq!(
            TritonFamily.compute_scale(&c(128, 4, 3), Dtype::Fp16, &ampere, &k),
            1.0
        );
    }

    fn cfg(text: &str) -> Config {
        crate::model::problem::parse_config(text).unwrap()
    }

    #[test]
    fn triton_uses_its_compiled_table_on_hopper_only() {
        let h = preset("h200").unwrap().gpu;
        let a = preset("a100").unwrap().gpu;
        let c = cfg("128x128x64,w4,s3");
        // Compiled: 198 registers, 96 KiB; estimated elsewhere.
        assert_eq!(TritonFamily.registers(&c, Dtype::Fp16, &h), Some(198));
        assert_eq!(
            TritonFamily.compiled_smem_bytes(&c, Dtype::Fp16, &h),
            Some(98_304)
        );
        assert_eq!(TritonFamily.compiled_smem_bytes(&c, Dtype::Fp16, &a), None);
        assert_ne!(TritonFamily.registers(&c, Dtype::Fp16, &a), Some(198));
        // A config whose compiled kernel spills is rejected with the reason.
        let spill = cfg("16x16x512,w4,s4");
        let why = TritonFamily
            .invalid_reason(&spill, Dtype::Fp16, &h)
            .unwrap();
        assert!(why.contains("spills"), "{why}");
        let cand = TritonFamily
            .candidates(Dtype::Fp16, &h)
            .into_iter()
            .find(|x| x.config == spill)
            .unwrap();
        assert!(!cand.feasible());
    }

    #[test]
    fn triton_operand_readers() {
        let h = preset("h200").unwrap().gpu;
        // wgmma: warpgroups along M while BM has 64 rows for each, then along N.
        assert!(
            TritonFamily.compute_scale(
                &cfg("128x128x64,w8,s3"),
                Dtype::Fp16,
                &h,
                &ModelConstants {
                    wgmma_speedup: 2.0,
                    ..ModelConstants::default()
                }
            ) < 1.0
        );
        assert_eq!(
            TritonFamily.warp_grid(&cfg("128x128x64,w8,s3"), Dtype::Fp16, &h),
            (2, 1)
        );
        assert_eq!(
            TritonFamily.warp_grid(&cfg("64x128x64,w8,s3"), Dtype::Fp16, &h),
            (1, 2)
        );
        assert_eq!(
            TritonFamily.warp_grid(&cfg("128x128x64,w4,s3"), Dtype::Fp16, &h),
            (1, 1)
        );
        // mma.sync: warps double along the longer side (in 16-element units).
        assert_eq!(triton_mma_warps(&cfg("32x64x32,w4,s2")), (2, 2));
        assert_eq!(triton_mma_warps(&cfg("16x128x32,w4,s2")), (1, 4));
        assert_eq!(triton_mma_warps(&cfg("64x16x32,w8,s2")), (8, 1));
        // Past the tile's size, warps replicate along M.
        assert_eq!(triton_mma_warps(&cfg("16x16x32,w4,s2")), (4, 1));
    }

    #[test]
    fn operands_of_2_31_elements_overflow_the_offsets() {
        let p = |m, n, k| Problem::new(m, n, k, Dtype::Fp16).unwrap();
        assert_eq!(problem_violation(&p(1 << 15, 1 << 15, 1 << 15)), None);
        let e = problem_violation(&p(1 << 16, 16, 1 << 15)).unwrap();
        assert!(e.starts_with("M x K = 2147483648 elements"), "{e}");
        assert!(problem_violation(&p(16, 1 << 16, 1 << 15))
            .unwrap()
            .starts_with("N x K"));
        assert!(problem_violation(&p(1 << 16, 1 << 15, 16))
            .unwrap()
            .starts_with("M x N"));
        assert_eq!(problem_violation(&p(46340, 46340, 46340)), None);
    }
}
