//! The `origami` kernel family: the project's own mma.sync GEMM (`csrc/gemm.cu`, documented
//! in docs/gemm-kernel.md). This file is the one owner of that kernel's config rule: its
//! tiles and launches, its warp grid, its shared-memory formula (cp.async ring or epilogue
//! C tile, whichever is larger), which configs are valid and why not, which input types
//! and problems the kernel can run (fp16, bf16, or fp32 data through TF32 tensor cores;
//! rows in whole 16-byte chunks, sizes within `int`), and the `-D` defines an instance is
//! compiled with. The runner (`gemm::kernel`), the selector and the scripts
//! (through `origami-bench configs`, see `config_list`) ask it; csrc/gemm.cu only guards
//! the defines it is given. Registers and spills come from ptxas (`register_table`): a
//! config whose compiled kernel has a stack frame (spills) is never picked.

use crate::constants::ModelConstants;
use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::problem::{Config, Problem, Switches};

use super::{default_launch_preference, KernelFamily};

pub mod config_list;
pub mod register_table;

pub use register_table::{compiled_resources, table_arch, CompiledResources, REGISTER_TABLE_CSV};

/// Command-line name.
pub const NAME: &str = "origami";

/// BLOCK_M and BLOCK_N values.
pub const BLOCK_MN: [u32; 4] = [32, 64, 128, 256];
/// BLOCK_K values.
pub const BLOCK_K: [u32; 4] = [16, 32, 64, 128];
/// num_warps values.
pub const NUM_WARPS: [u32; 2] = [4, 8];
/// num_stages values (depth of the cp.async ring).
pub const NUM_STAGES: [u32; 3] = [2, 3, 4];

/// Bytes of one cp.async chunk: rows of A and B are loaded 16 bytes at a time.
const CHUNK_BYTES: u64 = 16;
/// Largest M, N or K: the kernel takes them as `int` (K of TF32 is doubled inside: at most
/// half of this, [`max_k`]).
pub const MAX_KERNEL_DIM: u64 = i32::MAX as u64;
/// BLOCK_K values of TF32: rows of at most 256 bytes, as the 16-bit types' (the kernel's
/// copy loop covers whole swizzle periods of rows only up to that width with 4 warps).
pub const BLOCK_K_TF32: [u32; 3] = [16, 32, 64];

/// Bytes of one element of A, B and C: 2 for fp16 and bf16, 4 for TF32 (fp32 storage).
pub fn element_bytes(dtype: Dtype) -> u64 {
    if dtype == Dtype::Tf32 {
        4
    } else {
        2
    }
}

/// K must be a multiple of this many elements (one 16-byte chunk: 8 of fp16 or bf16, 4 of
/// TF32), so that every chunk of a row is wholly inside or outside the matrix.
pub fn k_multiple(dtype: Dtype) -> u64 {
    CHUNK_BYTES / element_bytes(dtype)
}

/// Largest K: the kernel addresses rows in 16-bit units, K x (element bytes / 2) of them.
pub fn max_k(dtype: Dtype) -> u64 {
    MAX_KERNEL_DIM / (element_bytes(dtype) / 2)
}
/// Elements of padding per row of the epilogue's C tile in shared memory.
const EPILOGUE_ROW_PAD: u32 = 8;
/// A warp tile's rows and columns are whole m16 / n16 MMA fragments.
const WARP_TILE_MULTIPLE: u32 = 16;

/// The (BLOCK_M, BLOCK_N, BLOCK_K) space: 4 x 4 x 4 = 64 tiles.
pub fn tiles() -> Vec<(u32, u32, u32)> {
    let mut v = Vec::new();
    for bm in BLOCK_MN {
        for bn in BLOCK_MN {
            for bk in BLOCK_K {
                v.push((bm, bn, bk));
            }
        }
    }
    v
}

/// The (num_warps, num_stages) space.
pub fn launches() -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    for w in NUM_WARPS {
        for s in NUM_STAGES {
            v.push((w, s));
        }
    }
    v
}

