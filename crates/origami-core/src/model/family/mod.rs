//! Kernel families: what a GEMM kernel can be launched with (config space), its MMA atom,
//! its shared-memory formula and its register count, and so which configs are feasible.
//! This module holds what every family shares (the [`KernelFamily`] trait, [`Candidate`],
//! [`MmaAtom`], the default launch preference) and the registry; each family is one file:
//!
//! - [`seed`]: the NVIDIA port report's family (section 2.1): 150 tiles, 8 warps, 2
//!   stages, no register check.
//! - [`triton`]: Triton's tutorial matmul on NVIDIA, with Triton's compiled table on Hopper
//!   (`triton/compiled_table.rs`, data/triton_sm90.csv) and a register estimate elsewhere;
//!   shapes with N or K not a multiple of 16 run its unaligned variants
//!   (`triton/unaligned.rs`, data/triton_sm90_unaligned.csv).
//! - [`origami`]: the project's own kernel (csrc/gemm.cu); its file owns the kernel's
//!   config rule, and ptxas's register table (`origami/register_table.rs`,
//!   data/gemm_registers.csv) rejects the configs that spill.
//! - [`hopper`]: the project's Hopper kernel (csrc/hopper_gemm.cu: TMA, wgmma, warp
//!   specialization, persistent grid); ptxas's table (`hopper/compiled_table.rs`,
//!   data/hopper_sm90.csv) rejects configs that spill or that ptxas warns about.
//!
//! Adding a family: write `<name>.rs` in this folder with a unit struct implementing
//! [`KernelFamily`] and a `pub const NAME` (its command-line name); put what it reads from
//! the compiler or a measurement in `data/` and parse it in `<name>/<table>.rs`, declared
//! by `<name>.rs`; then declare the module below and add one line to `REGISTRY`.
//! `family(name)`, `FAMILY_NAMES` and the CLIs' `--family` follow from the registry.

use crate::dtype::Dtype;
use crate::hw::GpuDesc;

use super::problem::{Config, Problem, Switches};
use crate::constants::ModelConstants;

pub mod hopper;
pub mod origami;
pub mod seed;
pub mod triton;
pub mod triton_persistent;

pub use hopper::HopperFamily;
pub use origami::OrigamiFamily;
pub use seed::SeedFamily;
pub use triton::{triton_mma_warps, TritonFamily, TritonRegisterModel};
pub use triton_persistent::TritonTmaFamily;

/// Every family with its command-line name, in the order `FAMILY_NAMES` lists them.
const REGISTRY: &[(&str, &dyn KernelFamily)] = &[
    (triton::NAME, &TritonFamily),
    (triton_persistent::NAME, &TritonTmaFamily),
    (origami::NAME, &OrigamiFamily),
    (hopper::NAME, &HopperFamily),
    (seed::NAME, &SeedFamily),
];

/// Family by name (case and surrounding blanks ignored).
pub fn family(name: &str) -> Option<&'static dyn KernelFamily> {
    let wanted = name.trim().to_ascii_lowercase();
    REGISTRY.iter().find(|(n, _)| *n == wanted).map(|(_, f)| *f)
}

/// Names of every family, in registry order.
pub const FAMILY_NAMES: [&str; REGISTRY.len()] = registry_names();

const fn registry_names<const N: usize>() -> [&'static str; N] {
    let mut names = [""; N];
    let mut i = 0;
    while i < N {
        names[i] = REGISTRY[i].0;
        i += 1;
    }
    names
}

/// MMA instruction shape (the NVIDIA port report, appendix C.3).
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

/// A persistent kernel's tile loop (the `triton-tma` family): one program per SM walks
/// ceil(tiles / SMs) tiles in turn; the block set-up is paid once per program, the
/// pipeline fill once per tile, or once per program when the loop is flattened
/// (`overlapped_fill`: the next tile's loads are issued while the current one finishes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PersistentLoop {
    pub overlapped_fill: bool,
    /// The GROUP_SIZE_M of Triton's grouped tile order the programs walk (program p takes
    /// tiles p, p + programs, ...; `group::grouped_tile`), whatever the config's own
    /// group: `None` for a kernel with another order.
    pub grouped_order: Option<u32>,
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

