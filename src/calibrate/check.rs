//! `origami-calibrate --check FILE`: validate a calibration file without a GPU. Every file
//! first goes through the one validation of hardware documents that every tool applies
//! (`hw::load`: schema, ranges of the GPU description and the parameters, the constants'
//! names and ranges; field-named errors), so a file that passes here is one the selector
//! accepts; then through this module's own checks: plausibility ranges;
//! a measured file must also carry its provenance (tool version, date, driver, runs), the
//! measurements the five parameters come from, a CoV at or below the threshold for every
//! measurement (the energy metrics at or below 5 % when the threshold is tighter:
//! `results::cov_limit`), parameters that agree with its own measurements (recomputed with
//! the same formulas as the calibrator), and the fitted DRAM curve. Estimated files
//! (presets from public sources) pass with a note, unless `--require-measured`.

use std::path::Path;

use super::assemble::{curve_coeff, params_from_medians};
use super::results as r;
use crate::exit::{Exit, ToExit};
use crate::hw::load::{load_file, HwError, HwFile};
use crate::hw::schema::{HwDoc, ProvenanceKind, PARAM_NAMES};

/// Plausible ranges of the five parameters on any NVIDIA GPU from sm_70 on (wide on
/// purpose: they catch unit mistakes such as GB/s for bytes per cycle, not small errors).
pub const PLAUSIBLE: [(&str, f64, f64); 5] = [
    ("l2_perf_ratio", 16.0, 65_536.0),
    ("dram_perf_ratio", 8.0, 32_768.0),
    ("dram_bw_coeff", 1e-4, 1.0),
    ("hbm_latency_penalty", 0.0, 20_000.0),
    ("mma_latency", 2.0, 2_000.0),
];

/// Options of a check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckOptions {
    /// CoV threshold (fraction).
    pub max_cov: f64,
    /// Fail estimated files.
    pub require_measured: bool,
}

/// Why a file failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Load(#[from] HwError),
    #[error("{path}: {problems}", problems = .problems.join("; "))]
    Invalid { path: String, problems: Vec<String> },
    #[error("{path}: unstable measurements (CoV above {max_cov_pct}%): {metrics}", metrics = .metrics.join(", "))]
    Unstable {
        path: String,
        max_cov_pct: f64,
        metrics: Vec<String>,
    },
}

impl ToExit for CheckError {
    /// Unstable measurements, or bad input for anything else wrong with the file.
    fn exit_code(&self) -> Exit {
        match self {
            CheckError::Unstable { .. } => Exit::Unstable,
            _ => Exit::BadInput,
        }
    }
}

/// What a passing check saw.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    pub kind: ProvenanceKind,
    pub gpu: String,
    pub measurements: usize,
    pub notes: Vec<String>,
}

/// Check a file on disk.
pub fn check_file(path: &Path, opts: &CheckOptions) -> Result<CheckReport, CheckError> {
    match load_file(path)? {
        HwFile::Full(doc) => check_doc(&doc, path, opts),
        HwFile::Override(_) => Err(CheckError::Invalid {
            path: path.display().to_string(),
            problems: vec![
                "a flat override, not a calibration file (no schema_version, gpu, provenance)"
                    .into(),
            ],
        }),
    }
}