/// Every config of the space (tiles x launches, GROUP_SIZE_M 1: it is a run-time
/// argument), in the order the selector enumerates them.
pub fn config_space() -> Vec<Config> {
    OrigamiFamily.configs()
}

/// Warp grid (WARPS_M, WARPS_N): 4 warps are 2 x 2; 8 warps are 4 x 2 when BLOCK_M >=
/// BLOCK_N, else 2 x 4. The kernel gets WARPS_M as a define.
pub fn warp_grid(c: &Config) -> (u32, u32) {
    let wm = if c.num_warps == 4 || c.block_m < c.block_n {
        2
    } else {
        4
    };
    (wm, c.num_warps / wm)
}

/// Shared memory of one CTA, bytes (the kernel's SMEM_BYTES, which the runner checks
/// against the module's `origami_gemm_smem_bytes`): max(stages x (BM + BN) x BK x e,
/// BM x (BN + 8) x e), the cp.async ring or the epilogue's C tile when larger, with e the
/// element's bytes ([`element_bytes`]: C has the inputs' type).
pub fn smem_bytes(c: &Config, dtype: Dtype) -> u64 {
    let e = element_bytes(dtype);
    let ring =
        u64::from(c.num_stages) * u64::from(c.block_m + c.block_n) * u64::from(c.block_k) * e;
    let epilogue = u64::from(c.block_m) * u64::from(c.block_n + EPILOGUE_ROW_PAD) * e;
    ring.max(epilogue)
}

/// Why the kernel cannot take this input type, if so: fp16 and bf16, or fp32 data through
/// TF32 tensor cores (`tf32`: fp32 A, B and C, operands rounded to TF32, fp32
/// accumulation, as cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32).
pub fn dtype_violation(dtype: Dtype) -> Option<String> {
    match dtype {
        Dtype::Fp16 | Dtype::Bf16 | Dtype::Tf32 => None,
        Dtype::Fp32 => Some(
            "the origami kernel runs fp32 data on TF32 tensor cores only: ask for tf32 (fp32 A, B and C, TF32 products, fp32 accumulation)".into(),
        ),
        other => Some(format!(
            "the origami kernel takes fp16, bf16 or tf32 inputs, not {other}"
        )),
    }
}

/// Why a config is not an instance of the kernel for this input type, if so: the rule of
/// [`config_violation`], and BLOCK_K of TF32 at most 64 ([`BLOCK_K_TF32`]).
pub fn config_violation_for(c: &Config, dtype: Dtype) -> Option<String> {
    config_violation(c).or_else(|| {
        (dtype == Dtype::Tf32 && !BLOCK_K_TF32.contains(&c.block_k)).then(|| {
            format!(
                "BLOCK_K of tf32 must be {} (rows of at most 256 bytes)",
                one_of(&BLOCK_K_TF32)
            )
        })
    })
}

/// Why the kernel cannot run a problem, if so (the alignment rule of docs/gemm-kernel.md,
/// and sizes that fit its `int` arguments): the one rule the runner (`gemm::kernel`)
/// and the selector (`KernelFamily::problem_violation`) both apply. The input type is
/// [`dtype_violation`]'s.
pub fn problem_violation(p: &Problem) -> Option<String> {
    let multiple = k_multiple(p.dtype);
    if p.k % multiple != 0 {
        return Some(format!(
            "K = {} is not a multiple of {multiple}: the origami kernel loads rows of A and B in {CHUNK_BYTES}-byte chunks (docs/gemm-kernel.md, alignment rule); pad K to {}",
            p.k,
            p.k.div_ceil(multiple) * multiple
        ));
    }
    for (name, v, max) in [
        ("M", p.m, MAX_KERNEL_DIM),
        ("N", p.n, MAX_KERNEL_DIM),
        ("K", p.k, max_k(p.dtype)),
    ] {
        if v > max {
            return Some(format!(
                "{name} = {v} does not fit the kernel's int argument (at most {max})"
            ));
        }
    }
    None
}

