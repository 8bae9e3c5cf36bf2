//! Fits and reductions of the calibration: `dram_bw_coeff` from the bandwidth-vs-active-SMs
//! curve (the NVIDIA port report, Algorithm 7:
//! `dram_bw_fraction = min(1, dram_bw_coeff * active_SMs)`), and the L2 footprint sweep's
//! plateau.

/// Result of fitting `min(1, c * k)` to measured bandwidth fractions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoeffFit {
    /// The fitted coefficient c.
    pub coeff: f64,
    /// Bandwidth that defines fraction 1 (the curve's maximum), GB/s.
    pub reference_gbps: f64,
    /// Root-mean-square error of the fitted fraction over the points.
    pub rms_error: f64,
    /// Largest absolute error of the fitted fraction.
    pub max_abs_error: f64,
    /// 1 / c: the SM count at which the model saturates DRAM.
    pub saturation_sms: f64,
    /// Number of points.
    pub n: usize,
}

fn sse(points: &[(f64, f64)], c: f64) -> f64 {
    points
        .iter()
        .map(|&(k, y)| ((c * k).min(1.0) - y).powi(2))
        .sum()
}

/// Least-squares fit of `min(1, c * k)` to `(k, bandwidth)` points, bandwidth normalised by
/// the largest measured bandwidth. `None` with fewer than two points or a non-positive value.
pub fn fit_dram_bw_coeff(points: &[(f64, f64)]) -> Option<CoeffFit> {
    if points.len() < 2
        || points
            .iter()
            .any(|&(k, y)| !(k > 0.0 && y > 0.0 && k.is_finite() && y.is_finite()))
    {
        return None;
    }
    let reference = points.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let norm: Vec<(f64, f64)> = points.iter().map(|&(k, y)| (k, y / reference)).collect();
    let k_max = norm.iter().map(|p| p.0).fold(f64::MIN, f64::max);
    let k_min = norm.iter().map(|p| p.0).fold(f64::MAX, f64::min);
    // The objective is piecewise smooth in c: scan a log grid over every plausible
    // saturation point (from 1/(4 k_max) to 4/k_min), then refine by golden section.
    let (lo, hi) = ((0.25 / k_max).ln(), (4.0 / k_min).ln());
    let steps = 4000;
    let mut best = (f64::INFINITY, lo);
    for i in 0..=steps {
        let x = lo + (hi - lo) * i as f64 / steps as f64;
        let e = sse(&norm, x.exp());
        if e < best.0 {
            best = (e, x);
        }
    }
    let h = (hi - lo) / steps as f64;
    let (mut a, mut b) = (best.1 - h, best.1 + h);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let c1 = b - g * (b - a);
        let c2 = a + g * (b - a);
        if sse(&norm, c1.exp()) <= sse(&norm, c2.exp()) {
            b = c2;
        } else {
            a = c1;
        }
    }
    let mut c = ((a + b) / 2.0).exp();
    if sse(&norm, c) > best.0 {
        c = best.1.exp();
    }
    let errs: Vec<f64> = norm.iter().map(|&(k, y)| (c * k).min(1.0) - y).collect();
    let n = errs.len();
    Some(CoeffFit {
        coeff: c,
        reference_gbps: reference,
        rms_error: (errs.iter().map(|e| e * e).sum::<f64>() / n as f64).sqrt(),
        max_abs_error: errs.iter().fold(0.0, |m, e| m.max(e.abs())),
        saturation_sms: 1.0 / c,
        n,
    })
}

/// The L2 sweep's result: the bandwidth the sweep settles to at its largest footprint
/// (still well inside L2), and how flat the end of the sweep is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plateau {
    /// Index of the chosen point (the largest footprint).
    pub index: usize,
    pub value: f64,
    /// Relative change between the two largest footprints, |last - previous| / last.
    pub spread: f64,
}

/// The plateau of a footprint sweep `(footprint, bandwidth)`: small footprints can read
/// faster than L2 sustains (hot lines served near the SMs), so the L2 bandwidth is the value
/// at the largest footprint, and `spread` says how flat the sweep has become there.
pub fn plateau(points: &[(f64, f64)]) -> Option<Plateau> {
    let (index, last) = points
        .iter()
        .enumerate()
        .max_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
        .map(|(i, p)| (i, *p))?;
    let prev = points
        .iter()
        .filter(|p| p.0 < last.0)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|p| p.1);
    Some(Plateau {
        index,
        value: last.1,
        spread: match prev {
            Some(v) if last.1 > 0.0 => (last.1 - v).abs() / last.1,
            _ => 0.0,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synth(c: f64, n_sms: u32, bw: f64, noise: f64) -> Vec<(f64, f64)> {
        (1..=n_sms)
            .map(|k| {
                let k = f64::from(k);
                // deterministic +-noise pattern
                let wiggle = if (k as u32) % 2 == 0 {
                    1.0 + noise
                } else {
                    1.0 - noise
                };
                (k, bw * (c * k).min(1.0) * wiggle)
            })
            .collect()
    }

    #[test]
    fn recovers_the_coefficient_of_clean_data() {
        let f = fit_dram_bw_coeff(&synth(1.0 / 40.0, 132, 4000.0, 0.0)).unwrap();
        assert!((f.coeff - 0.025).abs() < 1e-6, "{f:?}");
        assert!(f.rms_error < 1e-9 && f.max_abs_error < 1e-9);
        assert!((f.saturation_sms - 40.0).abs() < 1e-3);
        assert_eq!(f.reference_gbps, 4000.0);
        assert_eq!(f.n, 132);
    }

    #[test]
    fn noisy_data_fits_close_and_reports_error() {
        let pts = synth(1.0 / 30.0, 132, 4000.0, 0.02);
        let f = fit_dram_bw_coeff(&pts).unwrap();
        assert!((f.saturation_sms - 30.0).abs() < 1.5, "{f:?}");
        assert!(f.rms_error > 0.005 && f.rms_error < 0.05, "{f:?}");
    }

    #[test]
    fn a_curve_that_never_saturates_gives_a_small_coefficient() {
        // Linear to the last SM: saturation at or beyond the last point.
        let pts: Vec<(f64, f64)> = (1..=100).map(|k| (f64::from(k), f64::from(k))).collect();
        let f = fit_dram_bw_coeff(&pts).unwrap();
        assert!(f.saturation_sms >= 99.0, "{f:?}");
    }

    #[test]
    fn fit_rejects_bad_input() {
        assert!(fit_dram_bw_coeff(&[(1.0, 1.0)]).is_none());
        assert!(fit_dram_bw_coeff(&[(1.0, 1.0), (2.0, f64::NAN)]).is_none());
        assert!(fit_dram_bw_coeff(&[(0.0, 1.0), (2.0, 1.0)]).is_none());
    }

    #[test]
    fn plateau_is_the_largest_footprint_and_its_flatness() {
        // Unsorted input; the 1-unit footprint reads faster than L2 sustains.
        let p = plateau(&[(2.0, 120.0), (1.0, 180.0), (8.0, 100.0), (4.0, 105.0)]).unwrap();
        assert_eq!(p.index, 2);
        assert_eq!(p.value, 100.0);
        assert!((p.spread - 0.05).abs() < 1e-12);
        assert_eq!(plateau(&[(1.0, 7.0)]).unwrap().spread, 0.0);
        assert!(plateau(&[]).is_none());
    }
}
