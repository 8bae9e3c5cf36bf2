//! Energy per launch under sustained load (issue 15, section 1). NVML's total-energy
//! counter (millijoules since the driver loaded; `nvmlDeviceGetTotalEnergyConsumption`)
//! moves in ticks, about every 70 ms on an H100, so one reading says little about a
//! kernel of microseconds. A measurement here keeps the GPU's queue full of batches of
//! back-to-back launches (the timing's CUDA graph), never waiting for one, and polls the
//! batches finished and the counter: its window opens at the first poll that sees the
//! counter move and closes at the first move after `min_window_s`. The energy between the
//! two ticks over the launches finished between them (each end uncertain by one batch, so
//! batches are kept short) is the energy per launch; the window's average power; the GPU's
//! own milliseconds per launch meanwhile (the sustained speed: on a long run the SM clock
//! falls to what the power limit allows) and the share of the window the GPU spent in
//! launches (`busy`, about 1: the GPU never waits for the host).
//!
//! (A first version synchronized after every batch and read the counter in the gap: the
//! GPU then idled, clocks up, for half of each window, and that energy was charged to the
//! launches: up to twice the energy per GEMM. `busy` shows the gap now.)
//! Nothing is set: the clocks and the power limit are only read.

/// A cumulative energy counter, in millijoules (`None`: no reading).
pub trait EnergyCounter {
    fn read_mj(&mut self) -> Option<u64>;
    /// Called at every poll inside the window: a counter that can also read the SM clock
    /// and the clock-event (throttle) reasons samples them here (at its own pace).
    fn observe(&mut self) {}
    /// The SM clocks (MHz) and the reasons seen since the window opened.
    fn observed(&self) -> (Vec<u32>, Vec<String>) {
        (Vec::new(), Vec::new())
    }
}

/// Batches of back-to-back launches on the GPU's queue, never waited for one by one.
pub trait LaunchQueue {
    type Error;
    /// Put one batch of `reps` launches on the queue; returns at once.
    fn enqueue(&mut self, reps: u32) -> Result<(), Self::Error>;
    /// The batches finished so far (in queue order) and their GPU milliseconds in all,
    /// without waiting.
    fn finished(&mut self) -> Result<(u64, f64), Self::Error>;
    /// Wait until every batch on the queue has finished.
    fn drain(&mut self) -> Result<(), Self::Error>;
}

/// One sustained measurement.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// The launches' GPU time over the window (about 1 when the queue never ran dry;
    /// absent in reports written before it existed).
    #[serde(default = "one")]
    pub busy: f64,
    /// NVML's SM clock over the window: median of the readings, MHz (None: not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_mhz: Option<f64>,
    /// The lowest SM clock read in the window, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_mhz_min: Option<f64>,
    /// Clock-event (throttle) reasons NVML reported in the window, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttle: Vec<String>,
}

fn one() -> f64 {
    1.0
}

/// Batches kept on the queue ahead of the one running.
pub const QUEUE_DEPTH: u64 = 3;

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

/// Keep `depth` batches of `reps` launches queued on `queue` until the counter has ticked
/// twice at least `min_window_s` apart (host seconds from `now_s`); `None` when it has not
/// within `max_s` (no counter, or one that does not move). The queue is drained before
/// returning, whatever the outcome.
pub fn sustained_queued<Q: LaunchQueue>(
    queue: &mut Q,
    counter: &mut dyn EnergyCounter,
    now_s: &mut dyn FnMut() -> f64,
    reps: u32,
    min_window_s: f64,
    max_s: f64,
) -> Result<Option<Sustained>, Q::Error> {
    let r = window(queue, counter, now_s, reps.max(1), min_window_s, max_s);
    let drained = queue.drain();
    let r = r?;
    drained?;
    Ok(r)
}

