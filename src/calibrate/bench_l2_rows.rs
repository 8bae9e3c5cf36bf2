//! L2 read bandwidth against the length of the rows read (`origami-calibrate --only
//! l2-rows`, opt-in; issue 14): what a GEMM tile whose rows are short gets from L2. A tile
//! of BLOCK_K = 16 fp16 columns reads 32 contiguous bytes of each of its rows, the next
//! row a pitch further, so its 16-byte loads touch a new 128-byte line every two threads
//! where a BLOCK_K = 64 tile's touch one every eight. The calibration-only tier's study
//! found BLOCK_K = 16 launches 1.4 times slower than any rate predicted (docs/
//! calibration-only.md, "Where it loses"); this benchmark measures the rate itself.
//!
//! `csrc/l2_bw.cu`'s `l2_read_rows`: every SM reads an L2-resident footprint (the L2
//! plateau's, half of L2 rounded down to a power of two) in segments of 32, 64, 128 or 256
//! bytes that start one pitch (8 KiB, a 4096-column fp16 row) apart, and in order (the
//! contiguous reference, the `l2` benchmark's access). Metrics
//! `l2_read_gbps_rows_<bytes>b` and `l2_read_gbps_rows_contiguous`; curve
//! `l2_read_gbps_vs_row_bytes` whose fit carries each segment's efficiency, its bandwidth
//! over the contiguous one's (`efficiency_<bytes>b`): the share of the L2 rate a tile with
//! rows that long gets (`tp_l2_row_efficiency_32b` / `_64b`, `hw::calibrated`). On sm_80
//! and later the same reads also run as `cp.async.cg` copies into shared memory
//! (`l2_cp_rows`, the GEMM kernels' instruction; curve `l2_cp_gbps_vs_row_bytes`), a check
//! that the share is the rows' and not the load instruction's.

use std::collections::BTreeMap;

use serde_json::json;

use super::bench::{pow2_floor, stream_pass_bytes, Runner, L2_UNROLL};
use super::results::{Metric, Results};
use super::CalibError;
use crate::gpu::{KernelArgs, LaunchDims};
use crate::hw::schema::Curve;

/// The curve's name (the calibration-only tier reads it: one owner, `hw::calibrated`).
pub use crate::hw::calibrated::L2_ROWS_CURVE;
/// The copy series' curve (`l2_cp_rows`: the same reads as cp.async copies).
pub const L2_CP_ROWS_CURVE: &str = "l2_cp_gbps_vs_row_bytes";
/// Threads per block.
const THREADS: u32 = 512;
/// The segment lengths measured, bytes (powers of two of 16-byte vectors).
pub const SEGMENT_BYTES: [u64; 4] = [32, 64, 128, 256];
/// Bytes from one segment's start to the next's: a 4096-column fp16 row.
pub const PITCH_BYTES: u64 = 8192;
/// Each sample's launch runs about this long.
const LAUNCH_MS: f64 = 2.0;

/// The loads series' metrics: `l2_read_gbps_rows_<bytes>b` and `..._contiguous`.
pub const L2_ROWS_METRIC: &str = "l2_read_gbps_rows";
/// The copy series' metrics (`l2_cp_rows`: cp.async.cg into shared memory, as the GEMM
/// kernels copy): `l2_cp_gbps_rows_<bytes>b` and `..._contiguous`.
pub const L2_CP_ROWS_METRIC: &str = "l2_cp_gbps_rows";

/// Name of a rows benchmark's metric (`prefix`, e.g. [`L2_ROWS_METRIC`]) for `bytes`-long
/// segments (`None`: the contiguous reference).
pub fn rows_metric(prefix: &str, bytes: Option<u64>) -> String {
    match bytes {
        Some(b) => format!("{prefix}_{b:03}b"),
        None => format!("{prefix}_contiguous"),
    }
}

/// A rows benchmark's metric with its case: the segment length (`None`: "contiguous") and
/// the pitch between segments.
pub(super) fn with_row_case(m: Metric, seg: Option<u64>) -> Metric {
    m.with(
        "segment_bytes",
        seg.map_or(json!("contiguous"), |b| json!(b)),
    )
    .with("pitch_bytes", PITCH_BYTES)
}

/// log2 of a power of two.
pub(super) fn log2(x: u64) -> u32 {
    63 - x.leading_zeros()
}

/// Each segment's bandwidth over the contiguous one's, by segment length; `None` when the
/// reference is not a positive finite number. A segment whose bandwidth is not positive
/// and finite is left out.
pub fn row_efficiencies(segments: &[(u64, f64)], contiguous: f64) -> Option<BTreeMap<u64, f64>> {
    (contiguous.is_finite() && contiguous > 0.0).then(|| {
        segments
            .iter()
            .filter(|(_, gbps)| gbps.is_finite() && *gbps > 0.0)
            .map(|&(b, gbps)| (b, gbps / contiguous))
            .collect()
    })
}

