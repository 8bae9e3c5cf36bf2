//! A GEMM problem C[M,N] = A[M,K] x B[K,N] and the bytes each operand occupies in DRAM:
//! element data, block-scale factors (one fp8 scale per 16 elements for NVFP4, one e8m0
//! per 32 for MXFP8/MXFP4) and the output (the NVFP4 group-GEMM roofline trace, section 2.1).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::PerfError;
use crate::dtype::Dtype;
use crate::model::problem::check_dim;

/// Output (C/D) element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OutDtype {
    Fp32,
    Fp16,
    Bf16,
    Fp8,
    Int32,
}

impl OutDtype {
    pub fn bytes(self) -> f64 {
        match self {
            OutDtype::Fp32 | OutDtype::Int32 => 4.0,
            OutDtype::Fp16 | OutDtype::Bf16 => 2.0,
            OutDtype::Fp8 => 1.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            OutDtype::Fp32 => "fp32",
            OutDtype::Fp16 => "fp16",
            OutDtype::Bf16 => "bf16",
            OutDtype::Fp8 => "fp8",
            OutDtype::Int32 => "int32",
        }
    }

    /// The usual output of a GEMM on this operand type: fp32 for fp32/tf32, int32 for int8,
    /// bf16 for bf16, fp16 otherwise (the NVFP4 group-GEMM roofline trace writes NVFP4
    /// results as fp16).
    pub fn default_for(dtype: Dtype) -> OutDtype {
        match dtype {
            Dtype::Fp32 | Dtype::Tf32 => OutDtype::Fp32,
            Dtype::Int8 => OutDtype::Int32,
            Dtype::Bf16 => OutDtype::Bf16,
            _ => OutDtype::Fp16,
        }
    }
}

impl fmt::Display for OutDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for OutDtype {
    type Err = PerfError;
    fn from_str(s: &str) -> Result<Self, PerfError> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "fp32" | "f32" | "float32" => OutDtype::Fp32,
            "fp16" | "f16" | "half" => OutDtype::Fp16,
            "bf16" | "bfloat16" => OutDtype::Bf16,
            "fp8" | "e4m3" | "e5m2" => OutDtype::Fp8,
            "int32" | "i32" => OutDtype::Int32,
            _ => {
                return Err(PerfError::Invalid(format!(
                    "unknown output dtype '{s}' (known: fp32, fp16, bf16, fp8, int32)"
                )))
            }
        })
    }
}

/// One GEMM problem.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Problem {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    #[serde(serialize_with = "ser_dtype")]
    pub dtype: Dtype,
    pub out: OutDtype,
    /// fp16 operands with fp16 accumulation (a separate, faster rate on some GPUs).
    pub acc16: bool,
}

/// Serializes a `Dtype` by its canonical name.
pub fn ser_dtype<S: serde::Serializer>(d: &Dtype, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(d.name())
}

impl Problem {
    /// A problem with the default output type and fp32 accumulation.
    /// Sizes follow the rule every front end shares (1 to 2^31, see `model::problem`).
    pub fn new(m: u64, n: u64, k: u64, dtype: Dtype) -> Result<Problem, PerfError> {
        for (name, v) in [("M", m), ("N", n), ("K", k)] {
            check_dim(name, v).map_err(|e| PerfError::Invalid(e.to_string()))?;
        }
        Ok(Problem {
            m,
            n,
            k,
            dtype,
            out: OutDtype::default_for(dtype),
            acc16: false,
        })
    }

    pub fn with_out(mut self, out: OutDtype) -> Problem {
        self.out = out;
        self
    }

    /// 2 M N K.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// DRAM bytes of each operand, each read or written once.
    pub fn bytes(&self) -> GemmBytes {
        let (m, n, k) = (self.m as f64, self.n as f64, self.k as f64);
        GemmBytes {
            a: operand_bytes(self.dtype, m, k),
            b: operand_bytes(self.dtype, n, k),
            sfa: scale_bytes(self.dtype, m, k),
            sfb: scale_bytes(self.dtype, n, k),
            c: m * n * self.out.bytes(),
        }
    }
}

