//! Per-GPU performance descriptions for the perf models: roofline constants (peak math rate
//! per dtype, DRAM and L2 bandwidth, DRAM latency) and the configuration of
//! the warp-specialized persistent GEMM model. Files in `calibrations/perf/`, each with its
//! public source, embedded at build time; another file of the same schema can be loaded by
//! path.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::PerfError;
use crate::dtype::Dtype;

/// GPU names accepted by `--gpu`, in the project's order.
pub const KNOWN_GPUS: [&str; 5] = ["rtx4090", "h100-sxm", "h200", "a100", "b200"];

const EMBEDDED: [(&str, &str); 5] = [
    (
        "rtx4090",
        include_str!("../../calibrations/perf/rtx4090.json"),
    ),
    (
        "h100-sxm",
        include_str!("../../calibrations/perf/h100-sxm.json"),
    ),
    ("h200", include_str!("../../calibrations/perf/h200.json")),
    ("a100", include_str!("../../calibrations/perf/a100.json")),
    ("b200", include_str!("../../calibrations/perf/b200.json")),
];

/// The schema tag every perf description carries.
pub const SCHEMA: &str = "origami.perf.v1";

/// One GPU's perf description.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuPerf {
    pub schema: String,
    pub name: String,
    pub description: String,
    /// Where every number came from.
    pub sources: Vec<String>,
    pub hardware: HardwarePerf,
    pub ws: WsConfig,
}

/// Roofline / SOL constants.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwarePerf {
    pub sm_count: u32,
    pub sm_clock_mhz: f64,
    /// DRAM bandwidth the SOL and roofline use.
    pub dram_bandwidth_gbps: f64,
    /// The marketing figure, when it differs from the one used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_bandwidth_nominal_gbps: Option<f64>,
    pub dram_latency_ns: f64,
    pub l2_bytes: u64,
    pub l2_bandwidth_gbps: f64,
    /// Dense tensor (or SIMT for fp32) peak per rate key, TFLOP/s.
    pub peak_tflops: BTreeMap<String, f64>,
}

/// Configuration of the warp-specialized persistent GEMM model, as published.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WsConfig {
    pub sm_count: u32,
    pub sm_clock_mhz: f64,
    pub dram_bus_bits: u32,
    pub dram_clock_mhz: f64,
    pub dram_transfers_per_clock: u32,
    pub l2_bandwidth_gbps: f64,
    pub mma_flops_per_sm_per_clock: BTreeMap<String, f64>,
    /// Launch and setup overhead before the first load.
    pub overhead_cycles: f64,
    /// Constant part of the epilogue of one tile.
    pub epilogue_min_cycles: f64,
    /// K extent (in bytes of the operand type) of the first load that the MMA waits for.
    pub first_dma_k_bytes: f64,
    /// Global L2 hit rate of the published model's knob (used with `L2Mode::HitRate`).
    pub l2_hit_rate: f64,
    /// Per-CTA MMA M (rows) at which the tensor core reaches its full rate.
    pub mma_full_rate_m: u32,
    /// Whether the chip has 2-CTA (paired-SM) MMA instructions.
    pub two_cta_mma: bool,
}

impl WsConfig {
    /// DRAM bandwidth in bytes per second: bus bytes x clock x transfers per clock.
    pub fn dram_bytes_per_s(&self) -> f64 {
        f64::from(self.dram_bus_bits) / 8.0
            * self.dram_clock_mhz
            * 1e6
            * f64::from(self.dram_transfers_per_clock)
    }

    /// SM clock in Hz.
    pub fn clock_hz(&self) -> f64 {
        self.sm_clock_mhz * 1e6
    }
}

/// Rate-table key for an operand type; fp16 with fp16 accumulation has its own key.
pub fn rate_key(dtype: Dtype, acc16: bool) -> String {
    if acc16 && dtype == Dtype::Fp16 {
        "fp16_acc16".to_string()
    } else {
        dtype.name().to_string()
    }
}

fn lookup(
    gpu: &str,
    table: &BTreeMap<String, f64>,
    key: &str,
    what: &'static str,
) -> Result<f64, PerfError> {
    table.get(key).copied().ok_or_else(|| PerfError::NoRate {
        gpu: gpu.to_string(),
        what,
        key: key.to_string(),
        have: table.keys().cloned().collect::<Vec<_>>().join(", "),
    })
}

impl GpuPerf {
    /// The embedded description of a known GPU.
    pub fn by_name(name: &str) -> Result<GpuPerf, PerfError> {
        let lower = name.trim().to_ascii_lowercase();
        let (_, text) = EMBEDDED
            .iter()
            .find(|(n, _)| *n == lower)
            .ok_or_else(|| PerfError::UnknownGpu(name.to_string()))?;
        Self::from_json(text, &format!("calibrations/perf/{lower}.json"))
    }

