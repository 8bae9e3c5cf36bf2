//! The hardware documents embedded in the binary (`calibrations/*.json`): tier 2 of the
//! parameter resolution (the NVIDIA port report, section 4.1). Each file records whether it
//! was measured by `origami-calibrate` or estimated from public sources, and which.

use std::path::Path;

use super::load::{parse_str, HwError, HwFile};
use super::schema::HwDoc;

/// (name, JSON text) of every embedded preset.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "rtx4090",
        include_str!("../../../../calibrations/rtx4090.json"),
    ),
    (
        "h100-sxm",
        include_str!("../../../../calibrations/h100-sxm.json"),
    ),
    ("h200", include_str!("../../../../calibrations/h200.json")),
    ("a100", include_str!("../../../../calibrations/a100.json")),
    ("b200", include_str!("../../../../calibrations/b200.json")),
];

/// The preset used when no GPU is present and none is named.
pub const DEFAULT_PRESET: &str = "h100-sxm";

/// Names of every preset, comma separated (for error messages).
pub fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Unknown preset name.
#[derive(Debug, thiserror::Error)]
#[error("unknown GPU '{0}' (known: {known})", known = preset_names())]
pub struct UnknownGpu(pub String);

/// Load an embedded preset by name.
pub fn preset(name: &str) -> Result<HwDoc, UnknownGpu> {
    let key = name.trim().to_ascii_lowercase();
    let (n, text) = PRESETS
        .iter()
        .find(|(n, _)| *n == key)
        .ok_or_else(|| UnknownGpu(name.to_string()))?;
    Ok(parse_embedded(n, text).expect("embedded presets are validated by tests"))
}

fn parse_embedded(name: &str, text: &str) -> Result<HwDoc, HwError> {
    match parse_str(text, Path::new(&format!("calibrations/{name}.json")))? {
        HwFile::Full(doc) => Ok(*doc),
        HwFile::Override(_) => Err(HwError::Schema {
            path: format!("calibrations/{name}.json").into(),
            msg: "a preset must be a full document".into(),
        }),
    }
}

/// The preset whose GPU name matches a device name reported by the driver, if any
/// ("NVIDIA H100 80GB HBM3" -> h100-sxm).
pub fn preset_for_device(device_name: &str) -> Option<&'static str> {
    let d = device_name.to_ascii_lowercase();
    let rules: [(&str, &str); 5] = [
        ("4090", "rtx4090"),
        ("h200", "h200"),
        ("h100", "h100-sxm"),
        ("a100", "a100"),
        ("b200", "b200"),
    ];
    rules
        .iter()
        .find(|(pat, _)| d.contains(pat))
        .map(|(_, p)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_validates() {
        for (name, text) in PRESETS {
            let doc = parse_embedded(name, text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(doc.gpu.sm_count > 0);
        }
    }

    #[test]
    fn rtx4090_matches_port_report_appendix_a() {
        let d = preset("rtx4090").unwrap();
        assert_eq!(d.params.l2_perf_ratio, 1896.0);
        assert_eq!(d.params.dram_perf_ratio, 342.9);
        assert_eq!(d.params.dram_bw_coeff, 0.0222);
        assert_eq!(d.params.hbm_latency_penalty, 623.0);
        assert_eq!(d.params.mma_latency, 33.0);
        assert_eq!(d.gpu.sm_count, 128);
        assert_eq!(d.gpu.l2_bytes, 75_497_472);
        assert_eq!(d.gpu.smem_per_block_optin_bytes, 101_376);
    }

    #[test]
    fn unknown_gpu_lists_known() {
        let e = preset("v100").unwrap_err().to_string();
        assert!(
            e.contains("v100") && e.contains("h100-sxm") && e.contains("rtx4090"),
            "{e}"
        );
    }

    #[test]
    fn device_names_map_to_presets() {
        assert_eq!(preset_for_device("NVIDIA H100 80GB HBM3"), Some("h100-sxm"));
        assert_eq!(preset_for_device("NVIDIA H200"), Some("h200"));
        assert_eq!(
            preset_for_device("NVIDIA GeForce RTX 4090"),
            Some("rtx4090")
        );
        assert_eq!(preset_for_device("Tesla T4"), None);
    }
}
