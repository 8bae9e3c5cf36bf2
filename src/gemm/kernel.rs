//! One `origami_gemm` instance per configuration (docs/gemm-kernel.md, "Interface"): the
//! module to compile for a config, the launch shape, the error bound per dtype, and the L2
//! rotation count. The config and problem rules themselves (validity, shared memory, warp
//! grid, defines, the alignment rule) are the origami family's (`model::family::origami`);
//! this module asks it. Pure functions; the GPU side is `runner`.

use crate::dtype::Dtype;
use crate::gpu::{LaunchDims, ModuleSpec};
use crate::model::family::origami;
use crate::model::{Config, Problem};

use super::GemmError;

/// Kernel symbol of `csrc/gemm.cu`.
pub const KERNEL_NAME: &str = "origami_gemm";
/// Device constant holding the module's own shared-memory size.
pub const SMEM_SYMBOL: &str = "origami_gemm_smem_bytes";
/// Embedded source stem (`csrc/gemm.cu`).
pub const SOURCE_STEM: &str = "gemm";

/// Relative Frobenius error bound against cuBLAS (the harness's bounds).
pub fn error_bound(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Bf16 => 1e-2,
        _ => 2e-3,
    }
}

/// The input types the kernel takes (the family's rule).
pub fn check_dtype(dtype: Dtype) -> Result<(), GemmError> {
    match origami::dtype_violation(dtype) {
        Some(why) => Err(GemmError::BadInput(why)),
        None => Ok(()),
    }
}

/// Whether the kernel can run a problem: its input type, then the family's rule for the
/// sizes (K a multiple of 8, M, N, K within `int`; `origami::problem_violation`), which
/// the selector applies too.
pub fn check_problem(p: &Problem) -> Result<(), GemmError> {
    check_dtype(p.dtype)?;
    match origami::problem_violation(p) {
        Some(why) => Err(GemmError::BadInput(why)),
        None => Ok(()),
    }
}

/// Whether a config is an instance of the kernel for an input type (the family's rule;
/// shared memory against the GPU's limit is the runner's check).
pub fn check_config(c: &Config, dtype: Dtype) -> Result<(), GemmError> {
    match origami::config_violation_for(c, dtype) {
        Some(why) => Err(GemmError::BadInput(format!("config {c}: {why}"))),
        None => Ok(()),
    }
}

/// Whether a config can run a problem (`unpredicated` needs whole tiles).
pub fn check_launch(c: &Config, p: &Problem) -> Result<(), GemmError> {
    match origami::launch_violation(c, p) {
        Some(why) => Err(GemmError::BadInput(format!("config {c}: {why}"))),
        None => Ok(()),
    }
}

/// Shared memory of one CTA, bytes (the family's formula, the kernel's SMEM_BYTES).
pub fn smem_bytes(c: &Config, dtype: Dtype) -> u64 {
    origami::smem_bytes(c, dtype)
}

/// The module to load for a config: csrc/gemm.cu with the family's defines.
pub fn module_spec(c: &Config, dtype: Dtype) -> ModuleSpec {
    let mut s = ModuleSpec::embedded(SOURCE_STEM).force_nvrtc();
    for (name, v) in origami::defines(c, dtype) {
        s = match v {
            Some(v) => s.define(name, v),
            None => s.flag(name),
        };
    }
    s
}

/// The config with the group size zeroed: one compiled instance serves every group_m.
pub fn instance_key(c: &Config) -> Config {
    Config { group_m: 1, ..*c }
}

/// Grid, block and dynamic shared memory of a launch.
pub fn launch_dims(c: &Config, p: &Problem) -> LaunchDims {
    let grid = p.m.div_ceil(u64::from(c.block_m)) * p.n.div_ceil(u64::from(c.block_n));
    LaunchDims::linear(grid as u32, c.num_warps * 32).with_smem(smem_bytes(c, p.dtype) as u32)
}

/// Bytes of A, B and C of a problem.
pub fn working_set_bytes(p: &Problem) -> u64 {
    let e = (p.dtype.bits() / 8) as u64;
    (p.m * p.k + p.n * p.k + p.m * p.n) * e
}