/// Check a parsed document (already schema-valid).
pub fn check_doc(doc: &HwDoc, path: &Path, opts: &CheckOptions) -> Result<CheckReport, CheckError> {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    for (name, lo, hi) in PLAUSIBLE {
        let v = doc.params.get(name).unwrap_or(f64::NAN);
        if !(v >= lo && v <= hi) {
            problems.push(format!(
                "params.{name} = {v} is outside the plausible range [{lo}, {hi}]"
            ));
        }
    }
    if !(100.0..=5000.0).contains(&doc.gpu.sm_clock_mhz) {
        problems.push(format!(
            "gpu.sm_clock_mhz = {} is outside [100, 5000]",
            doc.gpu.sm_clock_mhz
        ));
    }
    let p = &doc.provenance;
    let mut unstable = Vec::new();
    match p.kind {
        ProvenanceKind::Estimated => {
            if opts.require_measured {
                problems
                    .push("provenance.kind is 'estimated' but --require-measured was given".into());
            } else {
                notes.push(
                    "estimated file: schema and ranges checked; no measurements to check".into(),
                );
            }
            if p.source.trim().is_empty() {
                problems
                    .push("provenance.source must cite the public source of an estimate".into());
            }
        }
        ProvenanceKind::Measured => {
            for (field, v) in [
                ("tool_version", &p.tool_version),
                ("date", &p.date),
                ("driver", &p.driver),
            ] {
                if v.as_deref().map_or(true, |s| s.trim().is_empty()) {
                    problems.push(format!("provenance.{field} is required in a measured file"));
                }
            }
            if let Some(d) = &p.date {
                if !looks_like_iso_date(d) {
                    problems.push(format!("provenance.date '{d}' is not an ISO 8601 date"));
                }
            }
            let runs = p.runs.unwrap_or(0) as usize;
            if runs < 2 {
                problems.push("provenance.runs must be at least 2 in a measured file".into());
            }
            for m in &doc.measurements {
                if !(m.summary.cov.is_finite() && m.summary.cov >= 0.0) {
                    problems.push(format!("measurement {}: CoV missing or invalid", m.name));
                } else if m.summary.cov > r::cov_limit(&m.name, opts.max_cov) {
                    unstable.push(format!("{} ({:.2}%)", m.name, 100.0 * m.summary.cov));
                }
                if m.summary.n < runs.max(2) {
                    problems.push(format!(
                        "measurement {}: n = {} is below runs = {runs}",
                        m.name, m.summary.n
                    ));
                }
            }
            // medians as the calibration used them (the SM clock capped at its maximum)
            let get = |n: &str| {
                doc.measurements.iter().find(|m| m.name == n).map(|m| {
                    if n == r::SM_CLOCK {
                        let max = m.details.get(r::SM_CLOCK_MAX).and_then(|v| v.as_f64());
                        r::sm_clock_used(m.summary.median, max)
                    } else {
                        m.summary.median
                    }
                })
            };
            let sources = p.observed.get("param_sources");
            let recomputed = params_from_medians(&get, curve_coeff(&doc.curves));
            for name in PARAM_NAMES {
                let from = sources
                    .and_then(|s| s.get(name))
                    .and_then(|v| v.as_str())
                    .unwrap_or("measured");
                if from != "measured" {
                    notes.push(format!(
                        "params.{name} was not measured (taken from {from})"
                    ));
                    continue;
                }
                match &recomputed[name] {
                    Ok(v) => {
                        let have = doc.params.get(name).unwrap_or(f64::NAN);
                        if (have - v).abs() > 1e-9 * v.abs().max(1.0) || have.is_nan() {
                            problems.push(format!(
                                "params.{name} = {have} disagrees with its measurements ({v})"
                            ));
                        }
                    }
                    Err(why) => problems.push(format!("params.{name}: {why}")),
                }
            }
            if let Some(c) = doc.curves.get(r::DRAM_SMS_CURVE) {
                if c.points.len() < 2 {
                    problems.push(format!("curve {}: fewer than 2 points", r::DRAM_SMS_CURVE));
                }
                if !c.fit.contains_key("rms_error") {
                    problems.push(format!("curve {}: no fit error", r::DRAM_SMS_CURVE));
                }
            }
            if let Some(clock) = get(r::SM_CLOCK) {
                if (doc.gpu.sm_clock_mhz - clock).abs() > 1e-6 * clock {
                    problems.push(format!(
                        "gpu.sm_clock_mhz = {} differs from the measured {} = {clock}",
                        doc.gpu.sm_clock_mhz,
                        r::SM_CLOCK
                    ));
                }
            }
        }
    }
    let path_s = path.display().to_string();
    if !problems.is_empty() {
        return Err(CheckError::Invalid {
            path: path_s,
            problems,
        });
    }
    if !unstable.is_empty() {
        return Err(CheckError::Unstable {
            path: path_s,
            max_cov_pct: 100.0 * opts.max_cov,
            metrics: unstable,
        });
    }
    Ok(CheckReport {
        kind: p.kind,
        gpu: doc.gpu.name.clone(),
        measurements: doc.measurements.len(),
        notes,
    })
}

