//! Element data types of GEMM operands: storage width, block-scale layout and names.
//!
//! Covers the types of the NVIDIA port report (fp16, bf16, fp8, fp32) and the narrow and
//! block-scaled types of the warp-specialized persistent GEMM model and the NVFP4
//! group-GEMM roofline trace (NVFP4: e2m1 with one fp8 scale per 16 elements; MXFP8/MXFP4:
//! one e8m0 scale per 32 elements).

use std::fmt;
use std::str::FromStr;

/// A GEMM operand element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dtype {
    Fp32,
    Tf32,
    Fp16,
    Bf16,
    Fp8E4m3,
    Fp8E5m2,
    Int8,
    Nvfp4,
    Mxfp8,
    Mxfp4,
}

/// Every type, in a fixed order (for listings and error messages).
pub const ALL_DTYPES: [Dtype; 10] = [
    Dtype::Fp32,
    Dtype::Tf32,
    Dtype::Fp16,
    Dtype::Bf16,
    Dtype::Fp8E4m3,
    Dtype::Fp8E5m2,
    Dtype::Int8,
    Dtype::Nvfp4,
    Dtype::Mxfp8,
    Dtype::Mxfp4,
];

/// Block scaling: how many elements share one scale factor, and the scale's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockScale {
    pub elements_per_scale: u32,
    pub scale_bytes: u32,
}

impl Dtype {
    /// Storage bits of one element (without block scales).
    pub fn bits(self) -> u32 {
        match self {
            Dtype::Fp32 | Dtype::Tf32 => 32,
            Dtype::Fp16 | Dtype::Bf16 => 16,
            Dtype::Fp8E4m3 | Dtype::Fp8E5m2 | Dtype::Int8 | Dtype::Mxfp8 => 8,
            Dtype::Nvfp4 | Dtype::Mxfp4 => 4,
        }
    }

    /// Storage bytes of one element (0.5 for 4-bit types), without block scales.
    pub fn bytes(self) -> f64 {
        f64::from(self.bits()) / 8.0
    }

    /// Block-scale layout, for the block-scaled types.
    pub fn block_scale(self) -> Option<BlockScale> {
        match self {
            Dtype::Nvfp4 => Some(BlockScale {
                elements_per_scale: 16,
                scale_bytes: 1,
            }),
            Dtype::Mxfp8 | Dtype::Mxfp4 => Some(BlockScale {
                elements_per_scale: 32,
                scale_bytes: 1,
            }),
            _ => None,
        }
    }

    /// Canonical name, as accepted by `FromStr` and printed in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Fp32 => "fp32",
            Dtype::Tf32 => "tf32",
            Dtype::Fp16 => "fp16",
            Dtype::Bf16 => "bf16",
            Dtype::Fp8E4m3 => "fp8",
            Dtype::Fp8E5m2 => "fp8e5m2",
            Dtype::Int8 => "int8",
            Dtype::Nvfp4 => "nvfp4",
            Dtype::Mxfp8 => "mxfp8",
            Dtype::Mxfp4 => "mxfp4",
        }
    }

    /// Comma-separated list of every accepted canonical name.
    pub fn known_names() -> String {
        ALL_DTYPES
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Error for an unknown type name; its message lists the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dtype '{0}' (known: {known})", known = Dtype::known_names())]
pub struct UnknownDtype(pub String);

impl FromStr for Dtype {
    type Err = UnknownDtype;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let d = match s.trim().to_ascii_lowercase().as_str() {
            "fp32" | "f32" | "float32" => Dtype::Fp32,
            "tf32" => Dtype::Tf32,
            "fp16" | "f16" | "half" | "float16" => Dtype::Fp16,
            "bf16" | "bfloat16" => Dtype::Bf16,
            "fp8" | "e4m3" | "fp8e4m3" | "fp8_e4m3" => Dtype::Fp8E4m3,
            "e5m2" | "fp8e5m2" | "fp8_e5m2" => Dtype::Fp8E5m2,
            "int8" | "i8" => Dtype::Int8,
            "nvfp4" => Dtype::Nvfp4,
            "mxfp8" => Dtype::Mxfp8,
            "mxfp4" => Dtype::Mxfp4,
            _ => return Err(UnknownDtype(s.to_string())),
        };
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in ALL_DTYPES {
            assert_eq!(d.name().parse::<Dtype>().unwrap(), d);
        }
    }

    #[test]
    fn widths_and_scales() {
        assert_eq!(Dtype::Fp16.bytes(), 2.0);
        assert_eq!(Dtype::Nvfp4.bytes(), 0.5);
        assert_eq!(Dtype::Nvfp4.block_scale().unwrap().elements_per_scale, 16);
        assert_eq!(Dtype::Mxfp4.block_scale().unwrap().elements_per_scale, 32);
        assert!(Dtype::Fp8E4m3.block_scale().is_none());
    }

    #[test]
    fn unknown_lists_known() {
        let e = "fp64".parse::<Dtype>().unwrap_err().to_string();
        assert!(e.contains("fp64") && e.contains("bf16"), "{e}");
    }
}