/// Bytes of the element data of a rows x k operand (no scales).
pub fn operand_bytes(dtype: Dtype, rows: f64, k: f64) -> f64 {
    rows * k * dtype.bytes()
}

/// Bytes of the block-scale factors of a rows x k operand (0 for unscaled types): one
/// scale per block of `elements_per_scale` along K, a partial block taking a scale too.
pub fn scale_bytes(dtype: Dtype, rows: f64, k: f64) -> f64 {
    match dtype.block_scale() {
        Some(s) => rows * (k / f64::from(s.elements_per_scale)).ceil() * f64::from(s.scale_bytes),
        None => 0.0,
    }
}

/// DRAM bytes per tensor of one GEMM.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct GemmBytes {
    pub a: f64,
    pub b: f64,
    pub sfa: f64,
    pub sfb: f64,
    pub c: f64,
}

impl GemmBytes {
    pub fn total(&self) -> f64 {
        self.a + self.b + self.sfa + self.sfb + self.c
    }
    pub fn add(&self, o: &GemmBytes) -> GemmBytes {
        GemmBytes {
            a: self.a + o.a,
            b: self.b + o.b,
            sfa: self.sfa + o.sfa,
            sfb: self.sfb + o.sfb,
            c: self.c + o.c,
        }
    }
}

/// A pair "MxN" such as a tile (128x64) or a cluster shape (2x1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Pair {
    pub m: u32,
    pub n: u32,
}

impl fmt::Display for Pair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.m, self.n)
    }
}

impl FromStr for Pair {
    type Err = String;
    /// Accepts "128x64", "128,64", "(128 64)" and "128 64".
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().trim_start_matches('(').trim_end_matches(')');
        let parts: Vec<&str> = t
            .split(|c: char| c == 'x' || c == 'X' || c == ',' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .collect();
        if parts.len() != 2 {
            return Err(format!("'{s}' is not of the form MxN"));
        }
        let p = |x: &str| -> Result<u32, String> {
            match x.parse::<u32>() {
                Ok(v) if v > 0 => Ok(v),
                _ => Err(format!(
                    "'{s}' is not of the form MxN with positive integers"
                )),
            }
        };
        Ok(Pair {
            m: p(parts[0])?,
            n: p(parts[1])?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roofline_trace_problem1_group_m128_bytes() {
        // the NVFP4 group-GEMM roofline trace, section 3.1, step 2
        let p = Problem::new(128, 4096, 7168, Dtype::Nvfp4).unwrap();
        let b = p.bytes();
        assert_eq!(b.a, 458_752.0);
        assert_eq!(b.b, 14_680_064.0);
        assert_eq!(b.c, 1_048_576.0);
        assert_eq!(b.sfa, 57_344.0);
        assert_eq!(b.sfb, 1_835_008.0);
        assert_eq!(b.total(), 18_079_744.0);
        assert_eq!(p.flops(), 7_516_192_768.0);
    }

    #[test]
    fn mx_scales_every_32() {
        let p = Problem::new(64, 64, 100, Dtype::Mxfp8).unwrap();
        // ceil(100/32) = 4 scales per row
        assert_eq!(p.bytes().sfa, 64.0 * 4.0);
        assert_eq!(p.bytes().a, 6400.0);
    }

    #[test]
    fn zero_size_rejected() {
        assert!(Problem::new(0, 1, 1, Dtype::Fp16).is_err());
        let e = Problem::new(1, 1 << 32, 1, Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "N: 4294967296 is above the limit 2^31 = 2147483648");
    }

    #[test]
    fn pair_forms() {
        for s in ["128x64", "128,64", "(128 64)", " 128 X 64 "] {
            assert_eq!(s.parse::<Pair>().unwrap(), Pair { m: 128, n: 64 });
        }
        assert!("128".parse::<Pair>().is_err());
        assert!("0x64".parse::<Pair>().is_err());
        assert!("ax64".parse::<Pair>().is_err());
    }
}