fn window<Q: LaunchQueue>(
    queue: &mut Q,
    counter: &mut dyn EnergyCounter,
    now_s: &mut dyn FnMut() -> f64,
    reps: u32,
    min_window_s: f64,
    max_s: f64,
) -> Result<Option<Sustained>, Q::Error> {
    let t_begin = now_s();
    let Some(mut last) = counter.read_mj() else {
        return Ok(None);
    };
    let mut enqueued = 0u64;
    // (time, counter, batches finished, their GPU ms) when the window opened
    let mut start: Option<(f64, u64, u64, f64)> = None;
    loop {
        let (done, gpu_ms) = queue.finished()?;
        while enqueued < done + QUEUE_DEPTH {
            queue.enqueue(reps)?;
            enqueued += 1;
        }
        let t = now_s();
        let Some(e) = counter.read_mj() else {
            return Ok(None);
        };
        let moved = e != last;
        last = e;
        if start.is_some() {
            counter.observe();
        }
        match start {
            None if moved => start = Some((t, e, done, gpu_ms)),
            Some((t0, e0, d0, g0)) if moved && t - t0 >= min_window_s && e > e0 && done > d0 => {
                let n = (done - d0) * u64::from(reps);
                let ms = gpu_ms - g0;
                let (mut mhz, throttle) = counter.observed();
                mhz.sort_unstable();
                return Ok(Some(Sustained {
                    mj_per_launch: (e - e0) as f64 / n as f64,
                    avg_w: (e - e0) as f64 / 1000.0 / (t - t0),
                    window_s: t - t0,
                    launches: n,
                    ms_per_launch: ms / n as f64,
                    busy: ms / 1000.0 / (t - t0),
                    sm_mhz: (!mhz.is_empty()).then(|| f64::from(mhz[mhz.len() / 2])),
                    sm_mhz_min: mhz.first().map(|&m| f64::from(m)),
                    throttle,
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
    use std::rc::Rc;

    /// A GPU that runs its queued batches back to back (launches of `ms` each, drawing
    /// `busy_w` while it runs and `idle_w` while it waits), a host that spends `poll_ms`
    /// per poll, and NVML's counter published every `tick_s`; all on a simulated clock.
    struct Sim {
        t: f64,
        ms: f64,
        busy_w: f64,
        idle_w: f64,
        poll_ms: f64,
        tick_s: f64,
        /// Time the GPU finishes its last queued batch.
        gpu_free_at: f64,
        /// End times of queued batches not yet reported finished, with their ms.
        pending: std::collections::VecDeque<(f64, f64)>,
        done: u64,
        done_ms: f64,
        /// Energy up to `energy_t`.
        energy_j: f64,
        energy_t: f64,
        busy_until: Vec<(f64, f64)>,
    }
    impl Sim {
        fn new(ms: f64, busy_w: f64, idle_w: f64, poll_ms: f64) -> Sim {
            Sim {
                t: 0.0,
                ms,
                busy_w,
                idle_w,
                poll_ms,
                tick_s: 0.07,
                gpu_free_at: 0.0,
                pending: Default::default(),
                done: 0,
                done_ms: 0.0,
                energy_j: 0.0,
                energy_t: 0.0,
                busy_until: Vec::new(),
            }
        }
        /// Energy from `energy_t` to `to` (busy intervals at busy_w, the rest at idle_w).
        fn advance_energy(&mut self, to: f64) {
            let from = self.energy_t;
            let busy: f64 = self
                .busy_until
                .iter()
                .map(|(a, b)| (b.min(to) - a.max(from)).max(0.0))
                .sum();
            self.energy_j += busy * self.busy_w + ((to - from) - busy) * self.idle_w;
            self.energy_t = to;
        }
    }
    struct Queue(Rc<std::cell::RefCell<Sim>>);
    impl LaunchQueue for Queue {
        type Error = ();
        fn enqueue(&mut self, reps: u32) -> Result<(), ()> {
            let mut s = self.0.borrow_mut();
            let ms = s.ms * f64::from(reps);
            let begin = s.gpu_free_at.max(s.t);
            let end = begin + ms / 1000.0;
            s.gpu_free_at = end;
            s.pending.push_back((end, ms));
            s.busy_until.push((begin, end));
            Ok(())
        }
        fn finished(&mut self) -> Result<(u64, f64), ()> {
            let mut s = self.0.borrow_mut();
            s.t += s.poll_ms / 1000.0;
            while let Some(&(end, ms)) = s.pending.front() {
                if end > s.t {
                    break;
                }
                s.pending.pop_front();
                s.done += 1;
                s.done_ms += ms;
            }
            Ok((s.done, s.done_ms))
        }
        fn drain(&mut self) -> Result<(), ()> {
            let mut s = self.0.borrow_mut();
            s.t = s.t.max(s.gpu_free_at);
            s.pending.clear();
            Ok(())
        }
    }
    struct Counter(Rc<std::cell::RefCell<Sim>>);
    impl EnergyCounter for Counter {
        fn read_mj(&mut self) -> Option<u64> {
            let mut s = self.0.borrow_mut();
            let tick = (s.t / s.tick_s).floor() * s.tick_s;
            if tick > s.energy_t {
                s.advance_energy(tick);
            }
            Some((s.energy_j * 1000.0) as u64)
        }
    }

    fn run(sim: Sim, reps: u32, window: f64) -> Option<Sustained> {
        let s = Rc::new(std::cell::RefCell::new(sim));
        let clock = s.clone();
        let mut now = move || clock.borrow().t;
        sustained_queued(
            &mut Queue(s.clone()),
            &mut Counter(s.clone()),
            &mut now,
            reps,
            window,
            10.0,
        )
        .unwrap()
    }

    #[test]
    fn the_window_runs_from_tick_to_tick_with_the_gpu_never_idle() {
        // 0.2 ms launches at 600 W; a slow host (3 ms per poll, as NVML can be) and 5 ms
        // batches: the queue keeps the GPU busy, so the energy is the launches' own
        let reps = batch_reps(0.2, 5.0, 1000);
        assert_eq!(reps, 25);
        let s = run(Sim::new(0.2, 600.0, 150.0, 3.0), reps, 1.0).unwrap();
        assert!((s.avg_w - 600.0).abs() / 600.0 < 0.02, "{s:?}");
        assert!((s.mj_per_launch - 120.0).abs() / 120.0 < 0.02, "{s:?}");
        assert!(s.window_s >= 1.0 && s.window_s < 1.1, "{s:?}");
        assert!((s.ms_per_launch - 0.2).abs() < 1e-9, "{s:?}");
        assert!(s.busy > 0.97 && s.busy < 1.03, "{s:?}");
    }

    #[test]
    fn a_host_slower_than_the_queue_shows_as_busy_below_one() {
        // 1 ms batches, 3 deep, a host that polls every 10 ms: the GPU waits 7 ms of 10
        // and the idle watts are charged to the launches; `busy` says so
        let s = run(Sim::new(0.1, 600.0, 150.0, 10.0), 10, 1.0).unwrap();
        assert!(s.busy < 0.4, "{s:?}");
        assert!(s.mj_per_launch > 0.1 * 600.0 * 1.5, "{s:?}");
    }

    #[test]
    fn a_counter_that_never_moves_gives_none() {
        struct Stuck;
        impl EnergyCounter for Stuck {
            fn read_mj(&mut self) -> Option<u64> {
                Some(42)
            }
        }
        struct Absent;
        impl EnergyCounter for Absent {
            fn read_mj(&mut self) -> Option<u64> {
                None
            }
        }
        let s = Rc::new(std::cell::RefCell::new(Sim::new(1.0, 500.0, 100.0, 1.0)));
        let clock = s.clone();
        let mut now = move || clock.borrow().t;
        let mut q = Queue(s.clone());
        assert_eq!(
            sustained_queued(&mut q, &mut Stuck, &mut now, 10, 1.0, 3.0).unwrap(),
            None
        );
        assert!(s.borrow().pending.is_empty(), "drained");
        assert_eq!(
            sustained_queued(&mut q, &mut Absent, &mut now, 10, 1.0, 3.0).unwrap(),
            None
        );
        assert_eq!(batch_reps(0.0, 5.0, 1000), 1);
        assert_eq!(check_window(1.0), Ok(1.0));
        for bad in [0.1, 61.0, f64::NAN, f64::INFINITY] {
            assert!(check_window(bad).unwrap_err().starts_with("--energy-s: "));
        }
        assert_eq!(batch_reps(1e-4, 5.0, 1000), 1000);
    }

    #[test]
    fn older_reports_without_busy_read_as_busy() {
        let s: Sustained = serde_json::from_str(
            r#"{"mj_per_launch":1.0,"avg_w":500.0,"window_s":1.0,"launches":10,"ms_per_launch":0.1}"#,
        )
        .unwrap();
        assert_eq!(s.busy, 1.0);
    }
}