/// Why a config is not an instance of the kernel, if so: a value outside the space, or a
/// warp tile that is not whole MMA fragments (8 warps on a 32 x 32 tile). Shared memory
/// against a GPU's limit is checked by the caller (`smem_bytes`).
pub fn config_violation(c: &Config) -> Option<String> {
    if !BLOCK_MN.contains(&c.block_m) || !BLOCK_MN.contains(&c.block_n) {
        return Some(format!("BLOCK_M and BLOCK_N must be {}", one_of(&BLOCK_MN)));
    }
    if !BLOCK_K.contains(&c.block_k) {
        return Some(format!("BLOCK_K must be {}", one_of(&BLOCK_K)));
    }
    if !NUM_WARPS.contains(&c.num_warps) {
        return Some(format!("num_warps must be {}", one_of(&NUM_WARPS)));
    }
    if !NUM_STAGES.contains(&c.num_stages) {
        return Some(format!("num_stages must be {}", one_of(&NUM_STAGES)));
    }
    let (wm, wn) = warp_grid(c);
    let (tile_m, tile_n) = (c.block_m / wm, c.block_n / wn);
    if tile_m % WARP_TILE_MULTIPLE != 0 || tile_n % WARP_TILE_MULTIPLE != 0 {
        return Some(format!(
            "warp tile {tile_m}x{tile_n} is not a multiple of {WARP_TILE_MULTIPLE}"
        ));
    }
    if c.split_k > 1 || c.stream_k {
        return Some(
            "split-K and Stream-K are other kernels' knobs: this kernel runs whole tiles".into(),
        );
    }
    let others = c.switches.outside(STUDY_SWITCHES);
    if others.any() {
        return Some(format!(
            "the switches {} are other kernels': this kernel takes only `cache_all` and `unpredicated`",
            others.words()
        ));
    }
    None
}

/// The switches this kernel has (the CUTLASS tuning study's knobs): `cache_all` and
/// `unpredicated`. Neither is in the selection's space: the model has no term for them,
/// `origami-bench run --config ...,cache_all` runs them (docs/gemm-kernel.md).
pub const STUDY_SWITCHES: Switches = Switches {
    cache_all: true,
    unpredicated: true,
    ..Switches::NONE
};

/// Why a config cannot run a problem, if so: `unpredicated` drops the bounds checks, so M,
/// N and K must be multiples of BLOCK_M, BLOCK_N and BLOCK_K.
pub fn launch_violation(c: &Config, p: &Problem) -> Option<String> {
    let whole = p.m % u64::from(c.block_m) == 0
        && p.n % u64::from(c.block_n) == 0
        && p.k % u64::from(c.block_k) == 0;
    (c.switches.unpredicated && !whole).then(|| {
        format!(
            "`unpredicated` needs M, N and K to be multiples of the tile {}x{}x{} ({}x{}x{} is not)",
            c.block_m, c.block_n, c.block_k, p.m, p.n, p.k
        )
    })
}

/// "2, 3 or 4".
fn one_of(values: &[u32]) -> String {
    let text: Vec<String> = values.iter().map(u32::to_string).collect();
    match text.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => text.concat(),
    }
}

/// The `-D` defines of one instance (name, value; `None` for a bare flag), in a fixed
/// order (part of the NVRTC cache key). GROUP_SIZE_M is a run-time argument, not a define.
pub fn defines(c: &Config, dtype: Dtype) -> Vec<(&'static str, Option<u32>)> {
    let mut v = vec![
        ("BLOCK_M", Some(c.block_m)),
        ("BLOCK_N", Some(c.block_n)),
        ("BLOCK_K", Some(c.block_k)),
        ("NUM_WARPS", Some(c.num_warps)),
        ("NUM_STAGES", Some(c.num_stages)),
        ("WARPS_M", Some(warp_grid(c).0)),
    ];
    match dtype {
        Dtype::Bf16 => v.push(("DTYPE_BF16", None)),
        Dtype::Tf32 => v.push(("DTYPE_TF32", None)),
        _ => {}
    }
    if c.switches.cache_all {
        v.push(("CACHE_ALL", None));
    }
    if c.switches.unpredicated {
        v.push(("UNPREDICATED", None));
    }
    v
}