    /// Parses and validates a description; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<GpuPerf, PerfError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let g: GpuPerf = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let field = e.path().to_string();
            let inner = e.into_inner();
            PerfError::Input {
                path: origin.to_string(),
                msg: if field == "." {
                    format!("invalid perf description: {inner}")
                } else {
                    format!("invalid perf description: field '{field}': {inner}")
                },
            }
        })?;
        de.end().map_err(|e| PerfError::Input {
            path: origin.to_string(),
            msg: format!("invalid perf description: {e}"),
        })?;
        g.validate().map_err(|msg| PerfError::Input {
            path: origin.to_string(),
            msg,
        })?;
        Ok(g)
    }

    /// Loads a description from a file.
    pub fn from_file(path: &std::path::Path) -> Result<GpuPerf, PerfError> {
        let text = crate::input::read_text(path).map_err(|e| PerfError::Input {
            path: path.display().to_string(),
            msg: format!("cannot read: {e}"),
        })?;
        Self::from_json(&text, &path.display().to_string())
    }

    fn validate(&self) -> Result<(), String> {
        if self.schema != SCHEMA {
            return Err(format!("schema '{}', expected '{SCHEMA}'", self.schema));
        }
        let h = &self.hardware;
        let w = &self.ws;
        let positive = [
            ("hardware.sm_clock_mhz", h.sm_clock_mhz),
            ("hardware.dram_bandwidth_gbps", h.dram_bandwidth_gbps),
            ("hardware.dram_latency_ns", h.dram_latency_ns),
            ("hardware.l2_bandwidth_gbps", h.l2_bandwidth_gbps),
            ("ws.sm_clock_mhz", w.sm_clock_mhz),
            ("ws.dram_clock_mhz", w.dram_clock_mhz),
            ("ws.l2_bandwidth_gbps", w.l2_bandwidth_gbps),
            ("ws.first_dma_k_bytes", w.first_dma_k_bytes),
        ];
        for (field, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!(
                    "{field} must be a positive number, got {}",
                    crate::output::shown(v)
                ));
            }
        }
        for (field, v) in [
            ("ws.overhead_cycles", w.overhead_cycles),
            ("ws.epilogue_min_cycles", w.epilogue_min_cycles),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "{field} must be >= 0, got {}",
                    crate::output::shown(v)
                ));
            }
        }
        if h.sm_count == 0 || w.sm_count == 0 || w.dram_bus_bits == 0 {
            return Err("sm_count and ws.dram_bus_bits must be > 0".into());
        }
        let most = crate::hw::load::MAX_SM_COUNT;
        for (field, v) in [
            ("hardware.sm_count", h.sm_count),
            ("ws.sm_count", w.sm_count),
        ] {
            if v > most {
                return Err(format!("{field} must be at most {most}, got {v}"));
            }
        }
        if w.dram_transfers_per_clock == 0 || w.mma_full_rate_m == 0 {
            return Err("ws.dram_transfers_per_clock and ws.mma_full_rate_m must be > 0".into());
        }
        if !(0.0..1.0).contains(&w.l2_hit_rate) {
            return Err(format!(
                "ws.l2_hit_rate must be in [0, 1), got {}",
                w.l2_hit_rate
            ));
        }
        for (table, name) in [
            (&h.peak_tflops, "hardware.peak_tflops"),
            (
                &w.mma_flops_per_sm_per_clock,
                "ws.mma_flops_per_sm_per_clock",
            ),
        ] {
            for (k, v) in table {
                if k != "fp16_acc16" && k.parse::<Dtype>().is_err() {
                    return Err(format!("{name}: unknown dtype key '{k}'"));
                }
                if !(v.is_finite() && *v > 0.0) {
                    return Err(format!("{name}.{k} must be a positive number"));
                }
            }
        }
        Ok(())
    }

    /// Dense peak math rate in FLOP/s for an operand type.
    pub fn peak_flops(&self, dtype: Dtype, acc16: bool) -> Result<f64, PerfError> {
        let key = rate_key(dtype, acc16);
        Ok(lookup(&self.name, &self.hardware.peak_tflops, &key, "peak_tflops")? * 1e12)
    }

    /// DRAM bandwidth of the roofline, bytes per second.
    pub fn dram_bytes_per_s(&self) -> f64 {
        self.hardware.dram_bandwidth_gbps * 1e9
    }

    /// MMA flops per SM per clock of the ws model.
    pub fn ws_mma_flops_per_clock(&self, dtype: Dtype, acc16: bool) -> Result<f64, PerfError> {
        let key = rate_key(dtype, acc16);
        lookup(
            &self.name,
            &self.ws.mma_flops_per_sm_per_clock,
            &key,
            "ws.mma_flops_per_sm_per_clock",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_description_loads() {
        for name in KNOWN_GPUS {
            let g = GpuPerf::by_name(name).unwrap();
            assert_eq!(g.name, name);
            assert!(!g.sources.is_empty());
        }
    }

    #[test]
    fn unknown_gpu_lists_known() {
        let e = GpuPerf::by_name("v100").unwrap_err().to_string();
        assert!(
            e.contains("v100") && e.contains("h200") && e.contains("b200"),
            "{e}"
        );
    }

    #[test]
    fn ws_model_dram_bandwidth() {
        let g = GpuPerf::by_name("b200").unwrap();
        assert_eq!(g.ws.dram_bytes_per_s(), 8.192e12);
    }

    #[test]
    fn missing_rate_is_an_error() {
        let g = GpuPerf::by_name("a100").unwrap();
        let e = g.peak_flops(Dtype::Nvfp4, false).unwrap_err().to_string();
        assert!(e.contains("nvfp4") && e.contains("a100"), "{e}");
    }

    #[test]
    fn bad_description_names_field() {
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../calibrations/perf/h200.json")).unwrap();
        v["ws"]["l2_hit_rate"] = serde_json::json!(1.5);
        let e = GpuPerf::from_json(&v.to_string(), "x.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.json") && e.contains("l2_hit_rate"), "{e}");
    }

    #[test]
    fn more_sms_than_any_gpu_is_refused() {
        // 60,182 SMs made the raster model's per-wave work explode (found by the fuzz
        // harness); no GPU has more than a few hundred.
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../calibrations/perf/rtx4090.json")).unwrap();
        v["ws"]["sm_count"] = serde_json::json!(60182);
        let e = GpuPerf::from_json(&v.to_string(), "x.json")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "x.json: ws.sm_count must be at most 1024, got 60182");
    }
}
