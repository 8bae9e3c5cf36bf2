//! L2 read bandwidth against the number of SMs that read (`origami-calibrate --only
//! l2-sms`, opt-in; issue 14): what a launch of fewer tiles than SMs gets from L2. The
//! throughput model gives each active SM a share of the L2 bandwidth that grows as
//! (SMs / active)^`tp_l2_active_exponent` (docs/throughput.md): 0 is a fixed per-SM share,
//! 1 a fixed aggregate shared by whoever runs. The fitted tiers took it from GEMM sweeps
//! (0.4 to 0.55); this benchmark measures it.
//!
//! `csrc/l2_bw.cu`'s `l2_read_sms` (the L2 counterpart of `dram_read_sms`): blocks on SMs
//! whose %smid is at or above a limit exit, the k that stay pull chunks from a global work
//! counter over an L2-resident footprint (half of L2 rounded down to a power of two, the
//! footprint of the L2 plateau).
//! Metrics `l2_read_gbps_sms_<k>`; curve `l2_read_gbps_vs_sms` with its fit: the bandwidth
//! of one SM, the SMs at which the aggregate reaches 95 % of the whole GPU's, and the
//! exponent over the launches the model applies it to (k from half the SMs up).

use std::collections::BTreeMap;

use serde_json::json;

use super::bench::{Runner, L2_UNROLL, SMS_LAUNCHES};
use super::results::Results;
use super::CalibError;
use crate::gpu::{DeviceBuffer, KernelArgs, LaunchDims};
use crate::hw::schema::Curve;

/// The curve's name (the calibration-only tier reads it: one owner, `hw::calibrated`).
pub use crate::hw::calibrated::L2_SMS_CURVE;
/// Threads per block.
const THREADS: u32 = 512;
/// Bytes each active SM reads per launch (the work grows with k so that every launch
/// runs tens of microseconds)...
const BYTES_PER_SM: u64 = 16 << 20;
/// ...and at least this many per launch: with few SMs a launch then still runs a few
/// hundred microseconds (at 4 MiB per SM and no floor one SM's launch ran ~22 us and the
/// samples of 1-32 SMs spread by 1.1-3 %, above the 1 % rule).
const MIN_BYTES: u64 = 64 << 20;

/// 16-byte vectors one launch with `k` SMs reads: k x [`BYTES_PER_SM`], at least
/// [`MIN_BYTES`], in whole chunks of `chunk_vec`.
pub fn vectors_per_launch(k: u32, chunk_vec: u64) -> u64 {
    ((u64::from(k) * BYTES_PER_SM).max(MIN_BYTES) / 16).div_ceil(chunk_vec) * chunk_vec
}

/// Name of the per-k metric.
pub fn l2_sms_metric(k: u32) -> String {
    format!("l2_read_gbps_sms_{k:03}")
}

/// The SM counts measured on a GPU of `n` SMs: powers of two up to 16, then steps of 8 or
/// 16 (denser from half the SMs up, where the exponent is fitted), and `n`.
pub fn sm_counts(n: u32, quick: bool) -> Vec<u32> {
    let mut v: Vec<u32> = if quick {
        vec![1, 4, 16, 32, 64, 96, 112, 128]
    } else {
        let mut v = vec![1, 2, 4, 8, 16, 24, 32, 48];
        v.extend((64..n).step_by(8));
        v
    };
    v.retain(|&k| k < n);
    v.push(n);
    v
}

/// What the curve says: the bandwidth of one SM, where the aggregate saturates, and the
/// exponent of the model's share law over k in [n/2, n).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2SmsFit {
    /// Bandwidth with one SM reading, GB/s.
    pub one_sm_gbps: f64,
    /// The smallest measured k whose bandwidth is at least 95 % of the whole GPU's.
    pub saturation_sms: f64,
    /// Least-squares e of ln(share(k)) = e ln(n / k) through the origin, share(k) =
    /// (bw(k) / k) / (bw(n) / n), over the points with n/2 <= k < n.
    pub active_exponent: f64,
    /// Points the exponent was fitted on.
    pub exponent_points: usize,
}

/// Fit the curve `(k, GB/s)` of a GPU of `n` SMs; `None` without the point at `n`, a
/// non-positive value or no point in [n/2, n).
pub fn fit_l2_sms(points: &[(f64, f64)], n: f64) -> Option<L2SmsFit> {
    if points
        .iter()
        .any(|&(k, y)| !(k > 0.0 && y > 0.0 && k.is_finite() && y.is_finite()))
    {
        return None;
    }
    let full = points.iter().find(|p| p.0 == n)?.1;
    let one = points.iter().find(|p| p.0 == 1.0).map_or(f64::NAN, |p| p.1);
    let saturation = points
        .iter()
        .filter(|p| p.1 >= 0.95 * full)
        .map(|p| p.0)
        .fold(f64::INFINITY, f64::min);
    let (mut sxy, mut sxx, mut m) = (0.0, 0.0, 0);
    for &(k, y) in points.iter().filter(|p| p.0 >= n / 2.0 && p.0 < n) {
        let x = (n / k).ln();
        let share = (y / k) / (full / n);
        sxy += share.ln() * x;
        sxx += x * x;
        m += 1;
    }
    (m > 0 && sxx > 0.0).then(|| L2SmsFit {
        one_sm_gbps: one,
        saturation_sms: saturation,
        active_exponent: sxy / sxx,
        exponent_points: m,
    })
}

