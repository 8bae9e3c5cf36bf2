//! From measurements to the five model parameters and the hardware document (the schema of
//! `hw::schema`). The formulas live here once, shared by the calibrator and by `--check`,
//! which recomputes them from a file's measurements:
//!
//! - `l2_perf_ratio   = L2 read bytes/s / SM clock Hz` (the NVIDIA port report,
//!   section 4: bytes per cycle)
//! - `dram_perf_ratio = DRAM read bytes/s / SM clock Hz`
//! - `dram_bw_coeff`  = least-squares fit of `min(1, c x SMs)` to the SM-limited curve
//! - `hbm_latency_penalty = DRAM latency (page-local) - L2 hit latency`, cycles
//! - `mma_latency`    = dependent mma.sync m16n8k16 f16 latency, cycles

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::results::{self as r, Results};
use crate::hw::derive::describe;
use crate::hw::load::{check_param, validate_doc};
use crate::hw::schema::{
    HwDoc, Measurement, ModelParams, Provenance, ProvenanceKind, PARAM_NAMES, SCHEMA_VERSION,
};

/// Why a document could not be assembled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssembleError {
    #[error("cannot compute {0}: {1}")]
    Missing(String, String),
    #[error("implausible result: {0}")]
    Implausible(String),
}

/// The run's context for the provenance block.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// The command line that ran.
    pub command: String,
    pub tool_version: String,
    /// UTC, ISO 8601.
    pub date: String,
    pub driver: Option<String>,
    pub cuda: Option<String>,
    pub runs: u32,
    /// The CoV threshold (fraction).
    pub max_cov: f64,
    pub allow_unstable: bool,
    /// Values for parameters this run did not measure (`--only`), with their origin.
    pub fallback: Option<(String, ModelParams)>,
}

/// Parameters computable from medians looked up by metric name and the fitted coefficient.
pub fn params_from_medians(
    get: &dyn Fn(&str) -> Option<f64>,
    coeff: Option<f64>,
) -> BTreeMap<&'static str, Result<f64, String>> {
    let need = |n: &str| get(n).ok_or_else(|| format!("metric {n} not measured"));
    let clock_hz = need(r::SM_CLOCK).map(|mhz| mhz * 1e6);
    let ratio = |bw: &str| -> Result<f64, String> { Ok(need(bw)? * 1e9 / clock_hz.clone()?) };
    let mut m = BTreeMap::new();
    m.insert("l2_perf_ratio", ratio(r::L2_READ));
    m.insert("dram_perf_ratio", ratio(r::DRAM_READ));
    m.insert(
        "dram_bw_coeff",
        coeff.ok_or_else(|| format!("curve {} not measured or not fitted", r::DRAM_SMS_CURVE)),
    );
    m.insert(
        "hbm_latency_penalty",
        need(r::DRAM_LATENCY_PAGE).and_then(|d| Ok(d - need(r::L2_HIT_LATENCY)?)),
    );
    m.insert("mma_latency", need(r::MMA_F16_LATENCY));
    m
}

/// The fitted coefficient stored in a curve's `fit`.
pub fn curve_coeff(doc_curves: &BTreeMap<String, crate::hw::schema::Curve>) -> Option<f64> {
    doc_curves
        .get(r::DRAM_SMS_CURVE)
        .and_then(|c| c.fit.get("dram_bw_coeff").copied())
}