/// The cases a rows benchmark measures, in order: each of [`SEGMENT_BYTES`], then the
/// contiguous reference (`None`).
pub fn row_cases() -> Vec<Option<u64>> {
    SEGMENT_BYTES
        .iter()
        .map(|&b| Some(b))
        .chain(std::iter::once(None))
        .collect()
}

/// The bandwidths a rows benchmark measured, by case ([`row_cases`]).
#[derive(Debug, Clone, Default)]
pub struct RowRates {
    segments: Vec<(u64, f64)>,
    contiguous: Option<f64>,
}

impl RowRates {
    /// Record one case's bandwidth, GB/s.
    pub fn push(&mut self, seg: Option<u64>, gbps: f64) {
        match seg {
            Some(b) => self.segments.push((b, gbps)),
            None => self.contiguous = Some(gbps),
        }
    }

    /// The curve (x = segment bytes, y = `y_name`) whose fit carries each segment's
    /// `efficiency_<bytes>b` ([`row_efficiencies`]), `contiguous_gbps`, `pitch_bytes` and
    /// `extra`; an error naming `what` when the contiguous reference gave no bandwidth.
    pub fn curve(
        &self,
        what: &str,
        y_name: &str,
        extra: &[(&str, f64)],
    ) -> Result<Curve, CalibError> {
        let contiguous = self.contiguous.unwrap_or(f64::NAN);
        let eff = row_efficiencies(&self.segments, contiguous).ok_or_else(|| {
            CalibError::Measurement(format!("the contiguous {what} read gave no bandwidth"))
        })?;
        let mut fit = BTreeMap::new();
        for (b, e) in &eff {
            fit.insert(format!("efficiency_{b}b"), *e);
        }
        fit.insert("contiguous_gbps".into(), contiguous);
        fit.insert("pitch_bytes".into(), PITCH_BYTES as f64);
        for (k, v) in extra {
            fit.insert((*k).into(), *v);
        }
        Ok(Curve {
            x_name: "segment_bytes".into(),
            y_name: y_name.into(),
            points: self.segments.iter().map(|&(b, y)| [b as f64, y]).collect(),
            fit,
        })
    }
}

/// One series of `l2-rows`: the kernel, its block, and what its metrics and curve are named.
struct Series {
    kernel: &'static str,
    threads: u32,
    /// Dynamic shared memory per thread, bytes.
    smem_per_thread: u32,
    /// The metrics' prefix ([`rows_metric`]).
    metric: &'static str,
    curve: &'static str,
    y_name: &'static str,
    loads_in_flight: u64,
}

