//! Energy per launch under sustained load (issue 15, section 1). NVML's total-energy
//! counter (millijoules since the driver loaded; `nvmlDeviceGetTotalEnergyConsumption`)
//! moves in ticks, about every 70 ms on an H100, so one reading says little about a
//! kernel of microseconds. A measurement here replays a config's batch of back-to-back
//! launches (the timing's CUDA graph) again and again, reads the counter after each batch,
//! starts its window at the first batch after which the counter moved and ends it at the
//! first move after `min_window_s`: the energy between two ticks over the launches run
//! between them (each end uncertain by one batch, so batches are kept short), the average
//! power over the window, and the GPU's own milliseconds per launch meanwhile (the
//! sustained speed: on a long run the SM clock falls to what the power limit allows).
//! Nothing is set: the clocks and the power limit are only read.

use super::measure::BatchTimer;

/// A cumulative energy counter, in millijoules (`None`: no reading).
pub trait EnergyCounter {
    fn read_mj(&mut self) -> Option<u64>;
}

/// One sustained measurement.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sustained {
    /// Energy per launch, millijoules.
    pub mj_per_launch: f64,
    /// Average power over the window, watts.
    pub avg_w: f64,
    /// The window between the two counter ticks, seconds (host clock).
    pub window_s: f64,
    /// Launches in the window.
    pub launches: u64,
    /// The launches' own time in the window (CUDA events), milliseconds per launch.
    pub ms_per_launch: f64,
}

/// `--energy-s`'s window, checked: 0.5 to 60 seconds (the counter ticks every ~70 ms; a
/// minute per config is already long).
pub fn check_window(seconds: f64) -> Result<f64, String> {
    if (0.5..=60.0).contains(&seconds) {
        Ok(seconds)
    } else {
        Err(format!(
            "--energy-s: {seconds} is not a window of 0.5 to 60 seconds"
        ))
    }
}

/// Launches per batch so that a batch takes about `batch_ms` at `ms_per_launch`
/// (at least 1, at most `cap`).
pub fn batch_reps(ms_per_launch: f64, batch_ms: f64, cap: u32) -> u32 {
    if ms_per_launch.is_nan() || ms_per_launch <= 0.0 {
        return 1;
    }
    ((batch_ms / ms_per_launch).ceil() as u32).clamp(1, cap.max(1))
}