/// The project's mma.sync GEMM kernel.
pub struct OrigamiFamily;

impl KernelFamily for OrigamiFamily {
    fn name(&self) -> &'static str {
        NAME
    }
    fn tiles(&self) -> Vec<(u32, u32, u32)> {
        tiles()
    }
    fn launches(&self) -> Vec<(u32, u32)> {
        launches()
    }
    fn smem_bytes(&self, c: &Config, dtype: Dtype) -> u64 {
        smem_bytes(c, dtype)
    }
    fn registers(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u32> {
        compiled_resources(c, dtype, gpu).map(|r| r.registers)
    }
    /// The shared preference (the fastest launches of the H200 development runs,
    /// docs/gemm-kernel.md, were 8 warps and 3 stages for the large tiles).
    fn launch_preference(&self, c: &Config, k: &ModelConstants) -> f64 {
        default_launch_preference(c, k)
    }
    fn warp_grid(&self, c: &Config, _dtype: Dtype, _gpu: &GpuDesc) -> (u32, u32) {
        warp_grid(c)
    }
    fn problem_violation(&self, p: &Problem) -> Option<String> {
        dtype_violation(p.dtype).or_else(|| problem_violation(p))
    }
    fn invalid_reason(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<String> {
        if let Some(why) = dtype_violation(dtype).or_else(|| config_violation_for(c, dtype)) {
            return Some(why);
        }
        match compiled_resources(c, dtype, gpu) {
            Some(r) if r.stack_frame_bytes > 0 => Some(format!(
                "spills: {} B stack frame at {} registers (ptxas, sm_{})",
                r.stack_frame_bytes,
                r.registers,
                table_arch(gpu)
            )),
            Some(_) => None,
            None => Some(format!(
                "not in the compiler's register table for sm_{}",
                table_arch(gpu)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;
    use crate::model::problem::parse_config;

    fn cfg(s: &str) -> Config {
        parse_config(s).unwrap()
    }

    #[test]
    fn space_and_warp_grid() {
        assert_eq!(config_space().len(), 384);
        assert_eq!(
            launches(),
            vec![(4, 2), (4, 3), (4, 4), (8, 2), (8, 3), (8, 4)]
        );
        assert_eq!(warp_grid(&cfg("128x256x64,w4,s3")), (2, 2));
        assert_eq!(warp_grid(&cfg("256x128x64,w8,s3")), (4, 2));
        assert_eq!(warp_grid(&cfg("128x128x64,w8,s3")), (4, 2));
        assert_eq!(warp_grid(&cfg("128x256x64,w8,s3")), (2, 4));
    }

    #[test]
    fn validity_rule() {
        let why = |s: &str| config_violation(&cfg(s));
        assert_eq!(
            why("32x32x16,w8,s2").as_deref(),
            Some("warp tile 8x16 is not a multiple of 16")
        );
        assert_eq!(why("32x32x16,w4,s2"), None);
        // other kernels' knobs are refused, not run as the whole-tile kernel
        for other in [
            "32x32x16,w4,s2,k2",
            "32x32x16,w4,s2,sk",
            "32x32x16,w4,s2,cluster",
        ] {
            assert!(why(other).unwrap().contains("other kernels'"), "{other}");
        }
        // the tuning study's knobs are this kernel's
        assert_eq!(why("32x32x16,w4,s2,cache_all,unpredicated"), None);
        assert_eq!(
            why("48x32x16,w4,s2").as_deref(),
            Some("BLOCK_M and BLOCK_N must be 32, 64, 128 or 256")
        );
        assert_eq!(
            why("64x64x8,w4,s2").as_deref(),
            Some("BLOCK_K must be 16, 32, 64 or 128")
        );
        assert_eq!(
            why("64x64x64,w4,s5").as_deref(),
            Some("num_stages must be 2, 3 or 4")
        );
        assert_eq!(
            why("64x64x64,w2,s3").as_deref(),
            Some("num_warps must be 4 or 8")
        );
        // The only tiling failure of the space: 32 x 32 with 8 warps, at every BK and stage.
        let bad: Vec<Config> = config_space()
            .into_iter()
            .filter(|c| config_violation(c).is_some())
            .collect();
        assert_eq!(bad.len(), 4 * 3);
        assert!(bad
            .iter()
            .all(|c| c.block_m == 32 && c.block_n == 32 && c.num_warps == 8));
        assert!(dtype_violation(Dtype::Bf16).is_none());
        assert!(dtype_violation(Dtype::Tf32).is_none());
        assert!(dtype_violation(Dtype::Fp32)
            .unwrap()
            .contains("ask for tf32"));
        assert!(dtype_violation(Dtype::Fp8E4m3).is_some());
        // TF32 rows are at most 256 bytes: BLOCK_K 128 is refused for it only
        assert_eq!(
            config_violation_for(&cfg("64x64x128,w4,s2"), Dtype::Fp16),
            None
        );
        assert_eq!(
            config_violation_for(&cfg("64x64x128,w4,s2"), Dtype::Tf32).as_deref(),
            Some("BLOCK_K of tf32 must be 16, 32 or 64 (rows of at most 256 bytes)")
        );
        assert_eq!(
            config_violation_for(&cfg("64x64x64,w4,s2"), Dtype::Tf32),
            None
        );
    }

    #[test]
    fn problems_the_kernel_cannot_run() {
        let p = |m, n, k| Problem {
            m,
            n,
            k,
            dtype: Dtype::Fp16,
        };
        assert_eq!(
            problem_violation(&p(128, 128, 7)).as_deref(),
            Some("K = 7 is not a multiple of 8: the origami kernel loads rows of A and B in 16-byte chunks (docs/gemm-kernel.md, alignment rule); pad K to 8")
        );
        assert!(problem_violation(&p(1, 1, 4100))
            .unwrap()
            .ends_with("pad K to 4104"));
        assert_eq!(problem_violation(&p(1, 1, 8)), None);
        assert_eq!(
            problem_violation(&p(MAX_KERNEL_DIM, MAX_KERNEL_DIM, 8)),
            None
        );
        assert_eq!(
            problem_violation(&p(1 << 31, 1, 8)).as_deref(),
            Some("M = 2147483648 does not fit the kernel's int argument (at most 2147483647)")
        );
        assert!(problem_violation(&p(1, 1, 1 << 31))
            .unwrap()
            .starts_with("K = 2147483648"));
        // TF32: 16-byte chunks are 4 elements, and K is doubled inside the kernel
        let t = |k| Problem::new(1, 1, k, Dtype::Tf32).unwrap();
        assert_eq!(problem_violation(&t(4)), None);
        assert!(problem_violation(&t(6))
            .unwrap()
            .contains("not a multiple of 4"));
        assert_eq!(problem_violation(&t(max_k(Dtype::Tf32) / 4 * 4)), None);
        assert!(problem_violation(&t(1 << 30))
            .unwrap()
            .ends_with("(at most 1073741823)"));
        // The family answers with the same rule; the others take any size.
        assert_eq!(
            OrigamiFamily.problem_violation(&p(128, 128, 7)),
            problem_violation(&p(128, 128, 7))
        );
        for name in ["triton", "seed"] {
            let f = crate::model::family::family(name).unwrap();
            assert_eq!(f.problem_violation(&p(128, 128, 7)), None, "{name}");
        }
    }

    #[test]
    fn smem_formula() {
        assert_eq!(
            smem_bytes(&cfg("128x256x64,w8,s3"), Dtype::Fp16),
            3 * 384 * 64 * 2
        );
        assert_eq!(
            smem_bytes(&cfg("256x256x16,w8,s2"), Dtype::Bf16),
            256 * 264 * 2
        );
        // TF32: 4-byte elements in the ring and in the epilogue's fp32 C tile
        assert_eq!(
            smem_bytes(&cfg("128x256x32,w8,s3"), Dtype::Tf32),
            3 * 384 * 32 * 4
        );
        assert_eq!(
            smem_bytes(&cfg("256x256x16,w8,s2"), Dtype::Tf32),
            256 * 264 * 4
        );
    }

    #[test]
    fn smem_formula_matches_the_table() {
        // The table's smem column is the kernel's own constant for every config.
        let mut checked = 0;
        for line in REGISTER_TABLE_CSV.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let n = |i: usize| f[i].parse::<u32>().unwrap();
            let c = Config {
                block_m: n(2),
                block_n: n(3),
                block_k: n(4),
                group_m: 1,
                num_warps: n(5),
                num_stages: n(6),
                switches: crate::model::Switches::NONE,
                split_k: 1,
                stream_k: false,
            };
            let dtype: Dtype = f[1].parse().unwrap();
            assert_eq!(smem_bytes(&c, dtype), u64::from(n(11)), "{line}");
            checked += 1;
        }
        assert_eq!(checked, 3 * 4 * 384);
    }

    #[test]
    fn defines_in_order() {
        let c = cfg("128x256x64,g8,w8,s3");
        assert_eq!(
            defines(&c, Dtype::Fp16),
            vec![
                ("BLOCK_M", Some(128)),
                ("BLOCK_N", Some(256)),
                ("BLOCK_K", Some(64)),
                ("NUM_WARPS", Some(8)),
                ("NUM_STAGES", Some(3)),
                ("WARPS_M", Some(2)),
            ]
        );
        assert_eq!(defines(&c, Dtype::Bf16).last(), Some(&("DTYPE_BF16", None)));
        let d = defines(
            &cfg("128x256x64,g8,w8,s3,cache_all,unpredicated"),
            Dtype::Bf16,
        );
        assert_eq!(
            d[6..],
            [
                ("DTYPE_BF16", None),
                ("CACHE_ALL", None),
                ("UNPREDICATED", None)
            ]
        );
    }

    #[test]
    fn unpredicated_launches_need_whole_tiles() {
        let p = |m, n, k| Problem::new(m, n, k, Dtype::Fp16).unwrap();
        let c = cfg("128x64x32,w4,s3,unpredicated");
        assert_eq!(launch_violation(&c, &p(256, 128, 64)), None);
        for (m, n, k) in [(200, 128, 64), (256, 100, 64), (256, 128, 40)] {
            let why = launch_violation(&c, &p(m, n, k)).unwrap();
            assert!(why.contains("multiples of the tile 128x64x32"), "{why}");
        }
        // the predicated kernel runs any shape
        assert_eq!(
            launch_violation(&cfg("128x64x32,w4,s3,cache_all"), &p(200, 100, 40)),
            None
        );
    }

    #[test]
    fn spilling_and_invalid_configs_are_rejected_on_h100() {
        let gpu = preset("h100-sxm").unwrap().gpu;
        let cands = OrigamiFamily.candidates(Dtype::Fp16, &gpu);
        let feasible = cands.iter().filter(|c| c.feasible()).count();
        assert_eq!(feasible, 342 - 36);
        for c in &cands {
            let cfg = c.config;
            if cfg.block_m == 256 && cfg.block_n == 256 {
                assert!(!c.feasible(), "{cfg}");
            }
            if cfg.block_m == 32 && cfg.block_n == 32 && cfg.num_warps == 8 {
                assert!(c.rejected.as_deref().unwrap().contains("warp tile"));
            }
        }
        assert_eq!(
            cands.iter().map(|c| c.config).collect::<Vec<_>>(),
            config_space()
        );
        let fp8 = OrigamiFamily.candidates(Dtype::Fp8E4m3, &gpu);
        assert!(fp8.iter().all(|c| !c.feasible()));
    }
}