/// Build the hardware document of one device's results.
pub fn assemble(res: &Results, info: &RunInfo) -> Result<HwDoc, AssembleError> {
    // medians as used: the SM clock never above the GPU's maximum (`r::sm_clock_used`)
    let get = |n: &str| res.used(n);
    let computed = params_from_medians(&get, curve_coeff(&res.curves));
    let mut params = ModelParams {
        l2_perf_ratio: f64::NAN,
        dram_perf_ratio: f64::NAN,
        dram_bw_coeff: f64::NAN,
        hbm_latency_penalty: f64::NAN,
        mma_latency: f64::NAN,
    };
    let mut sources = serde_json::Map::new();
    for name in PARAM_NAMES {
        match &computed[name] {
            Ok(v) => {
                check_param(name, *v, std::path::Path::new("<measured>"))
                    .map_err(|e| AssembleError::Implausible(e.to_string()))?;
                params.set(name, *v);
                sources.insert(name.into(), json!("measured"));
            }
            Err(why) => match &info.fallback {
                Some((origin, fb)) => {
                    params.set(name, fb.get(name).unwrap_or(f64::NAN));
                    sources.insert(name.into(), json!(origin));
                }
                None => return Err(AssembleError::Missing(name.into(), why.clone())),
            },
        }
    }
    if let (Some(d), Some(l2)) = (get(r::DRAM_LATENCY_PAGE), get(r::L2_HIT_LATENCY)) {
        if d <= l2 {
            return Err(AssembleError::Implausible(format!(
                "DRAM latency ({d:.0} cycles) is not above the L2 hit latency ({l2:.0} cycles): the DRAM chase hit in a cache"
            )));
        }
    }

    let mut gpu = describe(&res.props);
    if let Some(mhz) = get(r::SM_CLOCK) {
        gpu.sm_clock_mhz = mhz;
    }
    let measurements = res
        .metrics
        .iter()
        .map(|m| {
            let mut details = m.details.clone();
            details.insert("samples".into(), json!(m.sampled.samples));
            details.insert("stable".into(), json!(m.sampled.stable));
            Measurement {
                name: m.name.clone(),
                unit: m.unit.clone(),
                summary: m.sampled.summary.clone(),
                details,
            }
        })
        .collect();
    let mut observed = res.observed.clone();
    observed.insert("param_sources".into(), Value::Object(sources));
    observed.insert("max_cov".into(), json!(info.max_cov));
    observed.insert("allow_unstable".into(), json!(info.allow_unstable));
    observed.insert("unstable".into(), json!(res.unstable()));
    if !res.skipped.is_empty() {
        observed.insert("skipped".into(), json!(res.skipped));
    }
    let doc = HwDoc {
        schema_version: SCHEMA_VERSION,
        gpu,
        params,
        constants: BTreeMap::new(),
        measurements,
        curves: res.curves.clone(),
        provenance: Provenance {
            kind: ProvenanceKind::Measured,
            source: info.command.clone(),
            tool_version: Some(info.tool_version.clone()),
            date: Some(info.date.clone()),
            driver: info.driver.clone(),
            cuda: info.cuda.clone(),
            runs: Some(info.runs),
            observed,
        },
    };
    validate_doc(&doc, std::path::Path::new("<measured>"))
        .map_err(|e| AssembleError::Implausible(e.to_string()))?;
    Ok(doc)
}