fn looks_like_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::assemble::assemble;
    use crate::calibrate::assemble::tests::{full_results, info};

    const OPTS: CheckOptions = CheckOptions {
        max_cov: 0.01,
        require_measured: false,
    };

    fn p() -> &'static Path {
        Path::new("t.json")
    }

    #[test]
    fn an_assembled_document_passes() {
        let doc = assemble(&full_results(), &info()).unwrap();
        let rep = check_doc(&doc, p(), &OPTS).unwrap();
        assert_eq!(rep.kind, ProvenanceKind::Measured);
        assert_eq!(rep.measurements, 6);
    }

    #[test]
    fn tensor_core_and_tma_measurements_pass_and_leave_the_parameters_alone() {
        use crate::calibrate::assemble::tests::metric;
        use crate::calibrate::bench::tc::rate_curve;
        let plain = assemble(&full_results(), &info()).unwrap();
        let mut res = full_results();
        for (i, w) in [1u32, 2, 4, 8, 16].into_iter().enumerate() {
            let v = 0.16 * f64::from(w.min(4)) + 0.001 * i as f64;
            res.metrics.push(metric(
                &r::mma_rate_metric(w),
                "mma/cycle/SM",
                &[v, v, v * 1.001, v, v],
            ));
        }
        res.metrics.push(metric(
            &r::wgmma_rate_metric(256, 2),
            "FLOP/cycle/SM",
            &[4000.0, 4001.0, 3999.0, 4000.0, 4000.5],
        ));
        for name in [r::TMA_LATENCY_L2, r::TMA_LATENCY_DRAM, r::TMA_DRAM_GBPS] {
            res.metrics
                .push(metric(name, "x", &[500.0, 501.0, 499.0, 500.0, 500.0]));
        }
        res.curves.insert(
            r::MMA_RATE_CURVE.into(),
            rate_curve(
                "warps_per_sm",
                "mma_per_cycle_per_sm",
                vec![[1.0, 0.16], [4.0, 0.64]],
            ),
        );
        res.curves.insert(
            r::wgmma_rate_curve(2),
            rate_curve(
                "n",
                "dense_flop_per_cycle_per_sm",
                vec![[16.0, 1500.0], [256.0, 4000.0]],
            ),
        );
        let doc = assemble(&res, &info()).unwrap();
        assert_eq!(doc.params, plain.params);
        let rep = check_doc(&doc, p(), &OPTS).unwrap();
        assert_eq!(rep.measurements, 6 + 5 + 1 + 3);
        // an unstable one among them still fails the check
        let mut bad = doc.clone();
        let m = bad
            .measurements
            .iter_mut()
            .find(|m| m.name == r::TMA_LATENCY_DRAM)
            .unwrap();
        m.summary.cov = 0.05;
        assert!(matches!(
            check_doc(&bad, p(), &OPTS),
            Err(CheckError::Unstable { .. })
        ));
    }

    #[test]
    fn the_on_chip_cost_measurements_pass_and_keep_the_parameters() {
        use crate::calibrate::assemble::tests::metric;
        use crate::calibrate::bench_extra::fit_stage_curve;
        use crate::hw::schema::Curve;
        use std::collections::BTreeMap;
        let base = assemble(&full_results(), &info()).unwrap();
        let mut res = full_results();
        res.metrics.extend([
            metric(
                r::SMEM_READ_V4,
                "B/cycle/SM",
                &[127.5, 127.6, 127.4, 127.5, 127.5],
            ),
            metric(
                r::SMEM_LDMATRIX_X4,
                "B/cycle/SM",
                &[127.0, 127.1, 126.9, 127.0, 127.0],
            ),
            metric(
                &r::bar_sync_metric(256),
                "cycles",
                &[20.1, 20.0, 20.2, 20.1, 20.1],
            ),
            metric(r::LAUNCH_STREAM, "us", &[2.01, 2.0, 2.02, 2.01, 2.01]),
            metric(r::LAUNCH_GRAPH, "us", &[1.01, 1.0, 1.0, 1.0, 1.01]),
            metric(
                &r::kloop_metric(4, 2),
                "cycles",
                &[360.0, 361.0, 359.0, 360.0, 360.0],
            ),
            metric(
                &r::kloop_metric(4, 5),
                "cycles",
                &[160.0, 161.0, 159.0, 160.0, 160.0],
            ),
        ]);
        let points = vec![[2.0, 360.0], [5.0, 160.0]];
        let f = fit_stage_curve(&[(2.0, 360.0), (5.0, 160.0)]).unwrap();
        let mut fit = BTreeMap::new();
        fit.insert("fixed_cycles".to_string(), f.fixed);
        fit.insert("exposed_latency_cycles".to_string(), f.exposed);
        res.curves.insert(
            r::kloop_curve(4),
            Curve {
                x_name: "stages".into(),
                y_name: "cycles_per_iteration".into(),
                points,
                fit,
            },
        );
        let doc = assemble(&res, &info()).unwrap();
        assert_eq!(doc.params, base.params, "the five parameters do not move");
        // through the file format and back, as --check reads it
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let back: crate::hw::schema::HwDoc = serde_json::from_str(&text).unwrap();
        let rep = check_doc(&back, p(), &OPTS).unwrap();
        assert_eq!(rep.measurements, 13);
        // their CoV rule is the same as every other measurement's
        let mut bad = back.clone();
        let i = bad
            .measurements
            .iter()
            .position(|m| m.name == r::LAUNCH_STREAM)
            .unwrap();
        bad.measurements[i].summary.cov = 0.02;
        let e = check_doc(&bad, p(), &OPTS).unwrap_err();
        assert_eq!(e.exit_code(), Exit::Unstable);
        assert!(e.to_string().contains(r::LAUNCH_STREAM), "{e}");
    }

    #[test]
    fn energy_measurements_are_held_to_five_percent_and_the_rest_to_the_threshold() {
        use crate::calibrate::assemble::tests::metric;
        let base = assemble(&full_results(), &info()).unwrap();
        let mut res = full_results();
        // samples with a CoV of ~3 %: above the 1 % threshold, within the energy limit
        let spread = |m: f64| [m * 0.97, m, m * 1.03, m * 0.98, m * 1.02];
        for (name, unit, m) in [
            (r::ENERGY_IDLE_W, "W", 70.0),
            (r::ENERGY_STATIC_W, "W", 120.0),
            (r::ENERGY_MMA_PJ_PER_FLOP, "pJ/FLOP", 0.6),
            (r::ENERGY_SMEM_PJ_PER_BYTE, "pJ/B", 2.0),
            (r::ENERGY_L2_PJ_PER_BYTE, "pJ/B", 30.0),
            (r::ENERGY_DRAM_PJ_PER_BYTE, "pJ/B", 40.0),
        ] {
            let mut x = metric(name, unit, &spread(m));
            x.sampled.stable = true;
            res.metrics.push(x);
        }
        res.metrics.push(metric(
            r::POWER_LIMIT_W,
            "W",
            &[700.0, 700.0, 700.0, 700.0, 700.0],
        ));
        let doc = assemble(&res, &info()).unwrap();
        assert_eq!(doc.params, base.params, "the five parameters do not move");
        let cov = |d: &HwDoc, n: &str| {
            d.measurements
                .iter()
                .find(|m| m.name == n)
                .unwrap()
                .summary
                .cov
        };
        assert!(cov(&doc, r::ENERGY_L2_PJ_PER_BYTE) > 0.02);
        let rep = check_doc(&doc, p(), &OPTS).unwrap();
        assert_eq!(rep.measurements, 6 + 7);
        // above 5 %: unstable, exit 3, named
        let mut bad = doc.clone();
        let m = bad
            .measurements
            .iter_mut()
            .find(|m| m.name == r::ENERGY_DRAM_PJ_PER_BYTE)
            .unwrap();
        m.summary.cov = 0.06;
        let e = check_doc(&bad, p(), &OPTS).unwrap_err();
        assert_eq!(e.exit_code(), Exit::Unstable);
        assert!(e.to_string().contains(r::ENERGY_DRAM_PJ_PER_BYTE), "{e}");
        // the power limit and every other measurement keep the run's threshold
        for name in [r::POWER_LIMIT_W, r::L2_READ] {
            let mut bad = doc.clone();
            let m = bad
                .measurements
                .iter_mut()
                .find(|m| m.name == name)
                .unwrap();
            m.summary.cov = 0.03;
            let e = check_doc(&bad, p(), &OPTS).unwrap_err();
            assert_eq!(e.exit_code(), Exit::Unstable, "{name}");
        }
        // a looser --max-cov stays looser for the energy metrics too
        let loose = CheckOptions {
            max_cov: 0.08,
            ..OPTS
        };
        let mut six = doc.clone();
        let m = six
            .measurements
            .iter_mut()
            .find(|m| m.name == r::ENERGY_MMA_PJ_PER_FLOP)
            .unwrap();
        m.summary.cov = 0.06;
        check_doc(&six, p(), &loose).unwrap();
    }

    #[test]
    fn a_clock_capped_at_the_maximum_passes_and_the_raw_reading_does_not() {
        use crate::calibrate::assemble::tests::results_with_clock_above_max;
        let doc = assemble(&results_with_clock_above_max(), &info()).unwrap();
        check_doc(&doc, p(), &OPTS).unwrap();
        // a file that used the raw reading disagrees with its own measurements
        let mut raw = doc.clone();
        raw.gpu.sm_clock_mhz = 1995.0;
        let e = check_doc(&raw, p(), &OPTS).unwrap_err().to_string();
        assert!(e.contains("sm_clock_mhz"), "{e}");
    }

    #[test]
    fn tampered_parameter_is_caught() {
        let mut doc = assemble(&full_results(), &info()).unwrap();
        doc.params.l2_perf_ratio *= 1.1;
        let e = check_doc(&doc, p(), &OPTS).unwrap_err();
        assert_eq!(e.exit_code(), Exit::BadInput);
        assert!(
            e.to_string().contains("l2_perf_ratio") && e.to_string().contains("disagrees"),
            "{e}"
        );
    }

    #[test]
    fn high_cov_is_unstable_exit_3() {
        let mut doc = assemble(&full_results(), &info()).unwrap();
        doc.measurements[1].summary.cov = 0.05;
        let e = check_doc(&doc, p(), &OPTS).unwrap_err();
        assert_eq!(e.exit_code(), Exit::Unstable);
        assert!(e.to_string().contains(r::L2_READ), "{e}");
    }

    #[test]
    fn missing_provenance_fields_are_named() {
        let mut doc = assemble(&full_results(), &info()).unwrap();
        doc.provenance.driver = None;
        doc.provenance.date = Some("yesterday".into());
        let e = check_doc(&doc, p(), &OPTS).unwrap_err().to_string();
        assert!(
            e.contains("provenance.driver") && e.contains("provenance.date"),
            "{e}"
        );
    }

    #[test]
    fn out_of_range_parameter_is_named() {
        let mut doc = assemble(&full_results(), &info()).unwrap();
        doc.params.dram_bw_coeff = 3.0;
        let e = check_doc(&doc, p(), &OPTS).unwrap_err().to_string();
        assert!(
            e.contains("dram_bw_coeff") && e.contains("plausible"),
            "{e}"
        );
    }

    #[test]
    fn estimated_presets_pass_unless_measured_is_required() {
        for name in ["h100-sxm", "a100", "rtx4090", "b200"] {
            let doc = crate::hw::presets::preset(name).unwrap();
            if doc.provenance.kind != ProvenanceKind::Estimated {
                continue;
            }
            let rep = check_doc(&doc, p(), &OPTS).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!rep.notes.is_empty());
            let strict = CheckOptions {
                require_measured: true,
                ..OPTS
            };
            assert_eq!(
                check_doc(&doc, p(), &strict).unwrap_err().exit_code(),
                Exit::BadInput
            );
        }
    }
}
