//! The timing policy, independent of the GPU so that CI tests it with a mock timer.
//!
//! A sample is one CUDA-event pair around a batch of `reps` back-to-back launches
//! (replayed as one CUDA graph by the runner, so that kernels shorter than the host's
//! launch cost measure the GPU); the per-launch time is the batch time over `reps`.
//! `reps` comes from a first single-launch sample: enough launches for a batch to last
//! `target_sample_ms`, rounded up to a multiple of the buffer rotation.
//!
//! Brute force over ~300 configs needs a screen: after `screen_samples` samples, a config
//! whose median is above `screen_cut` x the best median seen so far on the shape stops
//! there (it cannot be the best; its few samples still rank it for Kendall tau). Every
//! other config, the pick and cuBLAS get `samples` samples (at least 10).

use crate::stats::Summary;

/// What the policy needs from a timer.
pub trait BatchTimer {
    type Error;
    /// Milliseconds per launch of one batch of `reps` back-to-back launches.
    fn sample(&mut self, reps: u32) -> Result<f64, Self::Error>;
}

/// How to time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimingPolicy {
    /// Samples of a full measurement (pick, best candidates, cuBLAS).
    pub samples: usize,
    /// Samples before the screen decides.
    pub screen_samples: usize,
    /// A config slower than this times the best median so far stops after the screen.
    pub screen_cut: f64,
    /// A batch should last about this long.
    pub target_sample_ms: f64,
    /// Most launches per batch.
    pub max_reps: u32,
}

impl Default for TimingPolicy {
    fn default() -> Self {
        TimingPolicy {
            samples: 10,
            screen_samples: 3,
            screen_cut: 1.25,
            target_sample_ms: 0.5,
            max_reps: 512,
        }
    }
}

impl TimingPolicy {
    /// The policy of the command-line flags `--samples`, `--screen-samples`,
    /// `--screen-cut` (0: no screen) and `--sample-ms`; a message naming the flag when a
    /// value is out of range.
    pub fn from_flags(
        samples: usize,
        screen_samples: usize,
        screen_cut: f64,
        sample_ms: f64,
    ) -> Result<TimingPolicy, String> {
        if samples == 0 || screen_samples == 0 {
            return Err("--samples and --screen-samples must be at least 1".into());
        }
        if !(sample_ms > 0.0 && sample_ms.is_finite()) {
            return Err("--sample-ms must be a positive number".into());
        }
        if screen_cut != 0.0 && !(screen_cut >= 1.0 && screen_cut.is_finite()) {
            return Err("--screen-cut must be 0 (off) or at least 1".into());
        }
        Ok(TimingPolicy {
            samples,
            screen_samples: screen_samples.min(samples),
            screen_cut: if screen_cut == 0.0 {
                f64::INFINITY
            } else {
                screen_cut
            },
            target_sample_ms: sample_ms,
            max_reps: 512,
        })
    }
}

/// One timed config (or cuBLAS).
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Per-launch milliseconds of every sample.
    pub samples_ms: Vec<f64>,
    /// Launches per sample.
    pub reps: u32,
    /// Stopped after the screen.
    pub screened_out: bool,
}

impl Timing {
    /// Median per-launch milliseconds.
    pub fn median_ms(&self) -> f64 {
        crate::stats::median(&self.samples_ms)
    }

    /// Summary statistics of the samples.
    pub fn summary(&self) -> Option<Summary> {
        Summary::of(&self.samples_ms)
    }
}

/// Launches per batch: `target / single`, at least 1, at most `max_reps`, rounded up to a
/// multiple of `rotation` (each copy of the inputs used equally often).
pub fn reps_for(single_ms: f64, target_ms: f64, max_reps: u32, rotation: u32) -> u32 {
    let rot = rotation.max(1);
    let want = if single_ms > 0.0 && single_ms.is_finite() {
        (target_ms / single_ms)
            .ceil()
            .clamp(1.0, f64::from(max_reps)) as u32
    } else {
        max_reps
    };
    want.div_ceil(rot) * rot
}

/// A single-launch first sample slower than this times the screen cut times the best
/// stops at once (long kernels only, where one launch is a sample).
pub const FIRST_SAMPLE_SLACK: f64 = 1.2;

