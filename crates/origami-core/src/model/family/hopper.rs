//! The `hopper` kernel family: the project's Hopper kernel (csrc/hopper_gemm.cu,
//! docs/hopper-kernel.md): TMA loads into an mbarrier ring, one producer warpgroup and one
//! or two consumer warpgroups issuing wgmma m64nBNk16 from shared memory, a persistent
//! grid in grouped order, a TMA-store epilogue. Compute capability 9.x, fp16 or bf16.
//!
//! Its space (this file owns the rule, the kernel checks the same limits with
//! static_asserts): BLOCK_M 64, 128 or 256; BLOCK_N 16 to 256 in steps of 16 (finer N
//! tiles against wave quantization, as DeepSeek's DeepGEMM does); BLOCK_K 64 (one
//! 128-byte swizzle atom per row); 2 to 8 stages; one consumer warpgroup (8 warps with the
//! producer) or two (12 warps), each owning BLOCK_M / consumers rows, 64 per wgmma. A
//! config must keep its accumulators, (BLOCK_M / consumers / 64) x BLOCK_N / 2 floats per
//! thread, within 128 registers with two consumers (232 each after setmaxnreg) or 192
//! with one (240), and its shared memory, the operand ring plus two C chunks per consumer
//! plus 1 KiB of alignment and the barriers, within the GPU's opt-in limit. GROUP_SIZE_M
//! is a run-time argument (phase 2 chooses it). Registers, stack and spills per config
//! come from ptxas (`compiled_table.rs`, data/hopper_sm90.csv): a config that spills or
//! that ptxas warns about (it warns when it serializes wgmma) is never picked.
//!
//! Split-K (`,k2` to `,k4` in the config text): each tile's K iterations in 2 to 4 runs,
//! each run a work item of the persistent grid writing an fp32 partial tile to a
//! workspace, and a second kernel adding the runs in order (deterministic); the model
//! prices the finer work items, the partial tiles' traffic and the second kernel
//! (`throughput::split_runs`, `tp_splitk_reduce_cycles`). Stream-K (`,sk`): every tile's
//! K iterations cut into one even range per CTA; a tile shared by CTAs is finished by the
//! one holding its first K iterations, which adds the others' fp32 partial tiles in CTA
//! order (deterministic) in the same kernel (`throughput::TileGrid::stream`); out of the
//! selectable space until a GPU run has checked it (`stream_k`).
//!
//! Its constants: the throughput model fitted on the H200's brute force over the seed list
//! (`calibrations/fitted/h200-hopper.json`, applied on compute capability 9.x).

use crate::constants::ModelConstants;
use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::problem::{Config, Problem, Switches};

use super::{default_launch_preference, KernelFamily, PersistentLoop};

pub mod compiled_table;
pub mod config_list;

use compiled_table::HopperCompiled;

/// Command-line name.
pub const NAME: &str = "hopper";

/// The project's TMA + wgmma kernel.
pub struct HopperFamily;

/// Accumulators (floats) a thread may hold: 128 with two consumer
/// warpgroups, 192 with one (csrc/hopper_gemm.cu's static_assert).
fn accumulator_limit(consumers: u32) -> u32 {
    if consumers == 1 {
        192
    } else {
        128
    }
}

/// Consumer warpgroups of a config: its warps less the producer's four, over four.
pub fn consumers(c: &Config) -> u32 {
    (c.num_warps / 4).saturating_sub(1)
}

/// Columns of one epilogue chunk: the widest of 64, 32, 16 that divides BLOCK_N.
pub fn c_box_cols(block_n: u32) -> u32 {
    if block_n % 64 == 0 {
        64
    } else if block_n % 32 == 0 {
        32
    } else {
        16
    }
}

/// Shared memory of a config, bytes: the kernel's `origami_hopper_gemm_smem_bytes`.
pub fn smem_bytes(c: &Config) -> u64 {
    let stage = u64::from(c.block_m + c.block_n) * u64::from(c.block_k) * 2;
    let chunks = u64::from(consumers(c)) * 2 * 64 * u64::from(c_box_cols(c.block_n)) * 2;
    u64::from(c.num_stages) * stage + chunks + 1024 + 16 * u64::from(c.num_stages)
}

