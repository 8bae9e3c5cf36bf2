//! Reading and validating hardware documents: a full `HwDoc`, or a flat override object
//! holding some of the five model parameters (and optionally `constants`), as accepted by
//! `TRITONBLAS_HW_PARAMS` (the NVIDIA port report, section 4.1, tier 3). Every failure
//! names the file and the field.
//!
//! [`parse_str`] is the one validation of a document: its schema, the parameters' and the
//! GPU description's ranges, and the constants' names and ranges (the table's rule in
//! `constants`). Every tool reads a file through it: the tier resolution
//! (`hw::resolve`, hence `origami-select` and the others) and `origami-calibrate --check`,
//! which adds its own checks of a calibration (provenance, CoV, plausibility) on top. A
//! file that loads here is one the selector accepts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::schema::{HwDoc, ModelParams, PARAM_NAMES, SCHEMA_VERSION};
use crate::constants::check_constant;

/// Why a hardware document was rejected.
#[derive(Debug, thiserror::Error)]
pub enum HwError {
    #[error("{path}: cannot read hardware file: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not valid JSON: {msg}")]
    NotJson { path: PathBuf, msg: String },
    #[error("{path}: {msg}")]
    Schema { path: PathBuf, msg: String },
    #[error("{path}: field '{field}': {msg}")]
    Field {
        path: PathBuf,
        field: String,
        msg: String,
    },
}

/// A parsed hardware file: either a full document or a partial override.
#[derive(Debug, Clone, PartialEq)]
pub enum HwFile {
    Full(Box<HwDoc>),
    Override(Override),
}

/// A flat override: some of the five parameters and/or model constants.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Override {
    pub params: BTreeMap<String, f64>,
    pub constants: BTreeMap<String, f64>,
}

/// Read and validate a hardware file from disk.
pub fn load_file(path: &Path) -> Result<HwFile, HwError> {
    let text = crate::input::read_text(path).map_err(|source| HwError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_str(&text, path)
}

/// Parse and validate a hardware document from text; `origin` names it in errors.
pub fn parse_str(text: &str, origin: &Path) -> Result<HwFile, HwError> {
    let path = origin.to_path_buf();
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| HwError::NotJson {
        path: path.clone(),
        msg: e.to_string(),
    })?;
    let obj = value.as_object().ok_or_else(|| HwError::Schema {
        path: path.clone(),
        msg: "top level must be a JSON object".into(),
    })?;
    if obj.contains_key("schema_version") {
        let version = obj["schema_version"].as_u64();
        if version != Some(u64::from(SCHEMA_VERSION)) {
            return Err(HwError::Field {
                path,
                field: "schema_version".into(),
                msg: format!(
                    "unsupported version {} (expected {SCHEMA_VERSION})",
                    obj["schema_version"]
                ),
            });
        }
        // The error names the field it is about ("measurements[3].n"), not just the type.
        let doc: HwDoc = serde_path_to_error::deserialize(value.clone()).map_err(|e| {
            let field = e.path().to_string();
            let msg = e.into_inner().to_string();
            if field == "." {
                HwError::Schema {
                    path: path.clone(),
                    msg,
                }
            } else {
                HwError::Field {
                    path: path.clone(),
                    field,
                    msg,
                }
            }
        })?;
        validate_doc(&doc, &path)?;
        return Ok(HwFile::Full(Box::new(doc)));
    }
    // Flat override.
    let mut ov = Override::default();
    for (key, v) in obj {
        if key == "constants" {
            let m = v.as_object().ok_or_else(|| HwError::Field {
                path: path.clone(),
                field: "constants".into(),
                msg: "must be an object of name: number".into(),
            })?;
            for (ck, cv) in m {
                let x = cv.as_f64().ok_or_else(|| HwError::Field {
                    path: path.clone(),
                    field: format!("constants.{ck}"),
                    msg: "must be a number".into(),
                })?;
                ov.constants.insert(ck.clone(), x);
            }
            validate_constants(&ov.constants, &path)?;
            continue;
        }
        if !PARAM_NAMES.contains(&key.as_str()) {
            return Err(HwError::Field {
                path,
                field: key.clone(),
                msg: format!(
                    "unknown field (a flat override takes {} and constants; a full document needs schema_version)",
                    PARAM_NAMES.join(", ")
                ),
            });
        }
        let x = v.as_f64().ok_or_else(|| HwError::Field {
            path: path.clone(),
            field: key.clone(),
            msg: "must be a number".into(),
        })?;
        check_param(key, x, &path)?;
        ov.params.insert(key.clone(), x);
    }
    if ov.params.is_empty() && ov.constants.is_empty() {
        return Err(HwError::Schema {
            path,
            msg: format!(
                "no parameters: expected a full document (with schema_version) or some of {}",
                PARAM_NAMES.join(", ")
            ),
        });
    }
    Ok(HwFile::Override(ov))
}

