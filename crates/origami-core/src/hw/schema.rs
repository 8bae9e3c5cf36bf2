//! The hardware parameter document: one versioned JSON schema shared by
//! `origami-calibrate` output, the presets in `calibrations/` and `TRITONBLAS_HW_PARAMS`.
//!
//! It carries the five Origami model parameters (the NVIDIA port report, section 4, table
//! "The model requires 5 hardware-specific parameters"), the GPU description (its appendix
//! C.3), optional overrides of the model's empirical constants, every raw measurement with
//! its statistics, and the provenance of the numbers.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::stats::Summary;

/// Version of this schema. A document with another version is rejected.
pub const SCHEMA_VERSION: u32 = 1;

/// The five parameters of the Origami model. Units as in the NVIDIA port report: perf ratios
/// are bytes per SM clock cycle (aggregate bandwidth over the SM clock).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelParams {
    /// Aggregate L2 bandwidth over the SM clock, bytes per cycle.
    pub l2_perf_ratio: f64,
    /// Aggregate DRAM bandwidth over the SM clock, bytes per cycle.
    pub dram_perf_ratio: f64,
    /// DRAM bandwidth fraction per active SM: fraction = min(1, coeff x active SMs).
    pub dram_bw_coeff: f64,
    /// DRAM latency beyond an L2 hit, cycles.
    pub hbm_latency_penalty: f64,
    /// Latency of one dependent MMA instruction, cycles.
    pub mma_latency: f64,
}

/// Names of the five parameters, in schema order.
pub const PARAM_NAMES: [&str; 5] = [
    "l2_perf_ratio",
    "dram_perf_ratio",
    "dram_bw_coeff",
    "hbm_latency_penalty",
    "mma_latency",
];

impl ModelParams {
    /// Value of a parameter by its schema name.
    pub fn get(&self, name: &str) -> Option<f64> {
        Some(match name {
            "l2_perf_ratio" => self.l2_perf_ratio,
            "dram_perf_ratio" => self.dram_perf_ratio,
            "dram_bw_coeff" => self.dram_bw_coeff,
            "hbm_latency_penalty" => self.hbm_latency_penalty,
            "mma_latency" => self.mma_latency,
            _ => return None,
        })
    }

    /// Set a parameter by its schema name; false for an unknown name.
    pub fn set(&mut self, name: &str, v: f64) -> bool {
        match name {
            "l2_perf_ratio" => self.l2_perf_ratio = v,
            "dram_perf_ratio" => self.dram_perf_ratio = v,
            "dram_bw_coeff" => self.dram_bw_coeff = v,
            "hbm_latency_penalty" => self.hbm_latency_penalty = v,
            "mma_latency" => self.mma_latency = v,
            _ => return false,
        }
        true
    }
}

/// The GPU description (what the model and the feasibility filters need).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuDesc {
    /// Marketing name as the driver reports it, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability, e.g. [9, 0].
    pub compute_capability: [u32; 2],
    pub sm_count: u32,
    pub l2_bytes: u64,
    /// Opt-in shared memory per block.
    pub smem_per_block_optin_bytes: u64,
    pub registers_per_sm: u32,
    pub max_registers_per_thread: u32,
    /// SM clock (maximum, or measured under load when calibrated).
    pub sm_clock_mhz: f64,
    pub mem_clock_mhz: f64,
    pub mem_bus_width_bits: u32,
    /// MMA instruction shape [m, n, k] used by the model's compute latency (mma.sync m16n8k16).
    pub mma_shape: [u32; 3],
    pub tensor_cores_per_sm: u32,
}

/// One raw measurement with its statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurement {
    pub name: String,
    pub unit: String,
    #[serde(flatten)]
    pub summary: Summary,
    /// Free-form details (footprint, variant, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub details: BTreeMap<String, serde_json::Value>,
}

/// A measured curve, e.g. DRAM bandwidth against the number of active SMs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Curve {
    pub x_name: String,
    pub y_name: String,
    pub points: Vec<[f64; 2]>,
    /// Fit notes (e.g. the fitted coefficient and its error).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fit: BTreeMap<String, f64>,
}

/// Where the numbers come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// "measured" (by origami-calibrate) or "estimated" (from public sources).
    pub kind: ProvenanceKind,
    /// For estimates: the public source(s); for measurements: the command that ran.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<u32>,
    /// Clocks, throttle reasons and other observations during the run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub observed: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProvenanceKind {
    Measured,
    Estimated,
}

/// A full hardware document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HwDoc {
    pub schema_version: u32,
    pub gpu: GpuDesc,
    pub params: ModelParams,
    /// Overrides of the model's empirical constants (see `constants`), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub constants: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measurements: Vec<Measurement>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub curves: BTreeMap<String, Curve>,
    pub provenance: Provenance,
}
