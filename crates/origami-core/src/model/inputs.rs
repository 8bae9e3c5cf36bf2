//! What the models are run with (`ModelInputs`: the GPU description, the five parameters,
//! the empirical constants and the formula variant) and the small arithmetic that the
//! latency model (`latency.rs`, the tritonBLAS paper's Algorithms 3-9), the L2 estimate and
//! the SM-throughput model (`throughput.rs`) share.

use serde::Serialize;

use crate::dtype::Dtype;
use crate::hw::{GpuDesc, ModelParams};

use crate::constants::ModelConstants;

/// Which formulas to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// The NVIDIA port report's model as written.
    Seed,
    /// The Origami C++ source's algorithms, with its corrections.
    Origami,
}

impl Variant {
    pub fn parse(s: &str) -> Option<Variant> {
        match s.trim().to_ascii_lowercase().as_str() {
            "seed" => Some(Variant::Seed),
            "origami" => Some(Variant::Origami),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Variant::Seed => "seed",
            Variant::Origami => "origami",
        }
    }
}

/// Everything the model needs about the hardware.
#[derive(Debug, Clone, Copy)]
pub struct ModelInputs<'a> {
    pub gpu: &'a GpuDesc,
    pub params: &'a ModelParams,
    pub constants: &'a ModelConstants,
    pub variant: Variant,
}

/// Output element bytes: the input type's, fp16 for 8-bit and narrower inputs.
pub fn output_bytes_per_element(dtype: Dtype) -> f64 {
    if dtype.bits() <= 8 {
        2.0
    } else {
        dtype.bytes()
    }
}

/// Ceiling division, by a shift when the divisor is a power of two (tile and MMA sizes
/// always are): the selection's hot path does a dozen of these per config. A divisor of 0
/// counts as 1.
#[inline]
pub fn ceil_div(a: u64, b: u64) -> u64 {
    if b.is_power_of_two() {
        let s = b.trailing_zeros();
        (a >> s) + u64::from(a & (b - 1) != 0)
    } else {
        a.div_ceil(b.max(1))
    }
}

/// DRAM bandwidth fraction min(1, coeff x active SMs) (the NVIDIA port report, Algorithm 7).
#[inline]
pub fn dram_bw_fraction(coeff: f64, active_sms: u64) -> f64 {
    (coeff * active_sms as f64).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_fraction_clamps_at_one() {
        assert_eq!(dram_bw_fraction(0.0222, 128), 1.0);
        assert!((dram_bw_fraction(0.0222, 10) - 0.222).abs() < 1e-12);
        assert_eq!(dram_bw_fraction(1.0, 1_000_000), 1.0);
    }

    #[test]
    fn ceil_div_by_shift_and_by_division_agree() {
        for a in [0u64, 1, 7, 64, 65, 4095, 4096, 4097, 1 << 40] {
            for b in [0u64, 1, 2, 3, 16, 48, 64, 128, 1000] {
                assert_eq!(ceil_div(a, b), a.div_ceil(b.max(1)), "{a} / {b}");
            }
        }
    }
}
