//! The calibration-only tier (issue 14; docs/calibration-only.md): the throughput
//! model's constants from a measured calibration document alone, none fitted on GEMM
//! times. Each value is a rate or latency the document measured (`origami-calibrate`), a
//! fact of its GPU description, or a documented property of the architecture; a term that
//! needs a count taken from the kernel (instructions per K iteration, the cost of a block's
//! start) and has no measurement yet is 0 and says so. The bounds of one K iteration and
//! the SM and DRAM times are added (`tp_smooth_exponent` 1: no overlap), the choice of the
//! study (`scripts/calib_only/derive.py --overlap sum`, which this module replaces), and
//! the rows of a tile past M and N cost no L2 bytes (`tp_masked_rows`).

use super::schema::HwDoc;

/// Dense fp16 tensor-core cycles per m16n8k16 (4096 FLOP) of one SM sub-partition on
/// wgmma, by compute capability major: 1024 FLOP per cycle on Hopper (NVIDIA H100 SXM
/// datasheet: 989.4 dense fp16 TFLOP/s = 528 tensor cores x 1.83 GHz x 1024). Not yet
/// measured here (`origami-calibrate --only tc-rate` will).
const WGMMA_CYCLES_PER_M16N8K16: &[(u32, f64)] = &[(9, 4.0)];

/// Shared-memory bytes per cycle per SM on sm_80 and later: 32 banks of 4 bytes.
const SMEM_BYTES_PER_CYCLE: f64 = 128.0;

/// One derived constant: its name, value, unit and where the value comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedConstant {
    pub name: &'static str,
    pub value: f64,
    pub unit: &'static str,
    pub source: String,
}

