//! Speed-of-light (SOL) model, as in the warp-specialized persistent GEMM model: runtime =
//! max(math, DRAM), where math is 2MNK over the peak rate of the operand type and DRAM is
//! every byte (A, B, scale factors, C, each once) over the DRAM bandwidth. Grouped GEMM:
//! per group and summed.

use serde::Serialize;

use super::gpu::GpuPerf;
use super::problem::Problem;
use super::PerfError;

/// SOL times of one problem.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sol {
    pub math_us: f64,
    pub dram_us: f64,
    pub sol_us: f64,
    /// "math" or "dram": the larger term.
    pub bound: &'static str,
}

impl Sol {
    fn from_terms(math_us: f64, dram_us: f64) -> Sol {
        Sol {
            math_us,
            dram_us,
            sol_us: math_us.max(dram_us),
            bound: if math_us >= dram_us { "math" } else { "dram" },
        }
    }
}

/// SOL of one problem at the given peak rate (FLOP/s) and DRAM bandwidth (bytes/s).
pub fn sol_with(p: &Problem, peak_flops: f64, dram_bytes_per_s: f64) -> Sol {
    Sol::from_terms(
        p.flops() / peak_flops * 1e6,
        p.bytes().total() / dram_bytes_per_s * 1e6,
    )
}

/// SOL of one problem on a GPU (roofline constants of its description).
pub fn sol(p: &Problem, gpu: &GpuPerf) -> Result<Sol, PerfError> {
    Ok(sol_with(
        p,
        gpu.peak_flops(p.dtype, p.acc16)?,
        gpu.dram_bytes_per_s(),
    ))
}

/// SOL of a grouped GEMM run group after group: the max of summed math and summed DRAM
/// time (the NVFP4 group-GEMM roofline trace, section 3).
pub fn sol_grouped(groups: &[Sol]) -> Sol {
    let math: f64 = groups.iter().map(|s| s.math_us).sum();
    let dram: f64 = groups.iter().map(|s| s.dram_us).sum();
    Sol::from_terms(math, dram)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;

    #[test]
    fn roofline_trace_group_memory_time_at_8_tbps() {
        // the NVFP4 group-GEMM roofline trace, section 3.1 step 5: 18,079,744 B / 8 TB/s =
        // 2.26 us
        let p = Problem::new(128, 4096, 7168, Dtype::Nvfp4).unwrap();
        let s = sol_with(&p, 7702.5e12, 8e12);
        assert!((s.dram_us - 2.259968).abs() < 1e-9, "{}", s.dram_us);
        // the trace prints 0.000976 us: a unit slip (7.52e9 / 7702.5e12 s = 0.976 us)
        assert!((s.math_us - 0.975812).abs() < 1e-6, "{}", s.math_us);
        assert_eq!(s.bound, "dram");
    }

    #[test]
    fn big_square_fp16_is_math_bound_on_h200() {
        let g = GpuPerf::by_name("h200").unwrap();
        let p = Problem::new(8192, 8192, 8192, Dtype::Fp16).unwrap();
        let s = sol(&p, &g).unwrap();
        assert_eq!(s.bound, "math");
        assert!((s.sol_us - 2.0 * 8192f64.powi(3) / 989.4e12 * 1e6).abs() < 1e-6);
    }
}