impl Runner<'_> {
    /// csrc/l2_bw.cu `l2_read_rows` (and on sm_80 and later `l2_cp_rows`, the same reads
    /// as cp.async copies): the L2 bandwidth of every SM reading segments of
    /// [`SEGMENT_BYTES`] a [`PITCH_BYTES`] pitch apart, and in order, over the L2
    /// plateau's footprint; the efficiencies of [`row_efficiencies`] in each curve's fit.
    pub fn l2_rows(&mut self, res: &mut Results) -> Result<(), CalibError> {
        self.l2_rows_series(
            res,
            &Series {
                kernel: "l2_read_rows",
                threads: THREADS,
                smem_per_thread: 0,
                metric: L2_ROWS_METRIC,
                curve: L2_ROWS_CURVE,
                y_name: "l2_read_gbps",
                loads_in_flight: L2_UNROLL,
            },
        )?;
        if self.gpu.arch() >= 80 {
            self.l2_rows_series(
                res,
                &Series {
                    kernel: "l2_cp_rows",
                    threads: 256,
                    smem_per_thread: (2 * L2_UNROLL * 16) as u32,
                    metric: L2_CP_ROWS_METRIC,
                    curve: L2_CP_ROWS_CURVE,
                    y_name: "l2_cp_gbps",
                    loads_in_flight: 2 * L2_UNROLL,
                },
            )?;
        }
        Ok(())
    }

    fn l2_rows_series(&mut self, res: &mut Results, series: &Series) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let k = self.kernel("l2_bw", series.kernel)?;
        let smem = series.smem_per_thread * series.threads;
        let occ = k
            .max_active_blocks_per_sm(series.threads, smem as usize)?
            .max(1);
        let blocks = gpu.props().sm_count * occ;
        let nthreads = u64::from(blocks) * u64::from(series.threads);
        let footprint = pow2_floor(gpu.props().l2_bytes / 2).max(1 << 20);
        let buf = self.alloc_u32(footprint)?;
        self.fill("l2_bw", &buf)?;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let dims = LaunchDims::linear(blocks, series.threads).with_smem(smem);
        let n_vec = footprint / 16;
        let pitch_shift = log2(PITCH_BYTES / 16);
        let bytes_per_pass = stream_pass_bytes(nthreads, L2_UNROLL, n_vec);
        let mut rates = RowRates::default();
        for seg in row_cases() {
            let seg_shift = seg.map_or(pitch_shift, |b| log2(b / 16));
            let launch = |passes: u32| {
                gpu.launch(
                    &k,
                    dims,
                    KernelArgs::new()
                        .buf(&buf)
                        .u32(n_vec as u32)
                        .u32(seg_shift)
                        .u32(pitch_shift)
                        .u32(passes)
                        .buf(&sink),
                )
            };
            // the footprint into L2 and the kernel warm, then passes for ~2 ms a launch
            launch(2)?;
            let ms = gpu.time_ms(|| launch(4))? / 4.0;
            let passes = ((LAUNCH_MS / ms.max(1e-4)) as u64).clamp(1, 1 << 20) as u32;
            let bytes = f64::from(passes) * bytes_per_pass as f64;
            let policy = self.cfg.policy;
            let name = rows_metric(series.metric, seg);
            let m = self.sampled(&name, "GB/s", policy, |_| {
                let ms = gpu.time_ms(|| launch(passes))?;
                Ok(bytes / (ms * 1e-3) / 1e9)
            })?;
            let m = with_row_case(m, seg)
                .with("kernel", series.kernel)
                .with("footprint_bytes", footprint)
                .with("passes", passes)
                .with("bytes_per_launch", bytes)
                .with("grid", json!([blocks, series.threads]))
                .with("loads_in_flight_per_thread", series.loads_in_flight);
            rates.push(seg, m.median());
            res.metrics.push(m);
        }
        let curve = rates.curve(
            "L2",
            series.y_name,
            &[("footprint_bytes", footprint as f64)],
        )?;
        res.curves.insert(series.curve.into(), curve);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_sort_by_length() {
        let cp = |b| rows_metric(L2_CP_ROWS_METRIC, b);
        assert_eq!(cp(Some(64)), "l2_cp_gbps_rows_064b");
        assert_eq!(cp(None), "l2_cp_gbps_rows_contiguous");
        let l2 = |b| rows_metric(L2_ROWS_METRIC, b);
        assert_eq!(l2(Some(32)), "l2_read_gbps_rows_032b");
        assert_eq!(l2(Some(256)), "l2_read_gbps_rows_256b");
        assert_eq!(l2(None), "l2_read_gbps_rows_contiguous");
    }

    #[test]
    fn segments_are_whole_vectors_and_shorter_than_the_pitch() {
        for b in SEGMENT_BYTES {
            assert!(b.is_power_of_two() && (16..PITCH_BYTES).contains(&b), "{b}");
        }
        assert!(PITCH_BYTES.is_power_of_two());
        assert_eq!(log2(PITCH_BYTES / 16), 9);
        assert_eq!(log2(32 / 16), 1);
    }

    #[test]
    fn efficiencies_are_shares_of_the_contiguous_rate() {
        let e = row_efficiencies(&[(32, 3000.0), (64, 4500.0), (128, f64::NAN)], 6000.0).unwrap();
        assert_eq!(e.get(&32), Some(&0.5));
        assert_eq!(e.get(&64), Some(&0.75));
        assert_eq!(e.get(&128), None);
        assert!(row_efficiencies(&[(32, 1.0)], 0.0).is_none());
        assert!(row_efficiencies(&[(32, 1.0)], f64::NAN).is_none());
    }

    #[test]
    fn the_curve_gathers_every_case_and_refuses_a_missing_reference() {
        let mut r = RowRates::default();
        let cases = row_cases();
        assert_eq!(cases.len(), SEGMENT_BYTES.len() + 1);
        assert_eq!(cases.last(), Some(&None));
        for (seg, gbps) in cases.iter().zip([2000.0, 3600.0, 4000.0, 4000.0, 4000.0]) {
            r.push(*seg, gbps);
        }
        let c = r
            .curve("L2", "l2_read_gbps", &[("footprint_bytes", 16.0)])
            .unwrap();
        assert_eq!(c.points.len(), SEGMENT_BYTES.len());
        assert_eq!(c.points[0], [32.0, 2000.0]);
        assert_eq!(c.fit["efficiency_32b"], 0.5);
        assert_eq!(c.fit["efficiency_64b"], 0.9);
        assert_eq!(c.fit["contiguous_gbps"], 4000.0);
        assert_eq!(c.fit["footprint_bytes"], 16.0);
        let mut none = RowRates::default();
        none.push(Some(32), 1.0);
        let e = none.curve("DRAM", "dram_read_gbps", &[]).unwrap_err();
        assert!(e.to_string().contains("contiguous DRAM read"), "{e}");
    }
}