impl Runner<'_> {
    /// csrc/l2_bw.cu `l2_read_sms`: L2 read bandwidth with k SMs reading, for the SM counts
    /// of [`sm_counts`], and the fit of [`fit_l2_sms`].
    pub fn l2_sms(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let props = gpu.props().clone();
        let ids = self.smids()?;
        let n = ids.len() as u32;
        // the L2 plateau's footprint: the power of two at or below half of L2 (16 MiB on an
        // H100 or H200, as the `l2` benchmark's largest)
        let half = (props.l2_bytes / 2).max(1 << 20);
        let footprint = 1u64 << (63 - half.leading_zeros());
        let buf = self.alloc_u32(footprint)?;
        self.fill("l2_bw", &buf)?;
        let k_fn = self.kernel("l2_bw", "l2_read_sms")?;
        let blocks = self.blocks_for(&k_fn, THREADS)?;
        let dims = LaunchDims::linear(blocks, THREADS);
        let chunk_vec = u64::from(THREADS) * L2_UNROLL * 8;
        let mask = (footprint / 16 - 1) as u32;
        let mut warm_ctr = gpu.alloc_zeros::<u32>(1)?;
        let warm_mask = gpu.alloc_zeros::<u32>(64)?;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let mut points = Vec::new();
        for k in sm_counts(n, self.cfg.quick) {
            let limit = ids[k as usize - 1] + 1;
            let n_vec = vectors_per_launch(k, chunk_vec);
            let name = l2_sms_metric(k);
            let launch = |_: usize, j: usize, ctr: &DeviceBuffer<u32>, msk: &DeviceBuffer<u32>| {
                gpu.launch(
                    &k_fn,
                    dims,
                    KernelArgs::new()
                        .buf(&buf)
                        .u32(mask)
                        .u64(n_vec)
                        .u32(chunk_vec as u32)
                        .u32(limit)
                        .buf_at(ctr, j)
                        .buf(msk)
                        .buf(&sink),
                )
            };
            // the footprint into L2 (and the kernel warm) before the first sample
            gpu.zero(&mut warm_ctr)?;
            launch(0, 0, &warm_ctr, &warm_mask)?;
            let bytes = SMS_LAUNCHES as f64 * n_vec as f64 * 16.0;
            let m = self.sampled_on_sms(&name, k, "L2", bytes, launch)?;
            points.push([f64::from(k), m.median()]);
            res.metrics.push(
                m.with("active_sms", k)
                    .with("footprint_bytes", footprint)
                    .with("bytes_per_launch", n_vec * 16)
                    .with("grid", json!([blocks, THREADS])),
            );
        }
        let pts: Vec<(f64, f64)> = points.iter().map(|p| (p[0], p[1])).collect();
        let fit = fit_l2_sms(&pts, f64::from(n)).ok_or_else(|| {
            CalibError::Measurement(
                "cannot fit the L2-vs-SMs curve: no point from half the SMs up".into(),
            )
        })?;
        let mut f = BTreeMap::new();
        f.insert("one_sm_gbps".into(), fit.one_sm_gbps);
        f.insert("saturation_sms".into(), fit.saturation_sms);
        f.insert("l2_active_exponent".into(), fit.active_exponent);
        f.insert("exponent_points".into(), fit.exponent_points as f64);
        f.insert("footprint_bytes".into(), footprint as f64);
        res.curves.insert(
            L2_SMS_CURVE.into(),
            Curve {
                x_name: "active_sms".into(),
                y_name: "l2_read_gbps".into(),
                points,
                fit: f,
            },
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm_counts_end_at_the_gpu_and_are_dense_at_the_top() {
        let v = sm_counts(132, false);
        assert_eq!(v.first(), Some(&1));
        assert_eq!(v.last(), Some(&132));
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(v.iter().filter(|&&k| k >= 66).count(), 9); // 72..128 by 8, and 132
        assert_eq!(sm_counts(108, true), vec![1, 4, 16, 32, 64, 96, 108]);
        assert_eq!(sm_counts(2, false), vec![1, 2]);
    }

    #[test]
    fn launches_read_at_least_64_mib() {
        let chunk = 512 * 4 * 8;
        assert_eq!(vectors_per_launch(1, chunk) * 16, 64 << 20);
        assert_eq!(vectors_per_launch(4, chunk) * 16, 64 << 20);
        assert_eq!(vectors_per_launch(132, chunk) * 16, 132 * (16 << 20));
        assert_eq!(vectors_per_launch(132, chunk) % chunk, 0);
    }

    #[test]
    fn fit_recovers_a_share_law_and_a_saturation() {
        let n = 132.0;
        // a fixed aggregate above 66 SMs (exponent 1), linear below
        let bw = |k: f64| (k * 120.0).min(7920.0);
        let pts: Vec<(f64, f64)> = sm_counts(132, false)
            .into_iter()
            .map(|k| (f64::from(k), bw(f64::from(k))))
            .collect();
        let f = fit_l2_sms(&pts, n).unwrap();
        assert!((f.active_exponent - 1.0).abs() < 1e-9, "{f:?}");
        assert_eq!(f.one_sm_gbps, 120.0);
        assert_eq!(f.saturation_sms, 64.0); // 7680 >= 0.95 x 7920
                                            // a share growing as (n/k)^0.5
        let pts: Vec<(f64, f64)> = [66.0, 100.0, 132.0]
            .iter()
            .map(|&k| (k, 7920.0 * (k / n) * (n / k).powf(0.5)))
            .collect();
        assert!((fit_l2_sms(&pts, n).unwrap().active_exponent - 0.5).abs() < 1e-9);
        // no point at n, or none in [n/2, n): no fit
        assert!(fit_l2_sms(&[(1.0, 100.0), (64.0, 5000.0)], n).is_none());
        assert!(fit_l2_sms(&[(1.0, 100.0), (132.0, 7920.0)], n).is_none());
        assert!(fit_l2_sms(&[(66.0, -1.0), (132.0, 7920.0)], n).is_none());
    }
}
