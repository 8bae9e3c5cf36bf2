//! Kernel families: what a GEMM kernel can be launched with (config space), its MMA atom,
//! its shared-memory formula and its register estimate, and so which configs are feasible.
//!
//! - `seed`: seed 000 section 2.1: 5 x 5 x 6 = 150 tiles, num_warps 8, num_stages 2,
//!   shared memory (BM BK + BK BN) x bytes, no register check (the port's failure).
//! - `triton`: Triton's tutorial matmul on NVIDIA: the same tiles, num_warps {4, 8},
//!   num_stages {2, 3, 4}, shared memory num_stages x (BM BK + BK BN) x bytes, and a
//!   register estimate (fp32 accumulators + operand fragments + overhead) above 255 per
//!   thread marks the config "spills" and never picks it.

use crate::dtype::Dtype;
use crate::hw::GpuDesc;

use super::constants::ModelConstants;
use super::problem::Config;

/// MMA instruction shape (seed 000 appendix C.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MmaAtom {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// The mma.sync atom per input type: m16n8k16 for 16-bit, m16n8k32 for 8-bit,
/// m16n8k8 for tf32/fp32 inputs.
pub fn mma_sync_atom(dtype: Dtype) -> MmaAtom {
    let k = match dtype.bits() {
        32 => 8,
        16 => 16,
        _ => 32,
    };
    MmaAtom { m: 16, n: 8, k }
}

/// One config of a family for one GPU and dtype, with its feasibility.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub config: Config,
    pub smem_bytes: u64,
    /// Registers per thread: compiler-reported for families with a table, else estimated.
    pub registers: Option<u32>,
    /// Why the config can't be used (shared memory, registers/spills), if so.
    pub rejected: Option<String>,
}

impl Candidate {
    pub fn feasible(&self) -> bool {
        self.rejected.is_none()
    }
}

