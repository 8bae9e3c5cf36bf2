//! The `triton-tma` kernel family: Triton's persistent matmul with device-side tensor
//! descriptors on Hopper (python/origami_gemm/kernels/triton_tma.py; the kernel of Triton's
//! persistent-matmul tutorial, rewritten in the project, docs/triton-tma.md). One program
//! per SM walks the output tiles in grouped order; TMA loads A and B into a ring of
//! `num_stages` buffers, `wgmma` multiplies, a TMA store writes C.
//!
//! The space the model ranks (and the brute-force sweep times, `scripts/triton/tma_sweep.py`):
//! BLOCK_M, BLOCK_N in {64, 128, 256}, BLOCK_K in {64, 128}, 4 or 8 warps, 3 to 5 stages,
//! FLATTEN off or on. Warp specialization and epilogue subtiling are left out: on an H100
//! neither helped on the median, warp specialization changes the compiled kernel only at 4
//! warps without FLATTEN and fails to compile for several of those
//! (results/h100/triton-tma/README.md). GROUP_SIZE_M is a compile-time constant of this
//! kernel and stays at 8, the value its sweep timed: phase 2's footprint rule was made
//! for one program per tile, not a persistent grid's order, and the H100 runs show no
//! gain from 16 (the same launches at 16 and 8 timed within the run-to-run spread of one
//! kernel, docs/triton-tma.md).
//!
//! Feasibility comes from Triton's own compiler (`compiled_table.rs`): a config it refuses
//! (shared memory beyond 227 KiB, a failed pass) or that spills is never picked. The
//! family runs on compute capability 9.x only, with 16-bit inputs whose rows are 16-byte
//! aligned (TMA's rule for global strides).

use crate::constants::ModelConstants;
use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::problem::{Config, Problem, Switches};

use super::{default_launch_preference, operand_tile_bytes, KernelFamily, PersistentLoop};

pub mod compiled_table;

use compiled_table::TmaCompiled;

/// Command-line name.
pub const NAME: &str = "triton-tma";

/// Triton's persistent tensor-descriptor matmul.
pub struct TritonTmaFamily;

/// TMA's rule for a tensor's global strides: multiples of 16 bytes.
const TMA_STRIDE_ALIGN_BYTES: u64 = 16;

/// Why the kernel cannot run a problem, if so: it reads fp16 or bf16 only, and its tensor
/// descriptors need 16-byte row strides for A (K elements), B (K) and C (N).
pub fn problem_violation(p: &Problem) -> Option<String> {
    if !matches!(p.dtype, Dtype::Fp16 | Dtype::Bf16) {
        return Some(format!(
            "{NAME} takes fp16 or bf16 inputs, not {}",
            p.dtype.name()
        ));
    }
    let per_row = TMA_STRIDE_ALIGN_BYTES / p.dtype.bytes() as u64;
    for (what, v, rows) in [("K", p.k, "A's and B's"), ("N", p.n, "C's")] {
        if v % per_row != 0 {
            return Some(format!(
                "{what} = {v} is not a multiple of {per_row}: TMA needs {rows} row strides in multiples of {TMA_STRIDE_ALIGN_BYTES} bytes (the triton family has no such rule)"
            ));
        }
    }
    None
}

