//! Sample statistics for measurements: median, mean, standard deviation, coefficient of
//! variation, MAD-based outliers, and Kendall's tau-b rank correlation (used by the bench
//! to compare predicted and measured orderings, the NVIDIA port report, section 7).

use serde::{Deserialize, Serialize};

/// Summary of one repeated measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    pub stddev: f64,
    /// Coefficient of variation: sample standard deviation over mean.
    pub cov: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// Summarize a non-empty sample; `None` for an empty one or one with a non-finite value.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let n = samples.len();
        let mean = mean(samples);
        let sd = stddev(samples);
        Some(Summary {
            n,
            median: median(samples),
            mean,
            stddev: sd,
            cov: if mean != 0.0 { sd / mean.abs() } else { 0.0 },
            min: samples.iter().cloned().fold(f64::INFINITY, f64::min),
            max: samples.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// Arithmetic mean (NaN for an empty slice).
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Median; the mean of the two middle values for an even count (NaN for empty).
pub fn median(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let mut v = x.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Sample standard deviation (n - 1 denominator); 0 for fewer than two values.
pub fn stddev(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let m = mean(x);
    (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
}

/// Coefficient of variation (sample standard deviation over |mean|).
pub fn cov(x: &[f64]) -> f64 {
    let m = mean(x);
    if m == 0.0 {
        0.0
    } else {
        stddev(x) / m.abs()
    }
}

/// Median absolute deviation, scaled by 1.4826 to estimate sigma for normal data.
pub fn mad(x: &[f64]) -> f64 {
    let m = median(x);
    let dev: Vec<f64> = x.iter().map(|v| (v - m).abs()).collect();
    1.4826 * median(&dev)
}

/// Indices of samples further than `threshold` scaled MADs from the median (hyperfine's
/// rule uses 3.5 on the modified z-score).
pub fn mad_outliers(x: &[f64], threshold: f64) -> Vec<usize> {
    let m = median(x);
    let s = mad(x);
    if s == 0.0 {
        return Vec::new();
    }
    x.iter()
        .enumerate()
        .filter(|(_, v)| ((*v - m) / s).abs() > threshold)
        .map(|(i, _)| i)
        .collect()
}

/// Kendall's tau-b between two paired samples, with the tie correction.
/// `None` when fewer than two pairs or when either side is constant.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    assert_eq!(
        x.len(),
        y.len(),
        "kendall_tau_b: paired samples differ in length"
    );
    let n = x.len();
    if n < 2 {
        return None;
    }
    let (mut concordant, mut discordant) = (0i64, 0i64);
    let (mut ties_x, mut ties_y) = (0i64, 0i64);
    for i in 0..n {
        for j in (i + 1)..n {
            let dx = x[i].total_cmp(&x[j]) as i8;
            let dy = y[i].total_cmp(&y[j]) as i8;
            match (dx, dy) {
                (0, 0) => {}
                (0, _) => ties_x += 1,
                (_, 0) => ties_y += 1,
                _ if dx == dy => concordant += 1,
                _ => discordant += 1,
            }
        }
    }
    let n0 = concordant + discordant;
    let denom = (((n0 + ties_x) as f64) * ((n0 + ties_y) as f64)).sqrt();
    if denom == 0.0 {
        None
    } else {
        Some((concordant - discordant) as f64 / denom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn summary_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        assert!((s.stddev - 2.138089935).abs() < 1e-8);
        assert!((s.cov - 0.427617987).abs() < 1e-8);
        assert_eq!((s.min, s.max, s.median), (2.0, 9.0, 4.5));
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn outliers_found() {
        let x = [10.0, 10.1, 9.9, 10.0, 10.2, 9.8, 30.0];
        assert_eq!(mad_outliers(&x, 3.5), vec![6]);
    }

    #[test]
    fn kendall_known_values() {
        // Perfect agreement, perfect disagreement.
        let a = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(kendall_tau_b(&a, &[10.0, 20.0, 30.0, 40.0]), Some(1.0));
        assert_eq!(kendall_tau_b(&a, &[4.0, 3.0, 2.0, 1.0]), Some(-1.0));
        // scipy.stats.kendalltau([1,2,3,4,5],[3,4,1,2,5]) = 0.2 (2 discordant... computed by hand:
        // pairs 10, concordant 6, discordant 4 -> 0.2).
        let t = kendall_tau_b(&[1.0, 2.0, 3.0, 4.0, 5.0], &[3.0, 4.0, 1.0, 2.0, 5.0]).unwrap();
        assert!((t - 0.2).abs() < 1e-12, "{t}");
        // With ties: x=[1,1,2,3], y=[1,2,2,3]: C=4, D=0, ties_x=1, ties_y=1 -> 4/sqrt(5*5)=0.8.
        let t = kendall_tau_b(&[1.0, 1.0, 2.0, 3.0], &[1.0, 2.0, 2.0, 3.0]).unwrap();
        assert!((t - 0.8).abs() < 1e-12, "{t}");
        assert_eq!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]), None);
    }
}