/// A kernel family.
pub trait KernelFamily: Sync {
    /// Name used on the command line.
    fn name(&self) -> &'static str;
    /// MMA atom the kernel uses for this input type.
    fn mma_atom(&self, dtype: Dtype) -> MmaAtom {
        mma_sync_atom(dtype)
    }
    /// The (BLOCK_M, BLOCK_N, BLOCK_K) space.
    fn tiles(&self) -> Vec<(u32, u32, u32)>;
    /// The (num_warps, num_stages) space.
    fn launches(&self) -> Vec<(u32, u32)>;
    /// Shared memory a config needs, bytes.
    fn smem_bytes(&self, c: &Config, dtype: Dtype) -> u64;
    /// Shared memory the compiler gave a config on this GPU, when a table knows it (it then
    /// replaces `smem_bytes`).
    fn compiled_smem_bytes(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> Option<u64> {
        None
    }
    /// Registers per thread (estimate or compiler table); `None` when not modeled.
    fn registers(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u32>;
    /// Preference among configs of one tile (lower is preferred): which launch of a tile
    /// the selector reports first.
    fn launch_preference(&self, c: &Config, k: &ModelConstants) -> f64;
    /// Tensor-core speed of a config relative to the family's MMA atom: multiplies
    /// L_compute (1 unless the family runs some configs on a faster instruction).
    fn compute_scale(
        &self,
        _c: &Config,
        _dtype: Dtype,
        _gpu: &GpuDesc,
        _k: &ModelConstants,
    ) -> f64 {
        1.0
    }
    /// Warp grid (WARPS_M, WARPS_N) of a config: how the block's warps split its tile
    /// (throughput model's fragment reads: each of the WARPS_M x WARPS_N readers reads its
    /// BM / WARPS_M rows of A and BN / WARPS_N columns of B). Default: the project kernel's
    /// rule.
    fn warp_grid(&self, c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> (u32, u32) {
        super::family_origami::warp_grid(c)
    }
    /// Whether a config runs on Hopper's wgmma (the throughput model's `tp_wgmma_min_n`).
    fn uses_wgmma(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> bool {
        false
    }
    /// Extra family-specific rejection (invalid warp tiling, ...).
    fn invalid_reason(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> Option<String> {
        None
    }

    /// Every config with its feasibility, GROUP_SIZE_M left at 1 (phase 2 sets it).
    fn candidates(&self, dtype: Dtype, gpu: &GpuDesc) -> Vec<Candidate> {
        let mut out = Vec::new();
        for (bm, bn, bk) in self.tiles() {
            for (w, s) in self.launches() {
                let config = Config {
                    block_m: bm,
                    block_n: bn,
                    block_k: bk,
                    group_m: 1,
                    num_warps: w,
                    num_stages: s,
                };
                let smem = self
                    .compiled_smem_bytes(&config, dtype, gpu)
                    .unwrap_or_else(|| self.smem_bytes(&config, dtype));
                let registers = self.registers(&config, dtype, gpu);
                let rejected = if smem > gpu.smem_per_block_optin_bytes {
                    Some(format!(
                        "shared memory {smem} B > {} B opt-in limit",
                        gpu.smem_per_block_optin_bytes
                    ))
                } else if let Some(why) = self.invalid_reason(&config, dtype, gpu) {
                    Some(why)
                } else {
                    match registers {
                        Some(r) if r > gpu.max_registers_per_thread => Some(format!(
                            "spills: {r} registers/thread > {}",
                            gpu.max_registers_per_thread
                        )),
                        _ => None,
                    }
                };
                out.push(Candidate {
                    config,
                    smem_bytes: smem,
                    registers,
                    rejected,
                });
            }
        }
        out
    }
}

/// The launch order both mma.sync families prefer among configs of one tile (lower is
/// preferred): 8 warps for tiles of at least `launch_wide_tile_area` output elements, 4
/// below; then the stage ranks. Defaults: 8 warps from 128 x 128, then 3, 4, 2 stages; the
/// calibration file can carry the order measured on a GPU (origami-bench refit).
pub fn default_launch_preference(c: &Config, k: &ModelConstants) -> f64 {
    let want_w = if f64::from(c.block_m * c.block_n) >= k.launch_wide_tile_area {
        8
    } else {
        4
    };
    let w = if c.num_warps == want_w { 0.0 } else { 10.0 };
    let s = match c.num_stages {
        2 => k.stage_rank_2,
        3 => k.stage_rank_3,
        4 => k.stage_rank_4,
        other => f64::from(other),
    };
    w + s
}

const TILE_MN: [u32; 5] = [16, 32, 64, 128, 256];
const TILE_K: [u32; 6] = [16, 32, 64, 128, 256, 512];

fn seed_tiles() -> Vec<(u32, u32, u32)> {
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

fn operand_bytes(c: &Config, dtype: Dtype) -> f64 {
    (f64::from(c.block_m) * f64::from(c.block_k) + f64::from(c.block_k) * f64::from(c.block_n))
        * dtype.bytes()
}

/// Seed 000's family.
pub struct SeedFamily;

impl KernelFamily for SeedFamily {
    fn name(&self) -> &'static str {
        "seed"
    }
    fn tiles(&self) -> Vec<(u32, u32, u32)> {
        seed_tiles()
    }
    fn launches(&self) -> Vec<(u32, u32)> {
        vec![(8, 2)]
    }
    fn smem_bytes(&self, c: &Config, dtype: Dtype) -> u64 {
        operand_bytes(c, dtype).ceil() as u64
    }
    fn registers(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> Option<u32> {
        None
    }
    fn launch_preference(&self, _c: &Config, _k: &ModelConstants) -> f64 {
        0.0
    }
}

/// Triton's tutorial matmul.
pub struct TritonFamily;

/// Register estimate constants of the Triton family (per thread).
pub struct TritonRegisterModel;

impl TritonRegisterModel {
    /// Registers for addresses, indices, loop state (assumed).
    pub const OVERHEAD: u32 = 40;
}

impl KernelFamily for TritonFamily {
    fn name(&self) -> &'static str {
        "triton"
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
        (f64::from(c.num_stages) * operand_bytes(c, dtype)).ceil() as u64
    }
    fn compiled_smem_bytes(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u64> {
        triton_compiled(c, dtype, gpu).map(|t| t.smem_bytes)
    }
    /// Triton's compiler on Hopper (`triton_table.rs`); elsewhere an estimate: fp32
    /// accumulators BM BN / threads, plus the operand fragments of one BK slice held in
    /// 32-bit registers ((BM + BN) BK bytes / 4 / threads), plus overhead.
    fn registers(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u32> {
        if let Some(t) = triton_compiled(c, dtype, gpu) {
            return Some(t.registers);
        }
        let threads = 32 * c.num_warps;
        let acc = (c.block_m * c.block_n).div_ceil(threads);
        let frag = (operand_bytes(c, dtype) / 4.0 / f64::from(threads)).ceil() as u32;
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
            let groups = (c.num_warps / 4).max(1);
            let along_m = groups.min((c.block_m / 64).max(1));
            (along_m, groups / along_m)
        } else {
            triton_mma_warps(c)
        }
    }
}

/// Triton's compiled numbers for a config on this GPU, if its table covers them.
fn triton_compiled(
    c: &Config,
    dtype: Dtype,
    gpu: &GpuDesc,
) -> Option<super::triton_table::TritonCompiled> {
    super::triton_table::compiled(c, dtype, gpu)
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

/// Family by name.
pub fn family(name: &str) -> Option<&'static dyn KernelFamily> {
    match name.trim().to_ascii_lowercase().as_str() {
        "seed" => Some(&SeedFamily),
        "triton" => Some(&TritonFamily),
        "origami" => Some(&super::family_origami::OrigamiFamily),
        _ => None,
    }
}

/// Names of every family.
pub const FAMILY_NAMES: [&str; 3] = ["triton", "origami", "seed"];

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
        // Seed 000 section 2.1 reports "~122 valid configs" with 99 KB.
        assert!((115..=130).contains(&feasible), "{feasible}");
    }

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
        };
        assert_eq!(
            TritonFamily.smem_bytes(&c, Dtype::Fp16),
            3 * (128 * 64 * 2) * 2
        );
    }

    #[test]
    fn triton_wgmma_scale_and_launch_ranks_follow_the_constants() {
        let gpu = preset("h200").unwrap().gpu;
        let mut k = ModelConstants::default();
        let c = |bm, w, s| Config {
            block_m: bm,
            block_n: 128,
            block_k: 64,
            group_m: 1,
            num_warps: w,
            num_stages: s,
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
        // Default ranks: 8 warps from 128 x 128, stages 3 < 4 < 2.
        let d = ModelConstants::default();
        let p = |cfg: Config, k: &ModelConstants| default_launch_preference(&cfg, k);
        assert!(
            p(c(128, 8, 3), &d) < p(c(128, 8, 4), &d) && p(c(128, 8, 4), &d) < p(c(128, 8, 2), &d)
        );
        assert!(p(c(128, 8, 2), &d) < p(c(128, 4, 3), &d));
        assert!(p(c(64, 4, 2), &d) < p(c(64, 8, 3), &d));
        // A measured order from a calibration file: 8 warps from 64 x 128, stages 4 < 3 < 2.
        let m = ModelConstants::with_overrides([
            ("launch_wide_tile_area", 8192.0),
            ("stage_rank_2", 3.0),
            ("stage_rank_3", 2.0),
            ("stage_rank_4", 1.0),
        ])
        .unwrap();
        assert!(p(c(64, 8, 4), &m) < p(c(64, 8, 3), &m) && p(c(64, 8, 3), &m) < p(c(64, 4, 4), &m));
    }

    #[test]
    fn atoms() {
        assert_eq!(mma_sync_atom(Dtype::Fp16), MmaAtom { m: 16, n: 8, k: 16 });
        assert_eq!(mma_sync_atom(Dtype::Fp8E4m3).k, 32);
        assert_eq!(mma_sync_atom(Dtype::Fp32).k, 8);
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
}