/// Range rules of the five parameters: bandwidths strictly positive, the rest non-negative
/// and finite; the DRAM coefficient positive.
pub fn check_param(name: &str, v: f64, path: &Path) -> Result<(), HwError> {
    let bad = |msg: &str| HwError::Field {
        path: path.to_path_buf(),
        field: name.into(),
        msg: format!("{msg} (got {})", crate::output::shown(v)),
    };
    if !v.is_finite() {
        return Err(bad("must be finite"));
    }
    match name {
        "l2_perf_ratio" | "dram_perf_ratio" | "dram_bw_coeff" | "mma_latency" if v <= 0.0 => {
            Err(bad("must be positive"))
        }
        "hbm_latency_penalty" if v < 0.0 => Err(bad("must not be negative")),
        _ => Ok(()),
    }
}

fn validate_params(p: &ModelParams, path: &Path) -> Result<(), HwError> {
    for name in PARAM_NAMES {
        check_param(name, p.get(name).unwrap_or(f64::NAN), path)
            .map_err(|e| prefix_field(e, "params."))?;
    }
    Ok(())
}

fn prefix_field(e: HwError, prefix: &str) -> HwError {
    match e {
        HwError::Field { path, field, msg } => HwError::Field {
            path,
            field: format!("{prefix}{field}"),
            msg,
        },
        other => other,
    }
}

/// The shared memory every CUDA GPU gives a block without opting in: the opt-in limit is
/// never below it.
pub const MIN_SMEM_PER_BLOCK_BYTES: u64 = 48 * 1024;
/// The lowest per-thread register limit of a CUDA GPU (compute capability 2.x and 3.0).
pub const MIN_REGISTERS_PER_THREAD: u32 = 63;
/// The highest per-thread register limit of a CUDA GPU (compute capability 3.2 on).
pub const MAX_REGISTERS_PER_THREAD: u32 = 255;

/// The most SMs a GPU description may have: several times any GPU made (the largest have
/// under 200), so that the models' per-wave work stays bounded.
pub const MAX_SM_COUNT: u32 = 1024;

/// Semantic checks of a full document beyond its shape.
pub fn validate_doc(doc: &HwDoc, path: &Path) -> Result<(), HwError> {
    validate_params(&doc.params, path)?;
    let g = &doc.gpu;
    let field = |f: &str, msg: &str| HwError::Field {
        path: path.to_path_buf(),
        field: format!("gpu.{f}"),
        msg: msg.into(),
    };
    if g.name.trim().is_empty() {
        return Err(field("name", "must not be empty"));
    }
    for (f, v) in [
        ("sm_count", u64::from(g.sm_count)),
        ("l2_bytes", g.l2_bytes),
        ("smem_per_block_optin_bytes", g.smem_per_block_optin_bytes),
        ("registers_per_sm", u64::from(g.registers_per_sm)),
        (
            "max_registers_per_thread",
            u64::from(g.max_registers_per_thread),
        ),
        ("mem_bus_width_bits", u64::from(g.mem_bus_width_bits)),
        ("tensor_cores_per_sm", u64::from(g.tensor_cores_per_sm)),
    ] {
        if v == 0 {
            return Err(field(f, "must be positive"));
        }
    }
    for (f, v) in [
        ("sm_clock_mhz", g.sm_clock_mhz),
        ("mem_clock_mhz", g.mem_clock_mhz),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(field(f, "must be a positive number"));
        }
    }
    if g.sm_count > MAX_SM_COUNT {
        return Err(field(
            "sm_count",
            &format!("must be at most {MAX_SM_COUNT} (got {})", g.sm_count),
        ));
    }
    if g.mma_shape.contains(&0) {
        return Err(field("mma_shape", "entries must be positive"));
    }
    let [major, minor] = g.compute_capability;
    if !(1..=99).contains(&major) || minor > 9 {
        return Err(field(
            "compute_capability",
            &format!("must be [major, minor] with major 1 to 99 and minor 0 to 9 (got [{major}, {minor}])"),
        ));
    }
    // Below these no config of a kernel family fits, and every tool would refuse the file.
    if g.smem_per_block_optin_bytes < MIN_SMEM_PER_BLOCK_BYTES {
        return Err(field(
            "smem_per_block_optin_bytes",
            &format!(
                "must be at least {MIN_SMEM_PER_BLOCK_BYTES} (48 KiB, what every CUDA GPU gives a block without opting in; got {})",
                g.smem_per_block_optin_bytes
            ),
        ));
    }
    if !(MIN_REGISTERS_PER_THREAD..=MAX_REGISTERS_PER_THREAD).contains(&g.max_registers_per_thread)
    {
        return Err(field(
            "max_registers_per_thread",
            &format!(
                "must be {MIN_REGISTERS_PER_THREAD} to {MAX_REGISTERS_PER_THREAD}, the limits of CUDA GPUs (got {})",
                g.max_registers_per_thread
            ),
        ));
    }
    validate_constants(&doc.constants, path)
}