/// Why a config is not an instance of the kernel, if so (the kernel's static_asserts).
pub fn config_violation(c: &Config) -> Option<String> {
    let k = consumers(c);
    if c.block_k != 64 {
        return Some(format!("BLOCK_K must be 64, not {}", c.block_k));
    }
    if !(k == 1 || k == 2) || c.num_warps % 4 != 0 {
        return Some(format!(
            "{} warps: the kernel runs 8 (one consumer warpgroup) or 12 (two)",
            c.num_warps
        ));
    }
    if c.block_m % (64 * k) != 0 || c.block_m > 256 {
        return Some(format!(
            "BLOCK_M {} is not a multiple of 64 per consumer warpgroup ({k}) up to 256",
            c.block_m
        ));
    }
    if c.block_n % 16 != 0 || !(16..=256).contains(&c.block_n) {
        return Some(format!(
            "BLOCK_N {} is not a multiple of 16 in 16..256",
            c.block_n
        ));
    }
    let acc = c.block_m / k / 64 * c.block_n / 2;
    if acc > accumulator_limit(k) {
        return Some(format!(
            "{acc} accumulators per thread > {} with {k} consumer warpgroup(s)",
            accumulator_limit(k)
        ));
    }
    let others = c.switches.outside(Switches {
        cluster: true,
        swap: true,
        ..Switches::NONE
    });
    if others.any() {
        return Some(format!(
            "the switches {} are other kernels': this kernel takes only `cluster` and `swap`",
            others.words()
        ));
    }
    if c.switches.cluster && (c.split_k > 1 || c.stream_k) {
        return Some("`cluster` runs whole tiles: no split-K or Stream-K with it".into());
    }
    None
}

/// The `-D` defines of a config's instance (csrc/hopper_gemm.cu's configuration), as
/// (name, value): the runner's NVRTC options and the scripts' nvcc flags.
pub fn defines(c: &Config, dtype: Dtype) -> Vec<(&'static str, Option<u32>)> {
    let mut d = vec![
        ("HG_BM", Some(c.block_m)),
        ("HG_BN", Some(c.block_n)),
        ("HG_BK", Some(c.block_k)),
        ("HG_STAGES", Some(c.num_stages)),
        ("HG_CONSUMERS", Some(consumers(c))),
    ];
    if dtype == Dtype::Bf16 {
        d.push(("HG_BF16", None));
    }
    if c.stream_k {
        // an instance that can run Stream-K (its fix-up costs registers the others keep)
        d.push(("HG_STREAM_K", Some(1)));
    }
    if c.switches.cluster {
        // CTAs in pairs sharing A or B by TMA multicast (`__cluster_dims__(2, 1, 1)`)
        d.push(("HG_CLUSTER", Some(2)));
    }
    d
}

/// Why the kernel cannot run a problem, if so: fp16 or bf16 inputs, and K a multiple of 8
/// (TMA needs A's and B's rows in multiples of 16 bytes). N is free (C is stored from
/// registers when its rows are not 16-byte multiples).
pub fn problem_violation(p: &Problem) -> Option<String> {
    if !matches!(p.dtype, Dtype::Fp16 | Dtype::Bf16) {
        return Some(format!(
            "{NAME} takes fp16 or bf16 inputs, not {}",
            p.dtype.name()
        ));
    }
    if p.k % 8 != 0 {
        return Some(format!(
            "K = {} is not a multiple of 8: TMA needs A's and B's row strides in multiples of 16 bytes",
            p.k
        ));
    }
    None
}