/// Why a document cannot give the tier.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibratedError {
    #[error("the calibration-only tier needs a measured document (origami-calibrate's output); this one has no measurement '{0}'")]
    Missing(&'static str),
    #[error("the calibration-only tier needs a GPU description with tensor cores and SMs (got {what} = 0)")]
    Zero { what: &'static str },
}

/// A measurement's median when the document has it (the opt-in microbenchmarks).
fn optional(doc: &HwDoc, name: &str) -> Option<f64> {
    doc.measurements
        .iter()
        .find(|m| m.name == name)
        .map(|m| m.summary.median)
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// The K loop's per-warp cost with its latency hidden (`kloop-cost`): the curves'
/// `fixed_cycles` at 4 and 8 warps, a line through the origin (least squares), so that
/// `tp_warp_iter_cycles x warps` is an iteration's own instructions; `None` without both.
fn kloop_per_warp(doc: &HwDoc) -> Option<(f64, String)> {
    let fixed = |w: u32| {
        doc.curves
            .get(&format!("kloop_cycles_vs_stages_w{w}"))
            .and_then(|c| c.fit.get("fixed_cycles").copied())
            .filter(|v| v.is_finite())
    };
    let (f4, f8) = (fixed(4)?, fixed(8)?);
    let slope = ((4.0 * f4 + 8.0 * f8) / (16.0 + 64.0)).max(0.0);
    Some((
        slope,
        format!("kloop_cycles_vs_stages fixed_cycles {f4:.1} (4 warps), {f8:.1} (8 warps): {slope:.2} per warp through the origin"),
    ))
}

/// The curve `origami-calibrate --only l2-sms` writes (L2 bandwidth against the SMs that
/// read), whose fit carries `l2_active_exponent`.
pub const L2_SMS_CURVE: &str = "l2_read_gbps_vs_sms";

/// The curve `origami-calibrate --only l2-rows` writes (L2 bandwidth against the length of
/// the rows read, segments a pitch apart), whose fit carries `efficiency_<bytes>b`.
pub const L2_ROWS_CURVE: &str = "l2_read_gbps_vs_row_bytes";

/// The same from DRAM (`origami-calibrate --only dram-rows`: bands of rows walked along K).
pub const DRAM_ROWS_CURVE: &str = "dram_read_gbps_vs_row_bytes";

/// The metric of `origami-calibrate --only sync-cost` that prices split-K's second kernel:
/// microseconds a small dependent reduction adds after a kernel that fills every SM, in a
/// replayed CUDA graph (csrc/sync_cost.cu's `spin_all` then `reduce_pair`).
pub const DEPENDENT_REDUCE: &str = "dependent_reduce_us";

/// The exponent of the L2 share law measured by `l2-sms` (the curve's fit), clamped to
/// [0, 1] (a share that shrinks with fewer SMs, or an aggregate that grows, is outside the
/// model's law); `None` without the curve.
fn l2_active_exponent(doc: &HwDoc) -> Option<f64> {
    doc.curves
        .get(L2_SMS_CURVE)
        .and_then(|c| c.fit.get("l2_active_exponent").copied())
        .filter(|v| v.is_finite())
        .map(|v| v.clamp(0.0, 1.0))
}

/// The share of the contiguous rate `l2-rows` or `dram-rows` (`curve`) measured for rows
/// of `bytes` bytes (the curve's `efficiency_<bytes>b`), clamped to (0, 1]: a segment read
/// faster than the contiguous reference (within its noise) is priced at the contiguous
/// rate; `None` without the curve or with a non-positive value.
fn measured_row_share(doc: &HwDoc, curve: &str, bytes: u32) -> Option<f64> {
    doc.curves
        .get(curve)
        .and_then(|c| c.fit.get(&format!("efficiency_{bytes}b")).copied())
        .filter(|v| v.is_finite() && *v > 0.0)
        .map(|v| v.min(1.0))
}

/// Dense fp16 wgmma: SM cycles per m16n8k16 per tensor core from `tc-rate`'s best rate
/// (FLOP per SM cycle over N and warpgroups), and the narrowest N at that rate's cost
/// (`16 x best / rate at N = 16`: a narrower instruction costs as much).
fn wgmma_measured(doc: &HwDoc, tcs: f64) -> Option<(f64, f64, String)> {
    let rate = |n: u32, wg: u32| {
        optional(
            doc,
            &format!("wgmma_f16_n{n:03}_wg{wg}_flop_per_cycle_per_sm"),
        )
    };
    let best = [64, 128, 256]
        .iter()
        .flat_map(|&n| [rate(n, 1), rate(n, 2)])
        .flatten()
        .fold(0.0f64, f64::max);
    if best <= 0.0 {
        return None;
    }
    let n16 = rate(16, 1).or(rate(16, 2));
    let min_n = n16.map_or(0.0, |r| 16.0 * best / r);
    Some((
        tcs * 4096.0 / best,
        min_n,
        format!(
            "tc-rate: best {best:.0} FLOP per SM cycle, {} at N = 16",
            n16.map_or("none".into(), |r| format!("{r:.0}"))
        ),
    ))
}

fn median(doc: &HwDoc, name: &'static str) -> Result<f64, CalibratedError> {
    optional(doc, name).ok_or(CalibratedError::Missing(name))
}

/// The tier's constants for a measured document, in a fixed order.
pub fn calibrated_constants(doc: &HwDoc) -> Result<Vec<DerivedConstant>, CalibratedError> {
    let gpu = &doc.gpu;
    let p = &doc.params;
    if gpu.sm_count == 0 {
        return Err(CalibratedError::Zero { what: "sm_count" });
    }
    if gpu.tensor_cores_per_sm == 0 {
        return Err(CalibratedError::Zero {
            what: "tensor_cores_per_sm",
        });
    }
    let tcs = f64::from(gpu.tensor_cores_per_sm);
    let l2_per_sm = p.l2_perf_ratio / f64::from(gpu.sm_count);
    // one warp's sustained mma.sync rate with independent accumulators: the better of
    // the ILP 4 and 8 measurements (a warp tile's MMAs do not depend on each other)
    let warp_mma = median(doc, "mma_f16_ilp4_cycles_per_mma")?
        .min(median(doc, "mma_f16_ilp8_cycles_per_mma")?);
    let mma_latency = median(doc, "mma_f16_latency_cycles")?;
    let dram_latency = median(doc, "dram_latency_page_local_cycles")?;
    let mut out = Vec::new();
    let mut put = |name: &'static str, value: f64, unit: &'static str, source: String| {
        out.push(DerivedConstant {
            name,
            value,
            unit,
            source,
        })
    };
    put(
        "throughput_model",
        1.0,
        "switch",
        "the throughput model".into(),
    );
    put(
        "tp_mma_cycles",
        warp_mma / tcs,
        "SM cycles per m16n8k16",
        format!("mma_f16_ilp4/8 {warp_mma:.3} cycles per warp / {tcs} tensor cores"),
    );
    put(
        "tp_warp_mma_cycles",
        warp_mma,
        "cycles per m16n8k16 of one warp",
        format!("mma_f16_ilp4/8 {warp_mma:.3}"),
    );
    let wgmma = wgmma_measured(doc, tcs);
    if let Some((wg, _, why)) = &wgmma {
        put(
            "wgmma_speedup",
            warp_mma / wg,
            "x mma.sync",
            format!("{warp_mma:.3} / {wg:.3} ({why})"),
        );
    } else if let Some((_, wg)) = WGMMA_CYCLES_PER_M16N8K16
        .iter()
        .find(|(major, _)| *major == gpu.compute_capability[0])
    {
        put(
            "wgmma_speedup",
            warp_mma / wg,
            "x mma.sync",
            format!(
                "{warp_mma:.3} / {wg} (the datasheet's dense rate; not measured: --only tc-rate)"
            ),
        );
    }
    put(
        "tp_load_latency_cycles",
        dram_latency,
        "cycles",
        format!("dram_latency_page_local {dram_latency:.1} (idle: latency-loaded's chases under a saturating stream are the bound, not a GEMM's load)"),
    );
    put(
        "tp_iter_latency_cycles",
        mma_latency,
        "cycles",
        format!("mma_f16_latency {mma_latency:.2}: the accumulator chain crosses iterations"),
    );
    put(
        "tp_iter_cycles",
        0.0,
        "cycles",
        "the K loop's own cost is per warp (tp_warp_iter_cycles)".into(),
    );
    match kloop_per_warp(doc) {
        Some((v, why)) => put("tp_warp_iter_cycles", v, "cycles per warp", why),
        None => put(
            "tp_warp_iter_cycles",
            0.0,
            "cycles per warp",
            "needs the K loop's cost (origami-calibrate --only kloop-cost)".into(),
        ),
    }
    put(
        "tp_block_setup_cycles",
        0.0,
        "cycles",
        "needs a block's start cost (not measured)".into(),
    );
    put(
        "tp_epilogue_cycles",
        4096.0 * 2.0 / l2_per_sm,
        "cycles per 4096 outputs",
        format!("4096 16-bit outputs over the SM's L2 share {l2_per_sm:.2} B/cycle"),
    );
    match optional(doc, "smem_read_v4_bytes_per_cycle_sm") {
        Some(v) => put(
            "tp_smem_bytes_per_cycle",
            v,
            "bytes per cycle",
            format!("smem_read_v4 {v:.1} (smem-bw)"),
        ),
        None => put(
            "tp_smem_bytes_per_cycle",
            SMEM_BYTES_PER_CYCLE,
            "bytes per cycle",
            "32 banks x 4 B (sm_80 and later; not measured: --only smem-bw)".into(),
        ),
    }
    for (name, curve, bench, bytes) in [
        ("tp_l2_row_efficiency_32b", L2_ROWS_CURVE, "l2-rows", 32),
        ("tp_l2_row_efficiency_64b", L2_ROWS_CURVE, "l2-rows", 64),
        (
            "tp_dram_row_efficiency_32b",
            DRAM_ROWS_CURVE,
            "dram-rows",
            32,
        ),
        (
            "tp_dram_row_efficiency_64b",
            DRAM_ROWS_CURVE,
            "dram-rows",
            64,
        ),
    ] {
        match measured_row_share(doc, curve, bytes) {
            Some(v) => put(
                name,
                v,
                "share",
                format!("{curve} efficiency_{bytes}b {v:.3} ({bench})"),
            ),
            None => put(
                name,
                1.0,
                "share",
                format!("the contiguous rate (not measured: --only {bench})"),
            ),
        }
    }
    for (name, value, unit, why) in [
        (
            "tp_fragment_read_weight",
            1.0,
            "bytes per byte",
            "a fragment byte costs a shared-memory byte",
        ),
        (
            "tp_l2_sm_share",
            1.0,
            "share",
            "l2_perf_ratio / SMs is the measured per-SM L2 rate",
        ),
        (
            "tp_stage_exponent",
            1.0,
            "exponent",
            "Little's law: S - 1 stages in flight",
        ),
        (
            "tp_prologue_loads",
            1.0,
            "round trips",
            "the fill waits one round trip",
        ),
        (
            "tp_prologue_transfer",
            1.0,
            "stages",
            "and the first stage's bytes",
        ),
        ("tp_dram_scale", 1.0, "factor", "DRAM at the measured rate"),
        (
            "tp_smooth_exponent",
            1.0,
            "exponent",
            "the bounds added: no overlap (the study's choice, docs/calibration-only.md)",
        ),
        (
            "tp_masked_rows",
            1.0,
            "switch",
            "rows past M and N are not copied (masked or zero-filled loads)",
        ),
        (
            "tp_time_scale",
            1.0,
            "factor",
            "cycles at the calibrated SM clock",
        ),
    ] {
        put(name, value, unit, why.into());
    }
    match optional(doc, DEPENDENT_REDUCE) {
        Some(us) => put(
            "tp_splitk_reduce_cycles",
            us * gpu.sm_clock_mhz,
            "cycles",
            format!(
                "{DEPENDENT_REDUCE} {us:.3} x {:.0} MHz (sync-cost: split-K's second kernel beyond its bytes)",
                gpu.sm_clock_mhz
            ),
        ),
        None => put(
            "tp_splitk_reduce_cycles",
            0.0,
            "cycles",
            "no dependent-reduction measurement (--only sync-cost): split-K's second kernel costs its bytes alone".into(),
        ),
    }
    match l2_active_exponent(doc) {
        Some(e) => put(
            "tp_l2_active_exponent",
            e,
            "exponent",
            format!("l2_read_gbps_vs_sms fit {e:.3} (l2-sms: L2 bandwidth against the SMs reading, from half the SMs up)"),
        ),
        None => put(
            "tp_l2_active_exponent",
            0.0,
            "exponent",
            "no L2-against-active-SMs measurement (--only l2-sms): a fixed per-SM share".into(),
        ),
    }
    match &wgmma {
        Some((_, n, why)) if *n > 0.0 => put(
            "tp_wgmma_min_n",
            *n,
            "elements",
            format!("{why}: the narrowest N costs as {n:.0}"),
        ),
        _ => put(
            "tp_wgmma_min_n",
            0.0,
            "elements",
            "no wgmma N scan (--only tc-rate): the instruction's own N".into(),
        ),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constants::ModelConstants;

    fn h200() -> HwDoc {
        let text = include_str!("../../../../calibrations/h200.json");
        serde_json::from_str(text).expect("the committed H200 calibration parses")
    }

    #[test]
    fn the_h200_calibration_gives_every_constant_from_its_measurements() {
        let doc = h200();
        let c = calibrated_constants(&doc).unwrap();
        let get = |n: &str| c.iter().find(|d| d.name == n).unwrap().value;
        let warp = doc
            .measurements
            .iter()
            .filter(|m| {
                m.name == "mma_f16_ilp4_cycles_per_mma" || m.name == "mma_f16_ilp8_cycles_per_mma"
            })
            .map(|m| m.summary.median)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(get("tp_warp_mma_cycles"), warp);
        assert_eq!(get("tp_mma_cycles"), warp / 4.0);
        assert_eq!(get("wgmma_speedup"), warp / 4.0);
        assert_eq!(get("tp_time_scale"), 1.0);
        assert_eq!(get("tp_smooth_exponent"), 1.0);
        // every value is one the model accepts
        ModelConstants::with_overrides(c.iter().map(|d| (d.name, d.value))).unwrap();
        // names are unique
        let mut names: Vec<&str> = c.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), c.len());
    }

    #[test]
    fn the_opt_in_microbenchmarks_replace_the_defaults_when_measured() {
        // the H200 document has none of them: the documented defaults
        let c = calibrated_constants(&h200()).unwrap();
        let get = |c: &[DerivedConstant], n: &str| c.iter().find(|d| d.name == n).unwrap().value;
        assert_eq!(get(&c, "tp_warp_iter_cycles"), 0.0);
        assert_eq!(get(&c, "tp_smem_bytes_per_cycle"), 128.0);
        assert_eq!(get(&c, "tp_wgmma_min_n"), 0.0);
        // the H100's full calibration (results/h100/calibrate-full-2026-11-26.json)
        let text = include_str!("../../../../results/h100/calibrate-full-2026-11-26.json");
        let doc: HwDoc = serde_json::from_str(text).unwrap();
        let c = calibrated_constants(&doc).unwrap();
        let fixed =
            |w: u32| doc.curves[&format!("kloop_cycles_vs_stages_w{w}")].fit["fixed_cycles"];
        let slope = (4.0 * fixed(4) + 8.0 * fixed(8)) / 80.0;
        assert!((get(&c, "tp_warp_iter_cycles") - slope).abs() < 1e-12);
        assert!((4.0..5.0).contains(&slope), "{slope}");
        let smem = get(&c, "tp_smem_bytes_per_cycle");
        assert!((127.0..129.0).contains(&smem), "{smem}");
        // 4096 FLOP per SM cycle at N >= 64: 4 cycles per m16n8k16 on each of 4 tensor
        // cores, as the datasheet's constant; 1638 at N = 16: N = 16 costs as N = 40
        let warp = get(&c, "tp_warp_mma_cycles");
        assert!((get(&c, "wgmma_speedup") - warp / 4.0).abs() < 1e-9);
        assert!((get(&c, "tp_wgmma_min_n") - 40.0).abs() < 0.01);
        ModelConstants::with_overrides(c.iter().map(|d| (d.name, d.value))).unwrap();
        // the round trip stays the idle DRAM latency, loaded chases or not
        let idle = doc
            .measurements
            .iter()
            .find(|m| m.name == "dram_latency_page_local_cycles")
            .unwrap()
            .summary
            .median;
        assert_eq!(get(&c, "tp_load_latency_cycles"), idle);
        // its sync-cost run predates the dependent-reduction metric: split-K's second
        // kernel costs its bytes alone; with the metric, its microseconds at the GPU's clock
        assert_eq!(get(&c, "tp_splitk_reduce_cycles"), 0.0);
        let mut with_reduce = doc.clone();
        let mut m = with_reduce.measurements[0].clone();
        m.name = DEPENDENT_REDUCE.into();
        m.summary.median = 2.0;
        with_reduce.measurements.push(m);
        let c2 = calibrated_constants(&with_reduce).unwrap();
        let want = 2.0 * with_reduce.gpu.sm_clock_mhz;
        assert!((get(&c2, "tp_splitk_reduce_cycles") - want).abs() < 1e-9);
        // no l2-sms curve in it: a fixed per-SM share; with one, its fit (within [0, 1])
        assert_eq!(get(&c, "tp_l2_active_exponent"), 0.0);
        let mut doc = doc;
        for (fitted, want) in [(0.83, 0.83), (1.4, 1.0), (-0.2, 0.0)] {
            let mut fit = std::collections::BTreeMap::new();
            fit.insert("l2_active_exponent".to_string(), fitted);
            doc.curves.insert(
                L2_SMS_CURVE.into(),
                crate::hw::schema::Curve {
                    x_name: "active_sms".into(),
                    y_name: "l2_read_gbps".into(),
                    points: vec![[66.0, 7000.0], [132.0, 7900.0]],
                    fit,
                },
            );
            let c = calibrated_constants(&doc).unwrap();
            assert_eq!(get(&c, "tp_l2_active_exponent"), want);
        }
        // no l2-rows curve: the contiguous rate for every row length
        assert_eq!(get(&c, "tp_l2_row_efficiency_32b"), 1.0);
        assert_eq!(get(&c, "tp_l2_row_efficiency_64b"), 1.0);
    }

    #[test]
    fn the_l2_rows_curve_gives_the_row_efficiencies() {
        // the H100's calibration with l2-rows (results/h100/calibrate-l2rows-2026-11-27.json):
        // 32-byte rows at 0.553 of the contiguous rate, 64-byte rows at it (1.004 -> 1)
        let text = include_str!("../../../../results/h100/calibrate-l2rows-2026-11-27.json");
        let mut doc: HwDoc = serde_json::from_str(text).unwrap();
        let c = calibrated_constants(&doc).unwrap();
        let get = |c: &[DerivedConstant], n: &str| c.iter().find(|d| d.name == n).unwrap().value;
        let fit = doc.curves[L2_ROWS_CURVE].fit.clone();
        assert_eq!(get(&c, "tp_l2_row_efficiency_32b"), fit["efficiency_32b"]);
        assert!((0.5..0.6).contains(&fit["efficiency_32b"]));
        assert!(fit["efficiency_64b"] > 1.0);
        assert_eq!(get(&c, "tp_l2_row_efficiency_64b"), 1.0);
        ModelConstants::with_overrides(c.iter().map(|d| (d.name, d.value))).unwrap();
        // no dram-rows curve in it: the DRAM rate for every row length; with the curve (the
        // H100's, results/h100/calibrate-rows-2026-11-27.json) its shares
        assert_eq!(get(&c, "tp_dram_row_efficiency_32b"), 1.0);
        let text = include_str!("../../../../results/h100/calibrate-rows-2026-11-27.json");
        let both: HwDoc = serde_json::from_str(text).unwrap();
        let c2 = calibrated_constants(&both).unwrap();
        let dram = &both.curves[DRAM_ROWS_CURVE].fit;
        assert_eq!(
            get(&c2, "tp_dram_row_efficiency_32b"),
            dram["efficiency_32b"]
        );
        assert_eq!(
            get(&c2, "tp_dram_row_efficiency_64b"),
            dram["efficiency_64b"]
        );
        assert!((0.7..0.85).contains(&dram["efficiency_32b"]));
        assert!((0.85..0.95).contains(&dram["efficiency_64b"]));
        // a non-positive or missing efficiency falls back to the contiguous rate
        let curve = doc.curves.get_mut(L2_ROWS_CURVE).unwrap();
        curve.fit.insert("efficiency_32b".into(), 0.0);
        curve.fit.remove("efficiency_64b");
        let c = calibrated_constants(&doc).unwrap();
        assert_eq!(get(&c, "tp_l2_row_efficiency_32b"), 1.0);
        assert_eq!(get(&c, "tp_l2_row_efficiency_64b"), 1.0);
    }

    #[test]
    fn an_estimated_document_cannot_give_the_tier() {
        let mut doc = h200();
        doc.measurements.clear();
        assert_eq!(
            calibrated_constants(&doc).unwrap_err(),
            CalibratedError::Missing("mma_f16_ilp4_cycles_per_mma")
        );
        let mut doc = h200();
        doc.gpu.tensor_cores_per_sm = 0;
        assert!(calibrated_constants(&doc)
            .unwrap_err()
            .to_string()
            .contains("tensor_cores_per_sm"));
    }
}