/// The model's constants of a document, flat or full: known names, values in their ranges
/// (the table's rule, `constants::check_constant`), so that a file that loads is one
/// every tool can use.
pub fn validate_constants(constants: &BTreeMap<String, f64>, path: &Path) -> Result<(), HwError> {
    for (name, v) in constants {
        check_constant(name, *v).map_err(|e| HwError::Field {
            path: path.to_path_buf(),
            field: format!("constants.{}", e.name),
            msg: e.msg,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("t.json")
    }

    #[test]
    fn flat_override_accepted() {
        match parse_str(r#"{"l2_perf_ratio": 2000, "mma_latency": 30}"#, p()).unwrap() {
            HwFile::Override(o) => {
                assert_eq!(o.params["l2_perf_ratio"], 2000.0);
                assert_eq!(o.params.len(), 2);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn misspelt_field_named() {
        let e = parse_str(r#"{"l2_perf_ratoi": 2000}"#, p())
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.json") && e.contains("l2_perf_ratoi"), "{e}");
    }

    #[test]
    fn non_positive_bandwidth_named() {
        let e = parse_str(r#"{"dram_perf_ratio": 0}"#, p())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("dram_perf_ratio") && e.contains("positive"),
            "{e}"
        );
        let e = parse_str(r#"{"dram_perf_ratio": -3}"#, p())
            .unwrap_err()
            .to_string();
        assert!(e.contains("dram_perf_ratio"), "{e}");
    }

    #[test]
    fn not_json_and_not_object() {
        assert!(matches!(parse_str("{", p()), Err(HwError::NotJson { .. })));
        assert!(matches!(parse_str("[1]", p()), Err(HwError::Schema { .. })));
        assert!(matches!(parse_str("{}", p()), Err(HwError::Schema { .. })));
    }

    #[test]
    fn full_doc_missing_field_named() {
        let e = parse_str(r#"{"schema_version": 1, "gpu": {}}"#, p())
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing field"), "{e}");
    }

    #[test]
    fn constants_are_checked_in_both_forms_with_the_tables_rule() {
        let full = |constants: &str| {
            let mut v: serde_json::Value =
                serde_json::from_str(include_str!("../../../../calibrations/a100.json")).unwrap();
            v["constants"] = serde_json::from_str(constants).unwrap();
            v.to_string()
        };
        for (constants, want) in [
            (
                r#"{"tie_band": 5}"#,
                "t.json: field 'constants.tie_band': must be at most 1 (got 5)",
            ),
            (
                r#"{"tp_smooth_exponent": 0.5}"#,
                "t.json: field 'constants.tp_smooth_exponent': must be 0 (off) or at least 1 (got 0.5)",
            ),
            (
                r#"{"setup_cycles": -1}"#,
                "t.json: field 'constants.setup_cycles': must be a finite non-negative number (got -1)",
            ),
        ] {
            let flat = format!(r#"{{"constants": {constants}}}"#);
            for text in [flat, full(constants)] {
                assert_eq!(parse_str(&text, p()).unwrap_err().to_string(), want);
            }
        }
        let e = parse_str(r#"{"constants": {"nope": 1}}"#, p())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.json: field 'constants.nope': unknown constant (known: "),
            "{e}"
        );
        assert!(parse_str(&full(r#"{"tie_band": 0.02, "tp_smooth_exponent": 2}"#), p()).is_ok());
    }

    #[test]
    fn a_gpu_no_family_fits_is_refused() {
        let with = |field: &str, v: serde_json::Value| {
            let mut doc: serde_json::Value =
                serde_json::from_str(include_str!("../../../../calibrations/a100.json")).unwrap();
            doc["gpu"][field] = v;
            parse_str(&doc.to_string(), p()).map_err(|e| e.to_string())
        };
        let e = with("smem_per_block_optin_bytes", 4096.into()).unwrap_err();
        assert!(
            e.contains("gpu.smem_per_block_optin_bytes") && e.contains("at least 49152"),
            "{e}"
        );
        assert!(with("smem_per_block_optin_bytes", 49152.into()).is_ok());
        for bad in [1, 62, 256] {
            let e = with("max_registers_per_thread", bad.into()).unwrap_err();
            assert!(e.contains("must be 63 to 255"), "{e}");
        }
        assert!(with("max_registers_per_thread", 63.into()).is_ok());
        let e = with("compute_capability", serde_json::json!([4294967295u32, 0])).unwrap_err();
        assert!(e.contains("gpu.compute_capability"), "{e}");
        assert!(with("compute_capability", serde_json::json!([8, 10])).is_err());
    }

    #[test]
    fn wrong_version() {
        let e = parse_str(r#"{"schema_version": 7}"#, p())
            .unwrap_err()
            .to_string();
        assert!(e.contains("schema_version") && e.contains('7'), "{e}");
    }
}