/// Replay `reps`-launch batches on `timer` until the counter has ticked twice at least
/// `min_window_s` apart (host seconds from `now_s`); `None` when it has not within
/// `max_s` (no counter, or one that does not move).
pub fn sustained<T: BatchTimer>(
    timer: &mut T,
    counter: &mut dyn EnergyCounter,
    now_s: &mut dyn FnMut() -> f64,
    reps: u32,
    min_window_s: f64,
    max_s: f64,
) -> Result<Option<Sustained>, T::Error> {
    let t_begin = now_s();
    let Some(mut last) = counter.read_mj() else {
        return Ok(None);
    };
    let reps = reps.max(1);
    let (mut launches, mut gpu_ms) = (0u64, 0.0f64);
    // (time, counter, launches, gpu ms) when the window opened
    let mut start: Option<(f64, u64, u64, f64)> = None;
    loop {
        let ms = timer.sample(reps)?;
        launches += u64::from(reps);
        gpu_ms += ms * f64::from(reps);
        let t = now_s();
        let Some(e) = counter.read_mj() else {
            return Ok(None);
        };
        let moved = e != last;
        last = e;
        match start {
            None if moved => start = Some((t, e, launches, gpu_ms)),
            Some((t0, e0, l0, g0)) if moved && t - t0 >= min_window_s && e > e0 => {
                let n = launches - l0;
                let joules = (e - e0) as f64 / 1000.0;
                return Ok(Some(Sustained {
                    mj_per_launch: (e - e0) as f64 / n as f64,
                    avg_w: joules / (t - t0),
                    window_s: t - t0,
                    launches: n,
                    ms_per_launch: (gpu_ms - g0) / n as f64,
                }));
            }
            _ => {}
        }
        if t - t_begin > max_s {
            return Ok(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    /// A GPU drawing `watts` while it runs launches of `ms` each, the host gap
    /// `gap_ms` between batches, on a simulated clock.
    struct FakeGpu {
        t: Rc<Cell<f64>>,
        ms: f64,
        gap_ms: f64,
    }
    impl BatchTimer for FakeGpu {
        type Error = ();
        fn sample(&mut self, reps: u32) -> Result<f64, ()> {
            self.t
                .set(self.t.get() + (self.ms * f64::from(reps) + self.gap_ms) / 1000.0);
            Ok(self.ms)
        }
    }
    /// The counter: energy at `watts`, published every `tick_s`.
    struct FakeCounter {
        t: Rc<Cell<f64>>,
        watts: f64,
        tick_s: f64,
    }
    impl EnergyCounter for FakeCounter {
        fn read_mj(&mut self) -> Option<u64> {
            let ticks = (self.t.get() / self.tick_s).floor();
            Some((ticks * self.tick_s * self.watts * 1000.0) as u64)
        }
    }

    #[test]
    fn the_window_runs_from_tick_to_tick() {
        let t = Rc::new(Cell::new(0.013));
        let mut gpu = FakeGpu {
            t: t.clone(),
            ms: 0.2,
            gap_ms: 0.0,
        };
        let mut counter = FakeCounter {
            t: t.clone(),
            watts: 600.0,
            tick_s: 0.07,
        };
        let tc = t.clone();
        let mut now = move || tc.get();
        let reps = batch_reps(0.2, 5.0, 1000);
        assert_eq!(reps, 25);
        let s = sustained(&mut gpu, &mut counter, &mut now, reps, 1.0, 10.0)
            .unwrap()
            .unwrap();
        // 0.2 ms at 600 W: 120 mJ per launch; each end within one 5 ms batch
        assert!((s.avg_w - 600.0).abs() / 600.0 < 0.02, "{s:?}");
        assert!((s.mj_per_launch - 120.0).abs() / 120.0 < 0.02, "{s:?}");
        assert!(s.window_s >= 1.0 && s.window_s < 1.1, "{s:?}");
        assert_eq!(s.ms_per_launch, 0.2);
    }

    #[test]
    fn host_gaps_lower_the_power_not_the_energy_per_launch() {
        // the counter sees the GPU's power averaged over gaps it idles in (a GPU at 0 W
        // between batches): the same energy per launch, a lower average
        let t = Rc::new(Cell::new(0.0));
        let mut gpu = FakeGpu {
            t: t.clone(),
            ms: 1.0,
            gap_ms: 1.0,
        };
        struct Busy {
            t: Rc<Cell<f64>>,
            mj: f64,
            last_t: f64,
        }
        impl EnergyCounter for Busy {
            fn read_mj(&mut self) -> Option<u64> {
                // 400 W while busy: 5 ms of work per 6 ms here; published every 50 ms
                let now = self.t.get();
                let tick = (now / 0.05).floor() * 0.05;
                if tick > self.last_t {
                    self.mj += (tick - self.last_t) * 400.0 * 1000.0 * 5.0 / 6.0;
                    self.last_t = tick;
                }
                Some(self.mj as u64)
            }
        }
        let mut counter = Busy {
            t: t.clone(),
            mj: 0.0,
            last_t: 0.0,
        };
        let tc = t.clone();
        let mut now = move || tc.get();
        let s = sustained(&mut gpu, &mut counter, &mut now, 5, 0.5, 10.0)
            .unwrap()
            .unwrap();
        assert!((s.avg_w - 400.0 * 5.0 / 6.0).abs() < 10.0, "{s:?}");
        assert!((s.mj_per_launch - 400.0).abs() / 400.0 < 0.03, "{s:?}");
    }

    #[test]
    fn a_counter_that_never_moves_gives_none() {
        struct Stuck;
        impl EnergyCounter for Stuck {
            fn read_mj(&mut self) -> Option<u64> {
                Some(42)
            }
        }
        let t = Rc::new(Cell::new(0.0));
        let mut gpu = FakeGpu {
            t: t.clone(),
            ms: 1.0,
            gap_ms: 0.0,
        };
        let tc = t.clone();
        let mut now = move || tc.get();
        assert_eq!(
            sustained(&mut gpu, &mut Stuck, &mut now, 10, 1.0, 3.0).unwrap(),
            None
        );
        struct Absent;
        impl EnergyCounter for Absent {
            fn read_mj(&mut self) -> Option<u64> {
                None
            }
        }
        assert_eq!(
            sustained(&mut gpu, &mut Absent, &mut now, 10, 1.0, 3.0).unwrap(),
            None
        );
        assert_eq!(batch_reps(0.0, 5.0, 1000), 1);
        assert_eq!(check_window(1.0), Ok(1.0));
        for bad in [0.1, 61.0, f64::NAN, f64::INFINITY] {
            assert!(check_window(bad).unwrap_err().starts_with("--energy-s: "));
        }
        assert_eq!(batch_reps(1e-4, 5.0, 1000), 1000);
    }
}
