//! The stability loop: repeat a measurement until it has at least `min_samples` samples and
//! a coefficient of variation at or below `max_cov`, up to `max_samples` (the NVIDIA port
//! report, section 4.2: "Each measurement is repeated 3+ times with CoV stability
//! verification"). Warm-up samples are taken first and discarded. The sampler is a closure,
//! so tests drive the loop with a mock and the GPU drivers with real kernels.

use crate::stats::Summary;

/// How to repeat one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    /// Samples discarded before the measured ones.
    pub warmup: usize,
    /// At least this many measured samples (`--runs`).
    pub min_samples: usize,
    /// Stop once the CoV (sample stddev / mean, a fraction) is at or below this.
    pub max_cov: f64,
    /// Give up (unstable) after this many measured samples.
    pub max_samples: usize,
}

impl Policy {
    /// The default cap for a given `--runs`: five times the runs, at least 30.
    pub fn default_cap(runs: usize) -> usize {
        (runs * 5).max(30)
    }
}

/// The outcome of the loop for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub samples: Vec<f64>,
    pub summary: Summary,
    /// Whether the CoV reached the threshold.
    pub stable: bool,
}

/// A sampler returned a value that is not a finite number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("sample {index} is not a finite number ({value})")]
pub struct NonFiniteSample {
    pub index: usize,
    pub value: f64,
}

/// Run the loop. `sampler(i)` produces sample `i` (warm-up samples get indices too, so a
/// sampler can rotate buffers or seeds by index).
pub fn sample<E>(
    policy: &Policy,
    mut sampler: impl FnMut(usize) -> Result<f64, E>,
) -> Result<Sampled, E>
where
    E: From<NonFiniteSample>,
{
    let min = policy.min_samples.max(2);
    let cap = policy.max_samples.max(min);
    let mut index = 0;
    for _ in 0..policy.warmup {
        let v = sampler(index)?;
        if !v.is_finite() {
            return Err(NonFiniteSample { index, value: v }.into());
        }
        index += 1;
    }
    let mut samples = Vec::with_capacity(min);
    loop {
        let v = sampler(index)?;
        if !v.is_finite() {
            return Err(NonFiniteSample { index, value: v }.into());
        }
        index += 1;
        samples.push(v);
        if samples.len() >= min {
            let s = Summary::of(&samples).expect("finite, non-empty");
            if s.cov <= policy.max_cov {
                return Ok(Sampled {
                    samples,
                    summary: s,
                    stable: true,
                });
            }
            if samples.len() >= cap {
                return Ok(Sampled {
                    samples,
                    summary: s,
                    stable: false,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    enum E {
        NonFinite,
        Device,
    }
    impl From<NonFiniteSample> for E {
        fn from(_: NonFiniteSample) -> Self {
            E::NonFinite
        }
    }

    fn pol(min: usize, cov: f64, cap: usize) -> Policy {
        Policy {
            warmup: 2,
            min_samples: min,
            max_cov: cov,
            max_samples: cap,
        }
    }

    #[test]
    fn constant_sampler_stops_at_min() {
        let mut calls = 0;
        let r = sample::<E>(&pol(5, 0.01, 50), |_| {
            calls += 1;
            Ok(10.0)
        })
        .unwrap();
        assert!(r.stable);
        assert_eq!(r.samples.len(), 5);
        assert_eq!(calls, 7, "2 warm-up + 5 measured");
        assert_eq!(r.summary.median, 10.0);
    }

    #[test]
    fn warmup_values_are_discarded() {
        // The first two (warm-up) samples are wild; the rest are steady.
        let r = sample::<E>(&pol(3, 0.01, 10), |i| Ok(if i < 2 { 1000.0 } else { 5.0 })).unwrap();
        assert!(r.stable);
        assert_eq!(r.summary.max, 5.0);
    }

    #[test]
    fn noisy_sampler_is_unstable_at_cap() {
        let r = sample::<E>(&pol(3, 0.01, 12), |i| {
            Ok(if i % 2 == 0 { 1.0 } else { 2.0 })
        })
        .unwrap();
        assert!(!r.stable);
        assert_eq!(r.samples.len(), 12);
        assert!(r.summary.cov > 0.3);
    }

    #[test]
    fn an_early_outlier_is_diluted_by_more_samples() {
        // One outlier at the first measured sample: CoV drops under 5% after enough samples.
        let r = sample::<E>(&pol(3, 0.05, 100), |i| Ok(if i == 2 { 1.3 } else { 1.0 })).unwrap();
        assert!(r.stable);
        assert!(
            r.samples.len() > 3 && r.samples.len() < 100,
            "{}",
            r.samples.len()
        );
    }

    #[test]
    fn errors_and_non_finite_values_stop_the_loop() {
        assert_eq!(
            sample::<E>(&pol(3, 0.01, 10), |_| Err(E::Device)),
            Err(E::Device)
        );
        assert_eq!(
            sample::<E>(&pol(3, 0.01, 10), |i| Ok(if i == 3 {
                f64::NAN
            } else {
                1.0
            })),
            Err(E::NonFinite)
        );
    }

    #[test]
    fn min_samples_at_least_two() {
        let r = sample::<E>(&pol(0, 0.5, 0), |_| Ok(1.0)).unwrap();
        assert_eq!(r.samples.len(), 2);
    }
}