impl KernelFamily for TritonTmaFamily {
    fn name(&self) -> &'static str {
        NAME
    }
    /// `matmul_tma_persistent_kernel` (python/origami_gemm/kernels/triton_tma.py).
    fn triton_kernel(&self) -> Option<&'static str> {
        Some("matmul_tma_persistent_kernel")
    }
    fn problem_violation(&self, p: &Problem) -> Option<String> {
        problem_violation(p)
    }
    fn tiles(&self) -> Vec<(u32, u32, u32)> {
        let mut v = Vec::new();
        for bm in [64, 128, 256] {
            for bn in [64, 128, 256] {
                for bk in [64, 128] {
                    v.push((bm, bn, bk));
                }
            }
        }
        v
    }
    fn launches(&self) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for w in [4, 8] {
            for s in [3, 4, 5] {
                v.push((w, s));
            }
        }
        v
    }
    /// The compiler's whole table (`compiled_table.rs`): BLOCK_K 32 to 128, 2 to 5
    /// stages, every setting of WARP_SPECIALIZE, FLATTEN and EPILOGUE_SUBTILE.
    fn compiled_configs(&self) -> Vec<Config> {
        compiled_table::configs()
    }
    fn switch_settings(&self) -> Vec<Switches> {
        vec![
            Switches::NONE,
            Switches {
                flatten: true,
                ..Switches::NONE
            },
        ]
    }
    /// The operand ring plus the C tile the TMA store stages (an estimate; on Hopper the
    /// compiled table's number replaces it).
    fn smem_bytes(&self, c: &Config, dtype: Dtype) -> u64 {
        let ring = f64::from(c.num_stages) * operand_tile_bytes(c, dtype);
        let c_tile = f64::from(c.block_m) * f64::from(c.block_n) * dtype.bytes();
        (ring + c_tile).ceil() as u64
    }
    fn compiled_smem_bytes(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u64> {
        match compiled_table::compiled(c, dtype, gpu)? {
            TmaCompiled::Ok { smem_bytes, .. } => Some(*smem_bytes),
            TmaCompiled::Failed { .. } => None,
        }
    }
    fn registers(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u32> {
        match compiled_table::compiled(c, dtype, gpu)? {
            TmaCompiled::Ok { registers, .. } => Some(*registers),
            TmaCompiled::Failed { .. } => None,
        }
    }
    /// Hopper only; then what Triton's compiler said of the config.
    fn invalid_reason(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<String> {
        let [major, minor] = gpu.compute_capability;
        if major != 9 {
            return Some(format!(
                "needs compute capability 9.x (TMA and wgmma); {} is {major}.{minor}",
                gpu.name
            ));
        }
        match compiled_table::compiled(c, dtype, gpu) {
            None => Some(format!(
                "not in Triton's compiled table for {} (data/triton_tma_sm90.csv)",
                dtype.name()
            )),
            Some(TmaCompiled::Failed { status, error }) => Some(format!(
                "Triton 3.6 does not compile it for sm_90a: {status}: {error}"
            )),
            Some(TmaCompiled::Ok {
                spill_bytes,
                registers,
                ..
            }) if *spill_bytes > 0 => Some(format!(
                "spills: {spill_bytes} B of spill traffic at {registers} registers (Triton 3.6, sm_90a)"
            )),
            Some(TmaCompiled::Ok { .. }) => None,
        }
    }
    fn launch_preference(&self, c: &Config, k: &ModelConstants) -> f64 {
        default_launch_preference(c, k) + if c.switches.flatten { 0.5 } else { 0.0 }
    }
    fn uses_wgmma(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> bool {
        true
    }
    fn compute_scale(&self, _c: &Config, _dtype: Dtype, _gpu: &GpuDesc, k: &ModelConstants) -> f64 {
        1.0 / k.wgmma_speedup
    }
    /// The warpgroups, stacked along M while BM has 64 rows for each, the rest along N (as
    /// Triton lays out wgmma for the tutorial kernel).
    fn warp_grid(&self, c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> (u32, u32) {
        let groups = (c.num_warps / 4).max(1);
        let along_m = groups.min((c.block_m / 64).max(1));
        (along_m, groups / along_m)
    }
    fn group_sizes(&self) -> &'static [u32] {
        &[8]
    }
    /// One program per SM walks its tiles; FLATTEN merges the tile and K loops, so the next
    /// tile's loads are issued while the current one finishes.
    fn persistent_loop(&self, c: &Config) -> Option<PersistentLoop> {
        Some(PersistentLoop {
            overlapped_fill: c.switches.flatten,
            grouped_order: self.group_sizes().first().copied(),
        })
    }
    /// A and B arrive as tensor-descriptor boxes of BLOCK rows x BLOCK_K.
    fn loads_whole_boxes(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;
    use crate::model::problem::parse_config;

    #[test]
    fn space_is_the_sweep_space() {
        let configs = TritonTmaFamily.configs();
        // 18 tiles x 6 launches x 2 switch settings; the sweep script's default space is
        // these less the operand rings over 228 KiB (124 configs).
        assert_eq!(configs.len(), 216);
        let ring = |c: &Config| operand_tile_bytes(c, Dtype::Fp16) * f64::from(c.num_stages);
        assert_eq!(
            configs
                .iter()
                .filter(|c| ring(c) <= f64::from(232_448 - 4096))
                .count(),
            124
        );
        assert!(configs.iter().all(|c| !c.switches.warp_specialize));
    }

    #[test]
    fn feasibility_comes_from_the_compiler_on_hopper_only() {
        let h100 = preset("h100-sxm").unwrap().gpu;
        let cands = TritonTmaFamily.candidates(Dtype::Fp16, &h100);
        let ok = cands.iter().filter(|c| c.feasible()).count();
        // 100 of the 124 the sweep compiles: 20 need more shared memory than an H100 has
        // and 4 spill (128x256 and 256x128 at BK 64, 4 warps, 3 stages), as the H100's
        // compiles said (results/h100/triton-tma/sweep-llm/compile.csv).
        assert_eq!(ok, 100);
        let big = cands
            .iter()
            .find(|c| c.config == parse_config("256x256x128,w8,s5").unwrap())
            .unwrap();
        assert!(
            big.rejected.as_deref().unwrap().contains("shared memory"),
            "{big:?}"
        );
        let a100 = preset("a100").unwrap().gpu;
        let on_a100 = TritonTmaFamily.candidates(Dtype::Fp16, &a100);
        assert!(on_a100.iter().all(|c| !c.feasible()));
        assert!(on_a100.iter().any(|c| c
            .rejected
            .as_deref()
            .unwrap()
            .contains("compute capability 9")));
    }

    #[test]
    fn the_compiled_configs_are_the_whole_table_judged_as_the_space_is() {
        let h100 = preset("h100-sxm").unwrap().gpu;
        let wide = TritonTmaFamily.compiled_configs();
        assert_eq!(wide.len(), 1344);
        // every config of the space the compiler was asked about (not those whose operand
        // ring alone is beyond an H100's shared memory)
        assert_eq!(
            TritonTmaFamily
                .configs()
                .iter()
                .filter(|c| wide.contains(c))
                .count(),
            124
        );
        let cands = TritonTmaFamily.candidates_of(wide, Dtype::Fp16, &h100);
        // the 1051 that compile without spilling within an H100's shared memory: the
        // configs the dense seed sweep timed (results/h100/triton-tma/dense-seed)
        assert_eq!(cands.iter().filter(|c| c.feasible()).count(), 1051);
        let find = |s: &str| {
            let want = Config {
                group_m: 1,
                ..parse_config(s).unwrap()
            };
            cands.iter().find(|c| c.config == want).unwrap()
        };
        // outside the space, priced from the compiler's numbers
        let ws = find("64x64x32,w4,s2,warp_specialize");
        assert!(ws.feasible(), "{ws:?}");
        assert_eq!((ws.registers, ws.smem_bytes), (Some(168), 33080));
        let spills = find("128x256x32,w4,s2");
        assert!(
            spills.rejected.as_deref().unwrap().starts_with("spills"),
            "{spills:?}"
        );
    }

    #[test]
    fn tma_strides_must_be_16_byte_multiples() {
        let p = |m, n, k| Problem::new(m, n, k, Dtype::Fp16).unwrap();
        assert_eq!(problem_violation(&p(4100, 576, 7168)), None);
        assert_eq!(problem_violation(&p(3000, 3000, 3000)), None);
        let k = problem_violation(&p(1000, 7168, 2050)).unwrap();
        assert!(k.starts_with("K = 2050 is not a multiple of 8"), "{k}");
        let n = problem_violation(&p(4096, 4097, 4096)).unwrap();
        assert!(n.starts_with("N = 4097"), "{n}");
        let f = problem_violation(&Problem::new(64, 64, 64, Dtype::Fp32).unwrap()).unwrap();
        assert!(f.contains("fp16 or bf16"), "{f}");
    }
}
