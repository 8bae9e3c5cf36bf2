//! The rules behind `origami-predict`'s flags: which values a size, a time and an L2 hit
//! rate may take, the names that have a perf description, and the L2 treatment of the
//! warp-specialized persistent GEMM model chosen from the `--l2` flags.

use clap::ValueEnum;

use super::gpu::GpuPerf;
use super::l2::Raster;
use super::problem::{OutDtype, Pair};
use super::ws::L2Mode;
use crate::dtype::Dtype;

/// A whole number above zero (sizes, swizzle widths).
pub fn positive(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if v > 0 => Ok(v),
        _ => Err("must be a positive integer".into()),
    }
}

/// A finite number above zero (times, bandwidths).
pub fn positive_f64(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("must be a positive number".into()),
    }
}

/// An L2 hit rate: a number in [0, 1).
pub fn hit_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..1.0).contains(&v) => Ok(v),
        _ => Err("must be a number in [0, 1)".into()),
    }
}

/// An input type by name.
pub fn dtype(s: &str) -> Result<Dtype, String> {
    s.parse::<Dtype>().map_err(|e| e.to_string())
}

/// An output type by name.
pub fn out_dtype(s: &str) -> Result<OutDtype, String> {
    s.parse::<OutDtype>().map_err(|e| e.to_string())
}

/// An `MxN` pair (tile, cluster).
pub fn pair(s: &str) -> Result<Pair, String> {
    s.parse::<Pair>()
}

/// A GPU that has an embedded perf description, by name.
pub fn known_gpu(s: &str) -> Result<String, String> {
    GpuPerf::by_name(s)
        .map(|g| g.name)
        .map_err(|e| e.to_string())
}

/// Output format of a single prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// `--l2`: how the warp-specialized model treats L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum L2Choice {
    None,
    HitRate,
    Raster,
}

/// `--raster`: the raster order for `--l2 raster`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RasterChoice {
    Auto,
    M,
    N,
}

/// The L2 flags of the warp-specialized model.
#[derive(Debug, Clone, clap::Args)]
pub struct L2Args {
    /// L2 treatment of the ws model: none (every load from DRAM, the warp-specialized
    /// persistent GEMM model as printed), hit-rate (that model's global knob), raster
    /// (reuse from rasterization and resident tiles).
    #[arg(long, value_enum, default_value_t = L2Choice::None)]
    pub l2: L2Choice,
    /// Hit rate for --l2 hit-rate (default: the GPU description's knob).
    #[arg(long, value_parser = hit_rate)]
    pub l2_hit_rate: Option<f64>,
    /// Raster order for --l2 raster.
    #[arg(long, value_enum, default_value_t = RasterChoice::Auto)]
    pub raster: RasterChoice,
    /// Swizzle band width (clusters) for --l2 raster.
    #[arg(long, default_value_t = 1, value_parser = positive)]
    pub swizzle: u64,
}

impl L2Args {
    /// The L2 treatment these flags ask for on `gpu` (whose knob is the default hit rate).
    pub fn mode(&self, gpu: &GpuPerf) -> L2Mode {
        match self.l2 {
            L2Choice::None => L2Mode::None,
            L2Choice::HitRate => L2Mode::HitRate(self.l2_hit_rate.unwrap_or(gpu.ws.l2_hit_rate)),
            L2Choice::Raster => L2Mode::Raster {
                order: match self.raster {
                    RasterChoice::Auto => None,
                    RasterChoice::M => Some(Raster::AlongM),
                    RasterChoice::N => Some(Raster::AlongN),
                },
                swizzle: self.swizzle,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_rules() {
        assert_eq!(positive(" 7 "), Ok(7));
        assert!(positive("0").is_err());
        assert!(positive("-1").is_err());
        assert_eq!(positive_f64("1.5"), Ok(1.5));
        assert!(positive_f64("inf").is_err());
        assert!(positive_f64("0").is_err());
        assert_eq!(hit_rate("0"), Ok(0.0));
        assert!(hit_rate("1").is_err());
        assert!(known_gpu("nope").unwrap_err().contains("unknown gpu"));
    }

    #[test]
    fn l2_flags_to_mode() {
        let g = GpuPerf::by_name("h200").unwrap();
        let mut a = L2Args {
            l2: L2Choice::HitRate,
            l2_hit_rate: None,
            raster: RasterChoice::Auto,
            swizzle: 1,
        };
        assert_eq!(a.mode(&g), L2Mode::HitRate(g.ws.l2_hit_rate));
        a.l2 = L2Choice::Raster;
        a.raster = RasterChoice::N;
        a.swizzle = 4;
        assert_eq!(
            a.mode(&g),
            L2Mode::Raster {
                order: Some(Raster::AlongN),
                swizzle: 4
            }
        );
        a.l2 = L2Choice::None;
        assert_eq!(a.mode(&g), L2Mode::None);
    }
}