/// UTC time of `secs` since the Unix epoch as ISO 8601 (`2026-01-31T12:00:00Z`).
pub fn iso8601_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::calibrate::results::{Metric, Results};
    use crate::calibrate::stability::Sampled;
    use crate::hw::schema::Curve;
    use crate::stats::Summary;

    pub(crate) fn props() -> crate::hw::DeviceProps {
        crate::hw::DeviceProps {
            name: "NVIDIA H200".into(),
            compute_capability: [9, 0],
            sm_count: 132,
            l2_bytes: 52_428_800,
            smem_per_block_optin_bytes: 232_448,
            registers_per_sm: 65_536,
            sm_clock_mhz: 1980.0,
            mem_clock_mhz: 3201.0,
            mem_bus_width_bits: 6144,
        }
    }

    pub(crate) fn metric(name: &str, unit: &str, samples: &[f64]) -> Metric {
        let s = Summary::of(samples).unwrap();
        Metric::new(
            name,
            unit,
            Sampled {
                samples: samples.to_vec(),
                stable: s.cov <= 0.01,
                summary: s,
            },
        )
    }

    /// A complete, plausible set of results (numbers in the H200's range).
    pub(crate) fn full_results() -> Results {
        let mut res = Results::new(props());
        res.metrics = vec![
            metric(
                r::SM_CLOCK,
                "MHz",
                &[1980.0, 1979.0, 1980.5, 1980.0, 1979.5],
            ),
            metric(
                r::L2_READ,
                "GB/s",
                &[10000.0, 10010.0, 9990.0, 10005.0, 9995.0],
            ),
            metric(
                r::DRAM_READ,
                "GB/s",
                &[4300.0, 4310.0, 4290.0, 4305.0, 4295.0],
            ),
            metric(
                r::L2_HIT_LATENCY,
                "cycles",
                &[260.0, 261.0, 259.0, 260.0, 260.5],
            ),
            metric(
                r::DRAM_LATENCY_PAGE,
                "cycles",
                &[900.0, 905.0, 895.0, 902.0, 898.0],
            ),
            metric(
                r::MMA_F16_LATENCY,
                "cycles",
                &[33.0, 33.0, 33.0, 33.0, 33.0],
            ),
        ];
        let mut fit = BTreeMap::new();
        fit.insert("dram_bw_coeff".to_string(), 0.02);
        fit.insert("rms_error".to_string(), 0.01);
        res.curves.insert(
            r::DRAM_SMS_CURVE.into(),
            Curve {
                x_name: "active_sms".into(),
                y_name: "dram_read_gbps".into(),
                points: vec![[1.0, 90.0], [50.0, 4300.0]],
                fit,
            },
        );
        res
    }

    pub(crate) fn info() -> RunInfo {
        RunInfo {
            command: "origami-calibrate --runs 5".into(),
            tool_version: "0.1.0".into(),
            date: "2026-01-01T00:00:00Z".into(),
            driver: Some("580.00".into()),
            cuda: Some("13.0".into()),
            runs: 5,
            max_cov: 0.01,
            allow_unstable: false,
            fallback: None,
        }
    }

    #[test]
    fn parameters_follow_the_formulas() {
        let doc = assemble(&full_results(), &info()).unwrap();
        let p = doc.params;
        assert!((p.l2_perf_ratio - 10000e9 / 1980e6).abs() < 1e-9);
        assert!((p.dram_perf_ratio - 4300e9 / 1980e6).abs() < 1e-9);
        assert_eq!(p.dram_bw_coeff, 0.02);
        assert_eq!(p.hbm_latency_penalty, 900.0 - 260.0);
        assert_eq!(p.mma_latency, 33.0);
        assert_eq!(doc.gpu.sm_clock_mhz, 1980.0);
        assert_eq!(doc.provenance.kind, ProvenanceKind::Measured);
        assert_eq!(doc.measurements.len(), 6);
        assert!(doc.measurements[0].details.contains_key("samples"));
        // Round trip through the loader.
        let text = serde_json::to_string_pretty(&doc).unwrap();
        assert!(crate::hw::load::parse_str(&text, std::path::Path::new("x.json")).is_ok());
    }

    /// [`full_results`] with the SM clock read above the GPU's maximum: 1995 MHz against
    /// 1980 (what clock64 over %globaltimer once read on an H100).
    pub(crate) fn results_with_clock_above_max() -> Results {
        let mut res = full_results();
        res.metrics[0] = metric(
            r::SM_CLOCK,
            "MHz",
            &[1995.0, 1994.0, 1995.5, 1995.0, 1994.5],
        )
        .with(r::SM_CLOCK_MAX, 1980.0);
        res
    }

    #[test]
    fn a_clock_above_the_gpus_maximum_is_used_at_the_maximum() {
        let mut res = results_with_clock_above_max();
        let doc = assemble(&res, &info()).unwrap();
        assert_eq!(doc.gpu.sm_clock_mhz, 1980.0);
        // every ratio divides by the clock used, not the reading
        assert!((doc.params.l2_perf_ratio - 10000e9 / 1980e6).abs() < 1e-9);
        // the reading itself is kept, with the maximum beside it
        let clock = &doc.measurements[0];
        assert_eq!(clock.summary.median, 1995.0);
        assert_eq!(clock.details[r::SM_CLOCK_MAX], 1980.0);
        // a reading below the maximum is used as measured
        res.metrics[0] =
            metric(r::SM_CLOCK, "MHz", &[1410.0, 1411.0, 1409.0]).with(r::SM_CLOCK_MAX, 1980.0);
        let doc = assemble(&res, &info()).unwrap();
        assert_eq!(doc.gpu.sm_clock_mhz, 1410.0);
        assert!((doc.params.l2_perf_ratio - 10000e9 / 1410e6).abs() < 1e-9);
    }

    #[test]
    fn missing_metric_is_named_unless_a_fallback_exists() {
        let mut res = full_results();
        res.metrics.retain(|m| m.name != r::MMA_F16_LATENCY);
        let e = assemble(&res, &info()).unwrap_err();
        assert!(
            e.to_string().contains("mma_latency") && e.to_string().contains(r::MMA_F16_LATENCY),
            "{e}"
        );
        let mut i = info();
        let mut fb = crate::hw::derive::derive_params(&props());
        fb.mma_latency = 31.0;
        i.fallback = Some(("derived".into(), fb));
        let doc = assemble(&res, &i).unwrap();
        assert_eq!(doc.params.mma_latency, 31.0);
        assert_eq!(
            doc.provenance.observed["param_sources"]["mma_latency"],
            "derived"
        );
        assert_eq!(
            doc.provenance.observed["param_sources"]["l2_perf_ratio"],
            "measured"
        );
    }

    #[test]
    fn dram_faster_than_l2_is_rejected() {
        let mut res = full_results();
        for m in &mut res.metrics {
            if m.name == r::DRAM_LATENCY_PAGE {
                *m = metric(r::DRAM_LATENCY_PAGE, "cycles", &[200.0, 200.0]);
            }
        }
        assert!(matches!(
            assemble(&res, &info()),
            Err(AssembleError::Implausible(_))
        ));
    }

    #[test]
    fn dates() {
        assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601_utc(1_767_225_599), "2025-12-31T23:59:59Z");
    }
}
