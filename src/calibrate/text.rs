//! The human summary of a hardware document (`--format text`, and the committed
//! `results/<gpu>/calibrate.txt`): per metric the median, CoV, n, min and max; the five
//! parameters with the formula that produced each; the DRAM curve and its fit; the clocks
//! and throttle reasons seen; what was skipped.

use std::fmt::Write as _;

use super::results as r;
use crate::hw::schema::{HwDoc, ProvenanceKind};

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.5}")
    }
}

/// Render the summary.
pub fn summary(doc: &HwDoc) -> String {
    let mut s = String::new();
    let g = &doc.gpu;
    let p = &doc.provenance;
    let _ = writeln!(
        s,
        "GPU: {} (sm_{}{}, {} SMs, L2 {:.1} MiB, {}-bit memory bus)",
        g.name,
        g.compute_capability[0],
        g.compute_capability[1],
        g.sm_count,
        g.l2_bytes as f64 / 1048576.0,
        g.mem_bus_width_bits
    );
    let kind = match p.kind {
        ProvenanceKind::Measured => "measured",
        ProvenanceKind::Estimated => "estimated",
    };
    let _ = writeln!(
        s,
        "provenance: {kind}; tool {}; date {}; driver {}; CUDA {}; runs {}",
        p.tool_version.as_deref().unwrap_or("-"),
        p.date.as_deref().unwrap_or("-"),
        p.driver.as_deref().unwrap_or("-"),
        p.cuda.as_deref().unwrap_or("-"),
        p.runs.map_or("-".to_string(), |r| r.to_string())
    );
    let _ = writeln!(s, "command: {}", p.source);
    if !doc.measurements.is_empty() {
        let _ = writeln!(
            s,
            "\nmeasurements (median over n samples; CoV = stddev / mean)"
        );
        let _ = writeln!(
            s,
            "  {:<38} {:>11} {:<7} {:>7} {:>4} {:>11} {:>11}",
            "metric", "median", "unit", "CoV %", "n", "min", "max"
        );
        for m in doc.measurements.iter().filter(|m| {
            !m.name.starts_with("dram_read_gbps_sms_") && !m.name.starts_with("l2_read_gbps_sms_")
        }) {
            let unstable = m.details.get("stable").and_then(|v| v.as_bool()) == Some(false);
            let _ = writeln!(
                s,
                "  {:<38} {:>11} {:<7} {:>7.3} {:>4} {:>11} {:>11}{}",
                m.name,
                num(m.summary.median),
                m.unit,
                100.0 * m.summary.cov,
                m.summary.n,
                num(m.summary.min),
                num(m.summary.max),
                if unstable { "  UNSTABLE" } else { "" }
            );
        }
        let sms: Vec<_> = doc
            .measurements
            .iter()
            .filter(|m| m.name.starts_with("dram_read_gbps_sms_"))
            .collect();
        if !sms.is_empty() {
            let worst = sms.iter().map(|m| m.summary.cov).fold(0.0, f64::max);
            let nmin = sms.iter().map(|m| m.summary.n).min().unwrap_or(0);
            let _ = writeln!(
                s,
                "  {:<38} {} points, worst CoV {:.3} %, n >= {nmin} (curve below)",
                "dram_read_gbps_sms_<k>",
                sms.len(),
                100.0 * worst
            );
        }
    }
    let get = |n: &str| {
        doc.measurements
            .iter()
            .find(|m| m.name == n)
            .map(|m| m.summary.median)
    };
    let src = |name: &str| {
        p.observed
            .get("param_sources")
            .and_then(|v| v.get(name))
            .and_then(|v| v.as_str())
            .unwrap_or(if p.kind == ProvenanceKind::Measured {
                "measured"
            } else {
                "estimated"
            })
            .to_string()
    };
    let _ = writeln!(
        s,
        "\nparameters (perf ratios in bytes per SM clock cycle; latencies in SM cycles)"
    );
    let pr = &doc.params;
    let clock = get(r::SM_CLOCK);
    let how = |m: &str, unit: &str| {
        get(m)
            .map(|v| format!("{m} {} {unit}", num(v)))
            .unwrap_or_default()
    };
    let lines = [
        (
            "l2_perf_ratio",
            pr.l2_perf_ratio,
            format!(
                "= {} / {}",
                how(r::L2_READ, "GB/s"),
                how(r::SM_CLOCK, "MHz")
            ),
        ),
        (
            "dram_perf_ratio",
            pr.dram_perf_ratio,
            format!(
                "= {} / {}",
                how(r::DRAM_READ, "GB/s"),
                how(r::SM_CLOCK, "MHz")
            ),
        ),
        (
            "dram_bw_coeff",
            pr.dram_bw_coeff,
            "= fit of min(1, c x SMs) to the SM-limited read curve".to_string(),
        ),
        (
            "hbm_latency_penalty",
            pr.hbm_latency_penalty,
            format!(
                "= {} - {}",
                how(r::DRAM_LATENCY_PAGE, "cyc"),
                how(r::L2_HIT_LATENCY, "cyc")
            ),
        ),
        (
            "mma_latency",
            pr.mma_latency,
            format!("= {}", how(r::MMA_F16_LATENCY, "cyc")),
        ),
    ];
    for (name, v, formula) in lines {
        let origin = src(name);
        let f = if origin == "measured" && clock.is_some() {
            formula
        } else {
            format!("({origin})")
        };
        let _ = writeln!(s, "  {name:<20} {:>12}   {f}", num(v));
    }
    if let Some(c) = doc.curves.get(r::DRAM_SMS_CURVE) {
        let fit = |k: &str| c.fit.get(k).copied().unwrap_or(f64::NAN);
        let _ = writeln!(
            s,
            "\n{}: dram_bw_coeff = {:.5} (saturates at {:.1} SMs), fit error rms {:.4} / max {:.4} of the bandwidth fraction, reference {:.0} GB/s",
            r::DRAM_SMS_CURVE,
            fit("dram_bw_coeff"),
            fit("saturation_sms"),
            fit("rms_error"),
            fit("max_abs_error"),
            fit("reference_gbps"),
        );
        let pts: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("{}:{:.0}", p[0], p[1]))
            .collect();
        for chunk in pts.chunks(10) {
            let _ = writeln!(s, "  {}", chunk.join("  "));
        }
    }
    for name in [
        super::bench_l2_rows::L2_ROWS_CURVE,
        super::bench_l2_rows::L2_CP_ROWS_CURVE,
        super::bench_dram_rows::DRAM_ROWS_CURVE,
    ] {
        let Some(c) = doc.curves.get(name) else {
            continue;
        };
        let fit = |k: &str| c.fit.get(k).copied().unwrap_or(f64::NAN);
        let effs: Vec<String> = super::bench_l2_rows::SEGMENT_BYTES
            .iter()
            .map(|b| format!("{b} B {:.3}", fit(&format!("efficiency_{b}b"))))
            .collect();
        let _ = writeln!(
            s,
            "\n{name}: contiguous {:.0} GB/s; rows {} B apart, share of it: {}",
            fit("contiguous_gbps"),
            fit("pitch_bytes"),
            effs.join(", "),
        );
    }
    if let Some(c) = doc.curves.get(super::bench_l2_sms::L2_SMS_CURVE) {
        let fit = |k: &str| c.fit.get(k).copied().unwrap_or(f64::NAN);
        let _ = writeln!(
            s,
            "\n{}: one SM {:.0} GB/s, 95 % of the GPU's from {:.0} SMs, share exponent {:.3} (from half the SMs up)",
            super::bench_l2_sms::L2_SMS_CURVE,
            fit("one_sm_gbps"),
            fit("saturation_sms"),
            fit("l2_active_exponent"),
        );
        let pts: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("{}:{:.0}", p[0], p[1]))
            .collect();
        for chunk in pts.chunks(10) {
            let _ = writeln!(s, "  {}", chunk.join("  "));
        }
    }
    if let Some(m) = doc
        .measurements
        .iter()
        .find(|m| m.name == super::bench_topology::SM_TOPOLOGY)
    {
        let line = super::bench_topology::summary_line(m.summary.median, &m.details);
        let _ = writeln!(s, "\n{line}");
        let placement = crate::hw::topology::SmTopology::from_doc(doc, "this document");
        if let Some(runs) = placement
            .ok()
            .flatten()
            .as_ref()
            .and_then(super::bench_topology::full_launch_line)
        {
            let _ = writeln!(s, "  {runs}");
        }
    }
    if let Some(c) = doc.curves.get(r::L2_FOOTPRINT_CURVE) {
        let pts: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("{:.0} KiB:{:.0}", p[0] / 1024.0, p[1]))
            .collect();
        let _ = writeln!(s, "\n{} (GB/s): {}", r::L2_FOOTPRINT_CURVE, pts.join("  "));
    }
    let o = &p.observed;
    if !o.is_empty() {
        let _ = writeln!(s, "\nobserved during the run");
        for key in [
            "nvml_sm_clock_mhz",
            "nvml_mem_clock_mhz",
            "nvml_temperature_c",
            "nvml_power_w_max",
            "throttle_reasons_seen",
            "wall_s",
            "benchmarks_wall_s",
            "skipped",
            "unstable",
            "smid_note",
        ] {
            if let Some(v) = o.get(key) {
                let _ = writeln!(s, "  {key}: {v}");
            }
        }
    }
    s
}