/// Most compiled variants a family may have (`FamilyVariant::index` is below this).
pub const MAX_VARIANTS: usize = 4;

/// One compiled variant of a family (`KernelFamily::problem_variant`).
#[derive(Clone, Copy)]
pub struct FamilyVariant {
    /// Which variant, below [`MAX_VARIANTS`]: the selector keeps one set of configs per index.
    pub index: usize,
    pub family: &'static dyn KernelFamily,
    /// What the variant is, for the selection's walkthrough.
    pub note: &'static str,
}

/// Memory-instruction costs of a compiled kernel beyond the family's vectorised copies
/// (`KernelFamily::issue_costs`), in SM cycles of its load/store units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IssueCosts {
    /// Per block and K iteration, shared by the resident blocks.
    pub lsu_cycles_per_iter: f64,
    /// Per block (its epilogue).
    pub lsu_cycles_per_block: f64,
    /// Pipeline stages the kernel keeps (replaces `num_stages` in the model).
    pub stages: u32,
}

/// A kernel family.
pub trait KernelFamily: Sync {
    /// Name used on the command line (the family file's `NAME`).
    fn name(&self) -> &'static str;
    /// MMA atom the kernel uses for this input type.
    fn mma_atom(&self, dtype: Dtype) -> MmaAtom {
        mma_sync_atom(dtype)
    }
    /// The (BLOCK_M, BLOCK_N, BLOCK_K) space.
    fn tiles(&self) -> Vec<(u32, u32, u32)>;
    /// The (num_warps, num_stages) space.
    fn launches(&self) -> Vec<(u32, u32)>;
    /// The switch settings of the space (Triton's Hopper kernel's compile-time switches,
    /// the hopper kernel's `swap`; none elsewhere).
    fn switch_settings(&self) -> Vec<Switches> {
        vec![Switches::NONE]
    }
    /// The split-K factors of the space (1: none; a family whose kernel can cut each
    /// tile's K iterations into runs and add the partial tiles lists more).
    fn split_ks(&self) -> &'static [u32] {
        &[1]
    }
    /// Whether the space also holds each launch with Stream-K (a kernel whose persistent
    /// grid can share a tile's K iterations between two CTAs).
    fn stream_k(&self) -> bool {
        false
    }
    /// Whether the selection's pick may take Stream-K (phase 3, `Selector::stream_k_twin`),
    /// and up to which share of the busiest CTA's iterations in its range
    /// (`TileGrid::stream_range_share`): the kernel runs any whole-tile launch with Stream-K
    /// (`,sk`), and the pick becomes that launch where the model prices it faster than the
    /// whole-tile grid and the ranges are at most that share of the work. `None`: never.
    fn stream_k_twin(&self) -> Option<f64> {
        None
    }
    /// Whether the kernel takes Triton's compile-time switches (some setting of its space
    /// sets WARP_SPECIALIZE, FLATTEN or EPILOGUE_SUBTILE): its configs are written with them
    /// (`--format csv`, `json`, `triton`). The hopper kernel's `swap` is written with its
    /// decomposition (SPLIT_K, STREAM_K, SWAP).
    fn takes_switches(&self) -> bool {
        self.switch_settings()
            .iter()
            .any(|s| s.flatten || s.warp_specialize || s.epilogue_subtile)
    }
    /// The name of the Triton kernel function a config of the family launches, for a
    /// family that is a Triton kernel (`--format triton` names it).
    fn triton_kernel(&self) -> Option<&'static str> {
        None
    }
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
    /// BM / WARPS_M rows of A and BN / WARPS_N columns of B).
    fn warp_grid(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> (u32, u32);
    /// Whether a config runs on Hopper's wgmma (the throughput model's `tp_wgmma_min_n`).
    fn uses_wgmma(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> bool {
        false
    }
    /// The GROUP_SIZE_M values phase 2 chooses among (the NVIDIA port report's list unless
    /// the family's kernel is measured at fewer).
    fn group_sizes(&self) -> &'static [u32] {
        &crate::model::group::GROUP_SIZES
    }
    /// Whether the tie band ranks, after intensity and orientation, the launch that reads
    /// fewer shared-memory fragment bytes per output element first.
    fn band_prefers_fewer_fragment_bytes(&self) -> bool {
        false
    }
    /// Whether the space's swapped launches (`swap`: C^T = B A^T) are selectable for a
    /// problem (false: the family has none, or they cannot pay there; a swapped config asked
    /// by name is still priced).
    fn swaps_operands(&self, _p: &Problem) -> bool {
        false
    }
    /// Whether, in a launch whose tiles all run at once (phase 2's costs tie), the kernel
    /// runs faster when consecutive CTAs share a tile of the larger operand: a group of one
    /// (consecutive CTAs along a tile row, sharing A's tile) when the launch's rows outnumber
    /// its columns, else the largest group (down a column, sharing B's). `false`: ties go by
    /// `phase2_prefer_larger_group`.
    fn one_wave_groups_by_operand(&self) -> bool {
        false
    }
    /// The kernel's persistent tile loop, if it has one (one program per SM walking the
    /// tiles; the throughput model prices it, `throughput::PersistentLoop`).
    fn persistent_loop(&self, _c: &Config) -> Option<PersistentLoop> {
        None
    }
    /// Whether the kernel loads whole tensor-descriptor boxes (TMA): a tile's rows or
    /// columns past the matrix edge are zero-filled by the copy engine rather than skipped
    /// by a mask, and the throughput model prices them (`tp_box_padding_weight`).
    fn loads_whole_boxes(&self) -> bool {
        false
    }
    /// Why the family's kernel cannot run a problem at all, whatever the config (an
    /// alignment rule, a size limit of its arguments), if so. The selector refuses such a
    /// problem with this reason, the runner that launches the kernel with the same one.
    fn problem_violation(&self, _p: &Problem) -> Option<String> {
        None
    }
    /// Extra family-specific rejection (invalid warp tiling, ...).
    fn invalid_reason(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> Option<String> {
        None
    }
    /// The kernel the family's compiler makes for this problem when it is not the family's
    /// own (Triton specialises on N and K being multiples of 16): the selector scores the
    /// problem with that variant's configs. `None`: the family itself.
    fn problem_variant(&self, _p: &Problem, _gpu: &GpuDesc) -> Option<FamilyVariant> {
        None
    }
    /// What a config's compiled kernel spends on memory instructions beyond the family's
    /// vectorised copies, and the pipeline depth it really keeps; `None`: nothing beyond,
    /// `num_stages` stages.
    fn issue_costs(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> Option<IssueCosts> {
        None
    }

    /// Every config of the space: tiles x launches (x switches x decompositions), GROUP_SIZE_M 1 (phase 2 sets it; it is
    /// a run-time argument of the kernels), in the order the selector enumerates them.
    fn configs(&self) -> Vec<Config> {
        let launches = self.launches();
        let settings = self.switch_settings();
        let mut v = Vec::new();
        for (bm, bn, bk) in self.tiles() {
            for &(w, s) in &launches {
                for &switches in &settings {
                    let one = Config::launch((bm, bn, bk), w, s, switches);
                    for &split_k in self.split_ks() {
                        v.push(Config { split_k, ..one });
                    }
                    if self.stream_k() {
                        v.push(Config {
                            stream_k: true,
                            ..one
                        });
                    }
                }
            }
        }
        v
    }

    /// Every config the family's compiler table holds, GROUP_SIZE_M 1, in a fixed order:
    /// a space wider than the one the selection ranks, for fitting the learned correction
    /// on every launch a sweep timed (`origami-bench fit-correction --fit-space compiled`).
    /// The space itself (`configs`) for a family without a wider table.
    fn compiled_configs(&self) -> Vec<Config> {
        self.configs()
    }

    /// Every config of the space with its feasibility, GROUP_SIZE_M left at 1 (phase 2
    /// sets it).
    fn candidates(&self, dtype: Dtype, gpu: &GpuDesc) -> Vec<Candidate> {
        self.candidates_of(self.configs(), dtype, gpu)
    }

    /// These configs of the family with their feasibility, by the family's rules.
    fn candidates_of(&self, configs: Vec<Config>, dtype: Dtype, gpu: &GpuDesc) -> Vec<Candidate> {
        let limit = gpu.smem_per_block_optin_bytes;
        let candidate = |config: Config| {
            let smem = self
                .compiled_smem_bytes(&config, dtype, gpu)
                .unwrap_or_else(|| self.smem_bytes(&config, dtype));
            let registers = self.registers(&config, dtype, gpu);
            let rejected = if smem > limit {
                Some(smem_over_limit(smem, limit))
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
            Candidate {
                config,
                smem_bytes: smem,
                registers,
                rejected,
            }
        };
        configs.into_iter().map(candidate).collect()
    }
}

/// The data rows of a compiler table embedded from `data/`, numbered from 1: `#` comment
/// lines and blank lines are skipped and the first remaining line must be `header`.
pub(crate) fn table_rows<'t>(
    text: &'t str,
    header: &str,
) -> Result<impl Iterator<Item = (usize, &'t str)>, String> {
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let first = lines.next().ok_or("empty table")?;
    if first.trim() != header {
        return Err(format!("unexpected header: {first}"));
    }
    Ok(lines.enumerate().map(|(i, line)| (i + 1, line)))
}

/// A kernel's `-D` defines as nvcc and NVRTC take them: `-DNAME=VALUE`, or `-DNAME` for a
/// flag without a value.
pub fn define_flags(defines: &[(&str, Option<u32>)]) -> Vec<String> {
    defines
        .iter()
        .map(|(name, value)| match value {
            Some(v) => format!("-D{name}={v}"),
            None => format!("-D{name}"),
        })
        .collect()
}

/// The rejection of a config whose shared memory exceeds a block's opt-in limit.
pub fn smem_over_limit(smem_bytes: u64, limit_bytes: u64) -> String {
    format!("shared memory {smem_bytes} B > {limit_bytes} B opt-in limit")
}

/// Bytes of one BLOCK_K slice of the A and B tiles, (BM BK + BK BN) x element bytes: one
/// pipeline stage of a kernel that stages both operands in shared memory.
pub fn operand_tile_bytes(c: &Config, dtype: Dtype) -> f64 {
    (f64::from(c.block_m) * f64::from(c.block_k) + f64::from(c.block_k) * f64::from(c.block_n))
        * dtype.bytes()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_match_the_families() {
        assert_eq!(
            FAMILY_NAMES,
            ["triton", "triton-tma", "origami", "hopper", "seed"]
        );
        for (name, fam) in REGISTRY {
            assert_eq!(fam.name(), *name);
            assert_eq!(family(name).map(|f| f.name()), Some(*name));
        }
        assert_eq!(family(" Origami ").map(|f| f.name()), Some("origami"));
        assert!(family("cutlass").is_none());
    }

    #[test]
    fn atoms() {
        assert_eq!(mma_sync_atom(Dtype::Fp16), MmaAtom { m: 16, n: 8, k: 16 });
        assert_eq!(mma_sync_atom(Dtype::Fp8E4m3).k, 32);
        assert_eq!(mma_sync_atom(Dtype::Fp32).k, 8);
    }

    #[test]
    fn launch_ranks_follow_the_constants() {
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
}