/// Most input copies the timing rotates through.
pub const MAX_ROTATION: u32 = 32;

/// How many copies of A, B and C the timing rotates through so that consecutive launches
/// do not find their inputs in L2: enough for the rotated set to exceed twice the L2
/// (at most [`MAX_ROTATION`]; 1 when one copy already does). Below about
/// 2 x L2 / 32 bytes of working set the inputs stay L2-resident, for every config and
/// cuBLAS alike.
pub fn rotation_copies(p: &Problem, l2_bytes: u64) -> u32 {
    let ws = working_set_bytes(p).max(1);
    let need = (2 * l2_bytes).div_ceil(ws);
    need.clamp(1, u64::from(MAX_ROTATION)) as u32
}

/// TFLOP/s of a problem run in `ms` milliseconds.
pub fn tflops(p: &Problem, ms: f64) -> f64 {
    if ms > 0.0 {
        p.flops() / (ms * 1e9)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::problem::parse_config;

    fn cfg(s: &str) -> Config {
        parse_config(s).unwrap()
    }

    #[test]
    fn defines_follow_the_interface() {
        let c = cfg("128x256x64,g8,w8,s3");
        let s = module_spec(&c, Dtype::Fp16);
        assert_eq!(
            s.options,
            vec![
                "-DBLOCK_M=128",
                "-DBLOCK_N=256",
                "-DBLOCK_K=64",
                "-DNUM_WARPS=8",
                "-DNUM_STAGES=3",
                "-DWARPS_M=2"
            ]
        );
        assert_eq!(
            s.options,
            origami::config_list::define_flags(&c, Dtype::Fp16)
        );
        assert!(!s.allow_prebuilt);
        let b = module_spec(&c, Dtype::Bf16);
        assert_eq!(b.options.last().unwrap(), "-DDTYPE_BF16");
    }

    #[test]
    fn alignment_rule() {
        let p = Problem::new(127, 4095, 4104, Dtype::Fp16).unwrap();
        assert!(check_problem(&p).is_ok());
        let q = Problem::new(64, 64, 100, Dtype::Fp16).unwrap();
        let e = check_problem(&q).unwrap_err().to_string();
        assert!(e.contains("multiple of 8") && e.contains("104"), "{e}");
        let f = Problem::new(64, 64, 64, Dtype::Fp32).unwrap();
        assert!(check_problem(&f).is_err());
    }

    #[test]
    fn validity_rule_is_the_familys() {
        let e = check_config(&cfg("32x32x16,w8,s2"), Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("config 32x32x16,g1,w8,s2: warp tile 8x16"),
            "{e}"
        );
        assert!(check_config(&cfg("32x32x16,w4,s2"), Dtype::Fp16).is_ok());
        assert!(check_config(&cfg("64x64x64,w4,s5"), Dtype::Fp16).is_err());
        assert!(check_config(&cfg("64x64x128,w4,s2"), Dtype::Fp16).is_ok());
        assert!(check_config(&cfg("64x64x128,w4,s2"), Dtype::Tf32).is_err());
        assert!(check_dtype(Dtype::Fp32).is_err());
    }

    #[test]
    fn launch_and_rotation() {
        let p = Problem::new(1000, 1000, 1000, Dtype::Fp16).unwrap();
        let d = launch_dims(&cfg("128x256x64,w8,s3"), &p);
        assert_eq!(d.grid, (8 * 4, 1, 1));
        assert_eq!(d.block, (256, 1, 1));
        let l2 = 50 << 20;
        let big = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        assert_eq!(rotation_copies(&big, l2), 2);
        let huge = Problem::new(8192, 8192, 8192, Dtype::Fp16).unwrap();
        assert_eq!(rotation_copies(&huge, l2), 1);
        let tiny = Problem::new(64, 64, 64, Dtype::Fp16).unwrap();
        assert_eq!(rotation_copies(&tiny, l2), MAX_ROTATION);
        assert!((tflops(&big, 1.0) - 137.438_953_472).abs() < 1e-6);
    }
}