/// Time one config. `best_ms`: the best median seen so far on this shape (enables the
/// screen); `full`: never screen (pick, cuBLAS, single runs); `first_ms`: a single
/// launch already timed (the verification launch), used instead of a fresh one.
pub fn measure<T: BatchTimer>(
    t: &mut T,
    policy: &TimingPolicy,
    rotation: u32,
    best_ms: Option<f64>,
    full: bool,
    first_ms: Option<f64>,
) -> Result<Timing, T::Error> {
    let samples = policy.samples.max(1);
    let screen = policy.screen_samples.clamp(1, samples);
    let first = match first_ms {
        Some(v) if v.is_finite() && v > 0.0 => v,
        _ => t.sample(1)?,
    };
    let reps = reps_for(first, policy.target_sample_ms, policy.max_reps, rotation);
    let mut v = Vec::with_capacity(samples);
    let screening = !full && best_ms.is_some();
    // A single launch that already fills a sample counts as one (long kernels).
    if reps == 1 {
        v.push(first);
        if screening
            && first > FIRST_SAMPLE_SLACK * policy.screen_cut * best_ms.unwrap_or(f64::INFINITY)
        {
            return Ok(Timing {
                samples_ms: v,
                reps,
                screened_out: true,
            });
        }
    }
    let goal = if screening { screen } else { samples };
    while v.len() < goal {
        v.push(t.sample(reps)?);
    }
    if screening {
        let med = crate::stats::median(&v);
        if med > policy.screen_cut * best_ms.unwrap_or(f64::INFINITY) {
            return Ok(Timing {
                samples_ms: v,
                reps,
                screened_out: true,
            });
        }
        while v.len() < samples {
            v.push(t.sample(reps)?);
        }
    }
    Ok(Timing {
        samples_ms: v,
        reps,
        screened_out: false,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A mock timer: a launch costs `kernel_ms` on the device plus `launch_ms` once per
    /// batch (graph launch), with a deterministic wobble.
    pub struct MockTimer {
        pub kernel_ms: f64,
        pub launch_ms: f64,
        pub calls: Vec<u32>,
    }

    impl BatchTimer for MockTimer {
        type Error = std::convert::Infallible;
        fn sample(&mut self, reps: u32) -> Result<f64, Self::Error> {
            self.calls.push(reps);
            let wobble = 1.0 + 0.01 * ((self.calls.len() % 3) as f64 - 1.0);
            Ok((self.kernel_ms * f64::from(reps) * wobble + self.launch_ms) / f64::from(reps))
        }
    }

    fn mock(kernel_ms: f64) -> MockTimer {
        MockTimer {
            kernel_ms,
            launch_ms: 0.005,
            calls: vec![],
        }
    }

    #[test]
    fn reps_rules() {
        assert_eq!(reps_for(0.001, 0.5, 512, 1), 500);
        assert_eq!(reps_for(0.001, 0.5, 512, 32), 512);
        assert_eq!(reps_for(2.0, 0.5, 512, 1), 1);
        assert_eq!(reps_for(2.0, 0.5, 512, 2), 2);
        assert_eq!(reps_for(0.0, 0.5, 64, 1), 64);
    }

    #[test]
    fn short_kernels_measure_the_gpu_not_the_launch() {
        let mut t = mock(0.002);
        let m = measure(&mut t, &TimingPolicy::default(), 1, None, true, None).unwrap();
        assert_eq!(m.samples_ms.len(), 10);
        assert!(m.reps >= 70, "{}", m.reps);
        // the launch cost is amortized: within 5 % of the kernel time
        assert!(
            (m.median_ms() - 0.002).abs() / 0.002 < 0.05,
            "{}",
            m.median_ms()
        );
    }

    #[test]
    fn long_kernels_use_single_launch_samples() {
        let mut t = mock(3.0);
        let m = measure(&mut t, &TimingPolicy::default(), 1, None, true, None).unwrap();
        assert_eq!(m.reps, 1);
        assert_eq!(m.samples_ms.len(), 10);
        assert_eq!(
            t.calls.len(),
            10,
            "the first single launch counts as a sample"
        );
    }

    #[test]
    fn the_screen_stops_slow_configs_only() {
        let p = TimingPolicy::default();
        let mut slow = mock(3.0);
        let m = measure(&mut slow, &p, 1, Some(1.0), false, None).unwrap();
        assert!(m.screened_out);
        assert_eq!(
            m.samples_ms.len(),
            1,
            "a long single launch far off the best stops at once"
        );
        let mut short_slow = mock(0.03);
        let m = measure(&mut short_slow, &p, 1, Some(0.01), false, None).unwrap();
        assert!(m.screened_out);
        assert_eq!(m.samples_ms.len(), p.screen_samples);
        let mut close = mock(1.1);
        let m = measure(&mut close, &p, 1, Some(1.0), false, Some(1.1)).unwrap();
        assert_eq!(
            close.calls.len(),
            9,
            "the given first launch is the first sample"
        );
        assert!(!m.screened_out);
        assert_eq!(m.samples_ms.len(), p.samples);
        let mut forced = mock(3.0);
        let m = measure(&mut forced, &p, 1, Some(1.0), true, None).unwrap();
        assert!(!m.screened_out);
        assert_eq!(m.samples_ms.len(), p.samples);
    }
}