impl KernelFamily for HopperFamily {
    fn name(&self) -> &'static str {
        NAME
    }
    fn problem_violation(&self, p: &Problem) -> Option<String> {
        problem_violation(p)
    }
    fn tiles(&self) -> Vec<(u32, u32, u32)> {
        let mut v = Vec::new();
        for bm in [64, 128, 256] {
            for bn in (16..=256).step_by(16) {
                v.push((bm, bn, 64));
            }
        }
        v
    }
    fn launches(&self) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for w in [8, 12] {
            for s in 2..=8 {
                v.push((w, s));
            }
        }
        v
    }
    /// Each config as it is and with `swap` (C^T = B A^T: the user's rows on wgmma's N,
    /// in steps of 16; a run-time argument of the same instance).
    fn switch_settings(&self) -> Vec<Switches> {
        vec![
            Switches::NONE,
            Switches {
                swap: true,
                ..Switches::NONE
            },
        ]
    }
    /// Split-K in 2, 3 or 4 runs (csrc/hopper_gemm.cu's `k_per_split`; on the H200 two of
    /// eight shapes that leave SMs idle gained, at 2 and 4 runs, none at 6 or 8:
    /// results/h200/hopper/splitk/).
    fn split_ks(&self) -> &'static [u32] {
        &[1, 2, 3, 4]
    }
    /// Stream-K (csrc/hopper_gemm.cu's `WorkIter`) is not a launch of the space of its own:
    /// on an H100 it lost to the whole-tile grid wherever the ranges are much of the work
    /// (4096^3: 11 %; shapes of fewer than two rounds: up to 46 %), which the model prices
    /// only in part (results/h100/hopper/streamk-large/). It is the pick's twin instead.
    fn stream_k(&self) -> bool {
        false
    }
    /// The pick takes Stream-K where the model prices it faster than the whole-tile grid
    /// (phase 3) and the ranges are at most a quarter of the busiest CTA's iterations: on
    /// an H100 that held on all ten shape and type pairs where it applies among the seed and
    /// LLM lists' picks (whole / Stream-K 1.004-1.090, eight passes, the ranges 2-22 % of
    /// the work; results/h100/hopper/streamk-large/twin/). Where the ranges are half the
    /// work or more the model's price was too kind on long K (2048x8192x28672: 0.997
    /// predicted, 0.68 measured; 333x4096x14336, all of it in ranges: 0.981 and 0.72).
    fn stream_k_twin(&self) -> Option<f64> {
        Some(0.25)
    }
    fn smem_bytes(&self, c: &Config, _dtype: Dtype) -> u64 {
        smem_bytes(c)
    }
    fn registers(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u32> {
        match compiled_table::compiled(c, dtype, gpu)? {
            HopperCompiled::Ok { registers, .. } => Some(*registers),
            HopperCompiled::Failed => None,
        }
    }
    /// Hopper only; an instance of the kernel; then what ptxas said of it.
    fn invalid_reason(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<String> {
        let [major, minor] = gpu.compute_capability;
        if major != 9 {
            return Some(format!(
                "needs compute capability 9.x (TMA, wgmma, setmaxnreg); {} is {major}.{minor}",
                gpu.name
            ));
        }
        if let Some(why) = config_violation(c) {
            return Some(why);
        }
        match compiled_table::compiled(c, dtype, gpu) {
            None => Some(format!(
                "not in the compiled table for {} (data/hopper_sm90.csv)",
                dtype.name()
            )),
            Some(HopperCompiled::Failed) => Some("nvcc does not compile it for sm_90a".into()),
            Some(HopperCompiled::Ok {
                spill_bytes,
                warnings,
                registers,
            }) if *spill_bytes > 0 || *warnings > 0 => Some(format!(
                "ptxas: {spill_bytes} B spilled or on the stack, {warnings} warning(s) at {registers} registers (sm_90a)"
            )),
            Some(HopperCompiled::Ok { .. }) => None,
        }
    }
    fn launch_preference(&self, c: &Config, k: &ModelConstants) -> f64 {
        default_launch_preference(c, k)
    }
    fn uses_wgmma(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> bool {
        true
    }
    fn compute_scale(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc, k: &ModelConstants) -> f64 {
        1.0 / k.wgmma_speedup
    }
    /// The wgmma readers: each consumer warpgroup reads its rows of A and all of B's tile.
    fn warp_grid(&self, c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> (u32, u32) {
        ((c.block_m / 64).max(1), 1)
    }
    /// One CTA per SM walks its tiles; the producer loads the next tile's stages while the
    /// consumers finish the current one.
    fn persistent_loop(&self, _c: &Config) -> Option<PersistentLoop> {
        Some(PersistentLoop {
            overlapped_fill: true,
            grouped_order: None,
        })
    }
    /// A and B arrive as TMA boxes of BLOCK rows x 64.
    fn loads_whole_boxes(&self) -> bool {
        true
    }
    /// A consumer warpgroup issues one m64nBN wgmma per 64 rows, each reading B's whole tile
    /// from shared memory: 64x128 (one block of n128) reads 25 % less per output than
    /// 128x64 (two of n64). Among configs the model predicts within the tie band, the
    /// one that reads less ran faster on an H100: 1024^3's 64x128x64,w8,s7 at 6.5 us
    /// against 128x64x64,w8,s7 at 7.8 (`results/h100/hopper/swap/groups-1024-*.json`).
    fn band_prefers_fewer_fragment_bytes(&self) -> bool {
        true
    }
    /// Only when the user's rows are the fewer (M < N): swapping puts the rows on wgmma's N,
    /// in steps of 16, and the columns on BLOCK_M's steps of 64; with M >= N that moves the
    /// coarser steps onto the smaller side. Measured on an H100 (`results/h100/hopper/swap/`):
    /// the two swapped picks with M > N ran slower than the plain ones (4100x1536x7168 0.96-0.98,
    /// 1000x576x7168 0.91-0.94), 4100x576x7168's 128x144 tile swapped at half the speed.
    fn swaps_operands(&self, p: &Problem) -> bool {
        p.m < p.n
    }
    /// Measured on an H100 and an H200 (`results/h100/hopper/swap/`,
    /// `results/h200/hopper/swap/`, GROUP_SIZE_M 1 to 16 in one-wave launches): the largest
    /// group, phase 2's tie before, ran 4100x576x7168's 128x144 tile at 60.2 us against 52.3
    /// at a group of one (H100), 2048x576x7168's 64x144 at 31.8 against 26.8-27.9, and
    /// 333x4096x4096's swapped 128x96 at 38.2 against 22.3; where B is the larger operand
    /// (333x4096x4096 plain) the largest group was the fast one.
    fn one_wave_groups_by_operand(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;
    use crate::model::problem::parse_config;

    #[test]
    fn shared_memory_is_the_kernels_formula() {
        // 4 stages x (128 + 256) x 64 x 2 + 2 consumers x 2 chunks x 64 x 64 x 2 + 1024 + 64,
        // as the H200 runs' harness read from origami_hopper_gemm_smem_bytes.
        let c = parse_config("128x256x64,w12,s4").unwrap();
        assert_eq!(smem_bytes(&c), 196_608 + 32_768 + 1024 + 64);
        assert_eq!(c_box_cols(192), 64);
        assert_eq!(c_box_cols(96), 32);
        assert_eq!(c_box_cols(80), 16);
        assert_eq!(consumers(&c), 2);
    }

    #[test]
    fn the_kernels_static_rules() {
        let v = |t: &str| config_violation(&parse_config(t).unwrap());
        assert_eq!(v("128x256x64,w12,s4"), None);
        assert_eq!(v("256x128x64,w12,s4"), None);
        assert_eq!(v("64x256x64,w8,s4"), None);
        assert!(v("256x256x64,w12,s3").unwrap().contains("256 accumulators"));
        assert!(v("64x128x64,w12,s4")
            .unwrap()
            .contains("multiple of 64 per consumer"));
        assert!(v("128x128x128,w12,s4")
            .unwrap()
            .contains("BLOCK_K must be 64"));
        assert!(v("128x120x64,w12,s4").unwrap().contains("multiple of 16"));
        assert!(v("128x128x64,w4,s4").unwrap().contains("8 (one consumer"));
    }

    #[test]
    fn feasible_configs_on_hopper_only() {
        let h100 = preset("h100-sxm").unwrap().gpu;
        let cands = HopperFamily.candidates(Dtype::Fp16, &h100);
        let ok: Vec<_> = cands
            .iter()
            .filter(|c| {
                c.feasible()
                    && c.config.split_k == 1
                    && !c.config.stream_k
                    && !c.config.switches.swap
            })
            .collect();
        // every config the kernel accepts and shared memory holds is in ptxas's table
        // (scripts/hopper/ptxas_table.sh walks the same rule: 303), none of which spills
        assert_eq!(ok.len(), 303);
        // each also at 2, 3 and 4 runs of split-K, and each of those swapped (the same
        // compiled instance)
        assert_eq!(cands.iter().filter(|c| c.feasible()).count(), 2 * 4 * 303);
        assert_eq!(
            cands
                .iter()
                .filter(|c| c.feasible() && c.config.switches.swap)
                .count(),
            4 * 303
        );
        assert!(ok.iter().all(|c| c.registers.is_some()));
        let rejected: Vec<&str> = cands.iter().filter_map(|c| c.rejected.as_deref()).collect();
        assert!(rejected.iter().all(|r| !r.contains("compiled table")));
        // no instance spills or warns (the rule stays for a table that says otherwise)
        assert_eq!(
            rejected.iter().filter(|r| r.starts_with("ptxas:")).count(),
            0
        );
        let a100 = preset("a100").unwrap().gpu;
        assert!(HopperFamily
            .candidates(Dtype::Fp16, &a100)
            .iter()
            .all(|c| !c.feasible()));
    }

    #[test]
    fn problems_need_16_byte_k_rows() {
        let p = |m, n, k| Problem::new(m, n, k, Dtype::Fp16).unwrap();
        assert_eq!(problem_violation(&p(4097, 4103, 4104)), None);
        let k = problem_violation(&p(1000, 7168, 2050)).unwrap();
        assert!(k.starts_with("K = 2050 is not a multiple of 8"), "{k}");
        let f = problem_violation(&Problem::new(64, 64, 64, Dtype::Fp32).unwrap()).unwrap();
        assert!(f.contains("fp16 or bf16"), "{f}");
    }
}
