//! Energy per FLOP and per byte (`--only energy`; issue 15, section 3: "Energy per GEMM
//! from calibrated costs: static power times time, plus dynamic energy per tensor-core
//! FLOP and per byte moved from DRAM, L2 and shared memory").
//!
//! Each cost comes from a load of csrc/energy_load.cu run back to back while NVML's
//! total-energy counter is read: [`crate::gemm::energy::sustained_queued`] (the windowing
//! of `origami-bench --energy-s`) keeps batches of ~6 ms of ~2 ms launches queued on the
//! GPU, each between two events, and polls them and the counter without waiting, until
//! the counter has ticked twice at least `--energy-s` (0.5 s) apart; it gives the average
//! power over the window, the launches' own milliseconds per launch (CUDA events) in it
//! and `busy`, their GPU time over the window (about 1: the GPU never waits for the host).
//! One window is one sample of the stability loop. With P the window's power, P_static
//! the spin kernel's median power in the same run and the rate = operations per launch /
//! ms per launch:
//!
//! - `energy_idle_w`: P with no kernel (the host sleeps a batch's length), a reference;
//! - `energy_static_w`: P of one warp per SM spinning on clock64 (awake, nothing moved);
//! - `energy_active_w`: P of every SM full of spinning one-warp blocks (schedulers
//!   issuing, nothing moved): what a GEMM's SMs draw while they wait, and what the load
//!   kernels below draw besides their operations (the model prices their costs above it,
//!   with their rates in `details.ops_per_s`);
//! - `energy_mma_pj_per_flop` = (P_mma - P_static) / FLOP rate (mma.sync m16n8k16 f16);
//! - `energy_smem_pj_per_byte` = (P_smem - P_static) / byte rate (ld.shared.v4);
//! - `energy_l2_pj_per_byte` = (P_l2 - P_static) / byte rate (ld.global.cg, L2 hits);
//! - `energy_dram_pj_per_byte` = (P_dram - P_static) / byte rate - energy_l2_pj_per_byte
//!   (the same loads over a buffer of at least 8 x L2: the part beyond an L2 hit, so that
//!   a model charges the L2 cost to every byte that crosses L2 and this one to DRAM's);
//! - `power_limit_w`: NVML's enforced power limit, read once per sample.
//!
//! On compute capability 9.0 (sm_90a; skipped with the reason elsewhere) three more, the
//! path of the Hopper GEMM (TMA loads L2 -> shared memory, wgmma from shared memory), from
//! the kernels of `--only tc-rate` and `--only tma`:
//!
//! - `energy_wgmma_pj_per_flop` = (P_wgmma - P_static) / FLOP rate (csrc/tc_wgmma.cu,
//!   `tc_wgmma_n256`, 2 warpgroups, one CTA per SM: Hopper's full 4096 FLOP per SM cycle;
//!   A and B from shared memory, so the tensor cores' shared-memory reads are in it);
//! - `energy_tma_l2_pj_per_byte` = (P_tma - P_static) / byte rate (csrc/tma_load.cu,
//!   `tma_stream` over the L2-resident tensor of `--only tma`, one CTA per SM: bytes L2 ->
//!   shared memory by TMA, the shared-memory writes in it);
//! - `energy_tma_dram_pj_per_byte`: the same over the DRAM tensor of `--only tma`, less
//!   `energy_tma_l2_pj_per_byte` (the part beyond a TMA L2 hit, as for `energy_dram_*`).
//!
//! Every figure includes what a load costs besides the bytes or FLOPs themselves (the
//! instruction issue, the register writes, the XOR that consumes a load), as a GEMM's
//! loads and MMAs pay it too. Nothing is set: clocks and power limit are only read. The
//! arithmetic is in the pure functions below, with their tests.

use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::{json, Value};

use super::tc::{sm90a_skip_reason, wgmma_flop, MMA_M16N8K16_FLOP, WGMMA_PER_ROUND};
use super::tma::{footprints, plan, BOX_BYTES, STAGES};
use super::{fmt_bytes, r, CalibError, KernelArgs, LaunchDims, Metric, Policy, Results, Runner};
use super::{Skip, MIB};
use crate::gemm::energy::{batch_reps, sustained_queued, EnergyCounter, LaunchQueue, Sustained};
use crate::gpu::tma::{encode_2d, MapShape};
use crate::gpu::{EventQueue, Gpu, GpuError};

#[path = "bench_energy_sm90.rs"]
mod sm90;
pub use sm90::{
    tma_bytes_per_launch, tma_dram_per_cta, tma_dram_reread_bytes, wgmma_flop_per_launch,
    wgmma_smem_bytes, TmaSource, WGMMA_N, WGMMA_WARPGROUPS,
};

/// The counter window of a sample when `--energy-s` is not given, seconds.
pub const DEFAULT_WINDOW_S: f64 = 0.5;
/// One launch is sized to about this long, milliseconds.
pub const LAUNCH_MS: f64 = 2.0;
/// A batch of back-to-back launches lasts about this long (a window counts its launches
/// and their event time in whole batches), milliseconds.
pub const BATCH_MS: f64 = 6.0;
/// Most launches per batch.
pub const MAX_REPS: u32 = 64;
/// NVML's SM clock is read at most this often while a window runs.
const CLOCK_EVERY: Duration = Duration::from_millis(50);
/// How long the counter may stay still before the benchmark is skipped, seconds.
const TICK_TIMEOUT_S: f64 = 2.0;
/// Metrics the benchmark samples everywhere (the progress bar): nine energy metrics (the
/// tf32 one from sm_80 on) and the limit.
pub const METRICS: u64 = 10;
/// Metrics it samples on compute capability 9.0 only: wgmma (random and zero A), TMA from
/// L2, TMA from DRAM, TMA boxes outside their tensor (zero-filled).
pub const METRICS_SM90A: u64 = 5;

/// Independent accumulators per warp of `energy_mma` (ENERGY_MMA_ILP).
pub const MMA_ILP: u32 = 2;
/// Threads per block of `energy_mma` (ENERGY_MMA_THREADS).
pub const MMA_THREADS: u32 = 256;
/// Threads per block of `energy_smem` (ENERGY_SMEM_THREADS).
pub const SMEM_THREADS: u32 = 512;
/// 16-byte shared loads per thread per round of `energy_smem` (ENERGY_SMEM_UNROLL).
pub const SMEM_UNROLL: u32 = 8;
/// Bytes one warp's ld.shared.v4 reads.
pub const WARP_READ_BYTES: u32 = 512;
/// Threads per block of `energy_l2` and `energy_dram` (ENERGY_LD_THREADS).
pub const LD_THREADS: u32 = 512;
/// Independent 16-byte loads per thread per step (ENERGY_LD_UNROLL).
pub const LD_UNROLL: u32 = 4;

/// Metrics the benchmark samples (the progress bar) on a GPU of compute capability `cc`:
/// the tf32 cost from 8.0, wgmma and TMA on an sm_90a GPU (`sm90a`).
pub fn metrics(cc: [u32; 2], sm90a: bool) -> u64 {
    let tf32 = cc[0] * 10 + cc[1] >= 80;
    METRICS - u64::from(!tf32) + if sm90a { METRICS_SM90A } else { 0 }
}

/// Operations per second of `ops_per_launch` in `ms_per_launch`; `None` unless both are
/// positive and finite.
pub fn ops_per_s(ops_per_launch: f64, ms_per_launch: f64) -> Option<f64> {
    let ok = |x: f64| x.is_finite() && x > 0.0;
    (ok(ops_per_launch) && ok(ms_per_launch)).then(|| ops_per_launch / (ms_per_launch * 1e-3))
}

/// Dynamic energy per operation in picojoules: the power above the static power over the
/// rate, (avg_w - static_w) / (ops_per_launch / ms_per_launch). Below the static power it
/// is negative (noise or a wrong static figure: the stability loop shows it).
pub fn pj_per_op(
    avg_w: f64,
    static_w: f64,
    ops_per_launch: f64,
    ms_per_launch: f64,
) -> Option<f64> {
    let rate = ops_per_s(ops_per_launch, ms_per_launch)?;
    Some((avg_w - static_w) / rate * 1e12)
}

/// The DRAM cost beyond an L2 hit: the whole path's pJ per byte (DRAM -> L2 -> SM) less
/// the L2 hit's (L2 -> SM).
pub fn dram_beyond_l2(dram_path_pj: f64, l2_pj: f64) -> f64 {
    dram_path_pj - l2_pj
}

/// Dense FLOP of one `energy_mma` launch of `warps` warps, `iters` rounds each.
pub fn mma_flop_per_launch(warps: u64, iters: u32) -> f64 {
    warps as f64 * f64::from(iters) * f64::from(MMA_ILP) * MMA_M16N8K16_FLOP
}

/// The two mma.sync loads of the energy benchmark: f16 (`energy_mma`, the model's
/// `energy_mma_pj_per_flop`) and tf32 (`energy_mma_tf32`, sm_80 and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmaLoad {
    F16,
    /// f16 with the A fragments zero (the rows of a tile past M).
    F16ZeroA,
    Tf32,
}

impl MmaLoad {
    pub fn kernel(self) -> &'static str {
        match self {
            MmaLoad::F16 | MmaLoad::F16ZeroA => "energy_mma",
            MmaLoad::Tf32 => "energy_mma_tf32",
        }
    }
    pub fn metric(self) -> &'static str {
        match self {
            MmaLoad::F16 => r::ENERGY_MMA_PJ_PER_FLOP,
            MmaLoad::F16ZeroA => r::ENERGY_MMA_ZERO_A_PJ_PER_FLOP,
            MmaLoad::Tf32 => r::ENERGY_MMA_TF32_PJ_PER_FLOP,
        }
    }
    pub fn instruction(self) -> &'static str {
        match self {
            MmaLoad::F16 | MmaLoad::F16ZeroA => "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            MmaLoad::Tf32 => "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        }
    }
    fn operands(self) -> &'static str {
        match self {
            MmaLoad::F16 => "two sets of random non-zero fp16 fragments in registers, alternating from one mma to the next",
            MmaLoad::F16ZeroA => "A fragments zero, two sets of random non-zero fp16 B fragments in registers, alternating from one mma to the next",
            MmaLoad::Tf32 => "two sets of random fp32 fragments in (-1, 1) in registers, alternating from one mma to the next",
        }
    }
    /// Dense FLOP of one launch of `warps` warps, `iters` rounds each: an m16n8k8 tf32
    /// MMA is half an m16n8k16's.
    pub fn flop_per_launch(self, warps: u64, iters: u32) -> f64 {
        match self {
            MmaLoad::F16 | MmaLoad::F16ZeroA => mma_flop_per_launch(warps, iters),
            MmaLoad::Tf32 => mma_flop_per_launch(warps, iters) / 2.0,
        }
    }
}

/// Shared-memory bytes of one `energy_smem` launch of `warps` warps, `iters` rounds each.
pub fn smem_bytes_per_launch(warps: u64, iters: u32) -> f64 {
    warps as f64 * f64::from(iters) * f64::from(SMEM_UNROLL * WARP_READ_BYTES)
}

/// Bytes one `energy_l2` / `energy_dram` launch asks for: `passes` x
/// [`super::stream_pass_bytes`] at LD_UNROLL loads a step.
pub fn stream_bytes_per_launch(threads: u64, n_vec: u64, passes: u32) -> f64 {
    f64::from(passes) * super::stream_pass_bytes(threads, u64::from(LD_UNROLL), n_vec) as f64
}

/// clock64 cycles the spin kernel waits for a launch of `ms` at `mhz`.
pub fn spin_cycles(ms: f64, mhz: f64) -> u64 {
    ((ms * mhz * 1e3) as u64).max(1)
}

/// The loop count that makes a launch last `target_ms`, from a probe of `probe` that took
/// `probe_ms` (between `probe` / 4 and `max`, at least 1).
pub fn scaled_count(probe: u32, probe_ms: f64, target_ms: f64, max: u32) -> u32 {
    let lo = (probe / 4).max(1);
    if !(probe_ms.is_finite() && probe_ms > 0.0) {
        return probe.clamp(lo, max.max(lo));
    }
    let n = f64::from(probe) * target_ms / probe_ms;
    (n.round() as u64).clamp(u64::from(lo), u64::from(max.max(lo))) as u32
}

/// The L2-resident buffer: the power of two nearest a quarter of L2 (on a log scale, so
/// at most ~0.35 x L2: every load a hit), at least 1 MiB. 16 MiB on a 50 MiB H100 or a
/// 60 MiB H200, the footprint of the L2 bandwidth plateau (`l2_read_gbps`).
pub fn l2_footprint(l2_bytes: u64) -> u64 {
    let q = (l2_bytes / 4).max(MIB);
    let down = 1u64 << (63 - q.leading_zeros());
    let up = down * 2;
    let fp = if (q as f64 / down as f64) < (up as f64 / q as f64) {
        down
    } else {
        up
    };
    fp.max(MIB)
}

/// The DRAM buffer: the power of two at or above 8 x L2, at least 256 MiB (each pass reads
/// all of it, so a line has left L2 long before the next pass reads it again).
pub fn dram_footprint(l2_bytes: u64) -> u64 {
    (8 * l2_bytes).next_power_of_two().max(256 * MIB)
}

/// The policy of an energy metric: the run's, with at least 3 samples and the CoV limit
/// of [`r::cov_limit`] (5 % unless the run's is looser).
pub fn energy_policy(base: Policy, name: &str) -> Policy {
    let min = base.min_samples.max(3);
    Policy {
        warmup: base.warmup,
        min_samples: min,
        max_cov: r::cov_limit(name, base.max_cov),
        max_samples: base.max_samples.max(min),
    }
}

/// Two random operand sets of 32 lanes x 6 words each as `energy_mma` reads them: lane l's
/// 12 words are set one's 6 then set two's.
pub fn two_operand_sets(one: &[u32], two: &[u32]) -> Vec<u32> {
    one.chunks_exact(6)
        .zip(two.chunks_exact(6))
        .flat_map(|(a, b)| a.iter().chain(b).copied())
        .collect()
}

/// Wait until the counter moves; the reason to skip when it cannot be read or stays
/// still for `timeout_s` (`wait` sleeps a little, `now_s` is a clock in seconds).
pub fn counter_moves(
    counter: &mut dyn EnergyCounter,
    wait: &mut dyn FnMut(),
    now_s: &mut dyn FnMut() -> f64,
    timeout_s: f64,
) -> Result<(), String> {
    let unreadable = "NVML's total-energy counter (nvmlDeviceGetTotalEnergyConsumption) cannot be read: no NVML, or a GPU older than Volta";
    let first = counter.read_mj().ok_or_else(|| unreadable.to_string())?;
    let t0 = now_s();
    loop {
        wait();
        match counter.read_mj() {
            None => return Err(unreadable.to_string()),
            Some(v) if v != first => return Ok(()),
            Some(_) => {}
        }
        if now_s() - t0 > timeout_s {
            return Err(format!(
                "NVML's total-energy counter did not move in {timeout_s} s"
            ));
        }
    }
}

/// The median of some values (`None` when there are none).
/// The whole DRAM path's cost (before the L2 part is subtracted), pJ per operation: the
/// median over the windows `seen` of their power above `static_w` over their rate.
fn path_pj(seen: &[Window], static_w: f64, ops_per_launch: f64) -> Option<f64> {
    median_of(
        seen.iter()
            .filter_map(|w| pj_per_op(w.s.avg_w, static_w, ops_per_launch, w.s.ms_per_launch)),
    )
}

fn median_of(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| {
        v.sort_by(f64::total_cmp);
        crate::stats::median(&v)
    })
}

/// NVML's counter of one GPU.
struct Counter<'a>(&'a Gpu);

impl EnergyCounter for Counter<'_> {
    fn read_mj(&mut self) -> Option<u64> {
        self.0.energy_mj().ok()
    }
}

/// A launch of a sized load.
type Launch<'a> = &'a dyn Fn() -> Result<(), GpuError>;

/// NVML's SM clock, read at most every `CLOCK_EVERY` while a window runs.
struct Clock<'a> {
    gpu: &'a Gpu,
    last: Option<Instant>,
    mhz: Vec<u32>,
}

impl Clock<'_> {
    fn maybe_read(&mut self) {
        if matches!(self.last, Some(t) if t.elapsed() < CLOCK_EVERY) {
            return;
        }
        self.last = Some(Instant::now());
        self.mhz.extend(self.gpu.nvml_sm_mhz().ok());
    }
}

/// Batches of back-to-back launches of one load kept queued on the GPU's stream, each
/// between two events ([`crate::gpu::EventQueue`]), polled without waiting: the GPU never
/// waits for the host while it reads NVML.
struct Queued<'a> {
    load: Launch<'a>,
    queue: EventQueue,
    clock: Clock<'a>,
}

impl LaunchQueue for Queued<'_> {
    type Error = GpuError;
    fn enqueue(&mut self, reps: u32) -> Result<(), GpuError> {
        let load = self.load;
        self.queue.push(|| {
            for _ in 0..reps {
                load()?;
            }
            Ok(())
        })
    }
    fn finished(&mut self) -> Result<(u64, f64), GpuError> {
        self.clock.maybe_read();
        self.queue.poll()
    }
    fn drain(&mut self) -> Result<(), GpuError> {
        self.queue.drain().map(|_| ())
    }
}

/// No load: a "batch" is the host sleeping `BATCH_MS` (the GPU idle, its context open).
struct Idle<'a> {
    polls: u64,
    clock: Clock<'a>,
}

impl LaunchQueue for Idle<'_> {
    type Error = GpuError;
    fn enqueue(&mut self, _reps: u32) -> Result<(), GpuError> {
        Ok(())
    }
    fn finished(&mut self) -> Result<(u64, f64), GpuError> {
        std::thread::sleep(Duration::from_secs_f64(BATCH_MS * 1e-3));
        self.clock.maybe_read();
        self.polls += 1;
        Ok((self.polls, 0.0))
    }
    fn drain(&mut self) -> Result<(), GpuError> {
        Ok(())
    }
}

/// One sample: a counter window and NVML's SM clock during it.
#[derive(Debug, Clone)]
struct Window {
    s: Sustained,
    sm_mhz: Option<f64>,
}

/// One counter window of `reps`-launch batches of `load` kept queued (or of idle).
fn window(
    gpu: &Gpu,
    load: Option<Launch<'_>>,
    reps: u32,
    min_window_s: f64,
) -> Result<Window, CalibError> {
    let clock = Clock {
        gpu,
        last: None,
        mhz: Vec::new(),
    };
    let t0 = Instant::now();
    let mut now = move || t0.elapsed().as_secs_f64();
    let max_s = min_window_s + 5.0;
    let mut counter = Counter(gpu);
    let (s, mhz) = match load {
        Some(load) => {
            let mut q = Queued {
                load,
                queue: gpu.event_queue(),
                clock,
            };
            let s = sustained_queued(&mut q, &mut counter, &mut now, reps, min_window_s, max_s)?;
            (s, q.clock.mhz)
        }
        None => {
            let mut q = Idle { polls: 0, clock };
            let s = sustained_queued(&mut q, &mut counter, &mut now, reps, min_window_s, max_s)?;
            (s, q.clock.mhz)
        }
    };
    let s = s.ok_or_else(|| {
        CalibError::Measurement(format!(
            "NVML's energy counter did not tick twice {min_window_s} s apart within {max_s} s"
        ))
    })?;
    let sm_mhz = median_of(mhz.iter().map(|&x| f64::from(x)));
    Ok(Window { s, sm_mhz })
}

/// A load sized to ~LAUNCH_MS: its loop count and one launch's event-timed milliseconds.
/// Two rounds of scaling, since a short probe is mostly the launch's fixed cost.
fn size_load(
    gpu: &Gpu,
    launch: &dyn Fn(u32) -> Result<(), GpuError>,
    probe: u32,
    max: u32,
) -> Result<(u32, f64), CalibError> {
    launch(probe)?; // warm: module, first touch, clocks up
    let (mut n, mut ms) = (probe, gpu.time_ms(|| launch(probe))?);
    for _ in 0..2 {
        n = scaled_count(n, ms, LAUNCH_MS, max);
        launch(n)?;
        ms = gpu.time_ms(|| launch(n))?;
    }
    Ok((n, ms))
}

/// What a dynamic cost's sample needs besides its window.
struct Cost<'a> {
    name: &'static str,
    unit: &'static str,
    op: &'static str,
    ops_per_launch: f64,
    static_w: f64,
    /// The L2 hit's pJ per byte of the same path, for DRAM: every sample is the cost
    /// beyond it.
    beyond_l2: Option<f64>,
    launch: Launch<'a>,
    ms_one: f64,
}

impl Runner<'_> {
    /// csrc/energy_load.cu: idle and static power, the dynamic pJ per FLOP and per byte of
    /// shared memory, L2 and DRAM, and NVML's enforced power limit. Skipped (with the
    /// reason) where NVML's energy counter cannot be read or does not move.
    pub fn energy(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        gpu.synchronize()?;
        let t0 = Instant::now();
        let mut now = move || t0.elapsed().as_secs_f64();
        let mut wait = || std::thread::sleep(Duration::from_millis(10));
        self.power_limit(res)?;
        if let Err(why) = counter_moves(&mut Counter(gpu), &mut wait, &mut now, TICK_TIMEOUT_S) {
            res.skipped.push(Skip {
                what: "energy (the energy_* metrics)".into(),
                why,
            });
            return Ok(());
        }
        let window_s = self.cfg.energy_window_s;
        let props = gpu.props().clone();

        // Idle: no kernel; the host sleeps a batch's length between counter reads.
        let (m, seen) = self.energy_windows(r::ENERGY_IDLE_W, "W", None, 1, &|w| Ok(w.s.avg_w))?;
        res.metrics.push(
            with_windows(m, &seen)
                .with(
                    "load",
                    "none: the host sleeps between counter reads (context open)",
                )
                .with(
                    "method",
                    "NVML total energy between two counter ticks / host seconds between them",
                ),
        );

        // Static: one warp per SM spinning on clock64.
        let spin = self.kernel("energy_load", "energy_spin")?;
        let sm_mask = gpu.alloc_zeros::<u32>(64)?;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let spin_dims = LaunchDims::linear(props.sm_count, 32);
        let cycles = spin_cycles(LAUNCH_MS, props.sm_clock_mhz);
        let spin_launch = || -> Result<(), GpuError> {
            gpu.launch(
                &spin,
                spin_dims,
                KernelArgs::new().u64(cycles).buf(&sm_mask).buf(&sink),
            )
        };
        spin_launch()?;
        let sms_spinning: u32 = gpu.download(&sm_mask)?.iter().map(|w| w.count_ones()).sum();
        let spin_ms = gpu.time_ms(spin_launch)?;
        let spin_reps = batch_reps(spin_ms, BATCH_MS, MAX_REPS);
        let (m, seen) = self.energy_windows(
            r::ENERGY_STATIC_W,
            "W",
            Some(&spin_launch),
            spin_reps,
            &|w| Ok(w.s.avg_w),
        )?;
        let static_w = m.median();
        res.metrics.push(
            with_windows(m, &seen)
                .with("kernel", "energy_spin")
                .with(
                    "load",
                    "one warp per SM spinning on clock64: awake and clocked, nothing moved",
                )
                .with("grid", json!([props.sm_count, 32]))
                .with("sms_with_a_spinning_warp", sms_spinning)
                .with("cycles_per_launch", cycles)
                .with("ms_per_launch_single", spin_ms)
                .with("reps_per_batch", spin_reps),
        );

        // Active: as many spinning warps as every SM holds (the same kernel, blocks of one
        // warp up to the occupancy limit): SMs awake with their schedulers issuing, nothing
        // moved. A GEMM's SMs are this busy while they wait on loads; the load kernels
        // below run this busy too, so the model takes their costs above this power.
        let active_blocks = self.blocks_for(&spin, 32)?;
        let active_dims = LaunchDims::linear(active_blocks, 32);
        let active_launch = || -> Result<(), GpuError> {
            gpu.launch(
                &spin,
                active_dims,
                KernelArgs::new().u64(cycles).buf(&sm_mask).buf(&sink),
            )
        };
        active_launch()?;
        let active_ms = gpu.time_ms(active_launch)?;
        let active_reps = batch_reps(active_ms, BATCH_MS, MAX_REPS);
        let (m, seen) = self.energy_windows(
            r::ENERGY_ACTIVE_W,
            "W",
            Some(&active_launch),
            active_reps,
            &|w| Ok(w.s.avg_w),
        )?;
        res.metrics.push(
            with_windows(m, &seen)
                .with("kernel", "energy_spin")
                .with(
                    "load",
                    "every SM full of one-warp blocks spinning on clock64: schedulers issuing, nothing moved",
                )
                .with("grid", json!([active_blocks, 32]))
                .with("cycles_per_launch", cycles)
                .with("ms_per_launch_single", active_ms)
                .with("reps_per_batch", active_reps),
        );

        // Tensor cores: mma.sync m16n8k16 f16 -> f32 from registers, all warps resident;
        // then m16n8k8 tf32 (the origami kernel's fp32 path) where the GPU has it.
        let words = two_operand_sets(&self.random_f16_words(), &self.random_f16_words());
        self.mma_cost(res, MmaLoad::F16, &words, static_w)?;
        // the same with zero A fragments: an MMA over rows of a tile past M (zero-filled)
        let zero_a = |w: Vec<u32>| -> Vec<u32> {
            w.chunks_exact(6)
                .flat_map(|lane| [0, 0, 0, 0, lane[4], lane[5]])
                .collect()
        };
        let words = two_operand_sets(
            &zero_a(self.random_f16_words()),
            &zero_a(self.random_f16_words()),
        );
        self.mma_cost(res, MmaLoad::F16ZeroA, &words, static_w)?;
        if gpu.arch() >= 80 {
            let words = two_operand_sets(&self.random_f32_words(), &self.random_f32_words());
            self.mma_cost(res, MmaLoad::Tf32, &words, static_w)?;
        } else {
            res.skipped.push(Skip {
                what: r::ENERGY_MMA_TF32_PJ_PER_FLOP.into(),
                why: format!(
                    "tf32 mma.sync needs sm_80 or later; this GPU is sm_{}",
                    gpu.arch()
                ),
            });
        }

        // Shared memory: ld.volatile.shared.v4, conflict-free, every resident warp.
        let smem = self.kernel("energy_load", "energy_smem")?;
        let smem_blocks = self.blocks_for(&smem, SMEM_THREADS)?;
        let smem_dims = LaunchDims::linear(smem_blocks, SMEM_THREADS);
        let smem_warps = u64::from(smem_blocks) * u64::from(SMEM_THREADS / 32);
        let seed: u32 = self.rng.random();
        let smem_n = |iters: u32| {
            gpu.launch(
                &smem,
                smem_dims,
                KernelArgs::new().u32(iters).u32(seed).buf(&sink),
            )
        };
        let (iters, ms_one) = size_load(gpu, &smem_n, 64, 1 << 24)?;
        let launch = || smem_n(iters);
        let cost = Cost {
            name: r::ENERGY_SMEM_PJ_PER_BYTE,
            unit: "pJ/B",
            op: "byte",
            ops_per_launch: smem_bytes_per_launch(smem_warps, iters),
            static_w,
            beyond_l2: None,
            launch: &launch,
            ms_one,
        };
        let (m, _) = self.dynamic_cost(&cost)?;
        res.metrics.push(
            m.with("kernel", "energy_smem")
                .with(
                    "instruction",
                    "ld.volatile.shared.v4.u32, 512 bytes per warp instruction",
                )
                .with("grid", json!([smem_blocks, SMEM_THREADS]))
                .with("iters_per_launch", iters),
        );

        // L2 hits, then DRAM: one kernel body, two footprints.
        let l2_pj = self.stream_cost(res, false, static_w, 0.0)?;
        self.stream_cost(res, true, static_w, l2_pj)?;

        // The Hopper GEMM's path (sm_90a): wgmma from shared memory, TMA L2/DRAM -> shared.
        match sm90a_skip_reason(props.compute_capability) {
            Some(why) => res.skipped.push(Skip {
                what: format!(
                    "{}, {}, {}, {} (energy of wgmma and TMA)",
                    r::ENERGY_WGMMA_PJ_PER_FLOP,
                    r::ENERGY_TMA_L2_PJ_PER_BYTE,
                    r::ENERGY_TMA_DRAM_PJ_PER_BYTE,
                    r::ENERGY_TMA_ZERO_PJ_PER_BYTE
                ),
                why,
            }),
            None => {
                self.wgmma_cost(res, static_w, false)?;
                self.wgmma_cost(res, static_w, true)?;
                let tma_l2_pj = self.tma_cost(res, TmaSource::L2, static_w, 0.0)?;
                self.tma_cost(res, TmaSource::Dram, static_w, tma_l2_pj)?;
                self.tma_cost(res, TmaSource::OutOfBounds, static_w, 0.0)?;
            }
        }

        // The static power once more, after the loads: how far it drifted (temperature).
        let after = window(gpu, Some(&spin_launch), spin_reps, window_s)?;
        if let Some(m) = res
            .metrics
            .iter_mut()
            .find(|m| m.name == r::ENERGY_STATIC_W)
        {
            m.details
                .insert("static_w_after_loads".into(), json!(after.s.avg_w));
            m.details.insert(
                "static_drift".into(),
                json!((after.s.avg_w - static_w) / static_w),
            );
        }
        Ok(())
    }

    /// `energy_l2` over ~L2/4 (`dram` false) or `energy_dram` over >= 8 x L2; returns the
    /// metric's median.
    fn stream_cost(
        &mut self,
        res: &mut Results,
        dram: bool,
        static_w: f64,
        l2_pj: f64,
    ) -> Result<f64, CalibError> {
        let gpu = self.gpu;
        let l2 = gpu.props().l2_bytes;
        let (kname, fp) = if dram {
            ("energy_dram", dram_footprint(l2))
        } else {
            ("energy_l2", l2_footprint(l2))
        };
        let (free, _) = gpu.mem_info()?;
        if fp as f64 > 0.8 * free as f64 {
            return Err(CalibError::Measurement(format!(
                "not enough free GPU memory for {kname} ({} needed, {} free)",
                fmt_bytes(fp),
                fmt_bytes(free as u64)
            )));
        }
        let buf = self.alloc_u32(fp)?;
        self.fill("energy_load", &buf)?;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let k = self.kernel("energy_load", kname)?;
        let blocks = self.blocks_for(&k, LD_THREADS)?;
        let dims = LaunchDims::linear(blocks, LD_THREADS);
        let threads = u64::from(blocks) * u64::from(LD_THREADS);
        let n_vec = fp / 16;
        let n_vec32 = u32::try_from(n_vec)
            .map_err(|_| CalibError::Measurement(format!("{kname}: {fp} bytes is too large")))?;
        let run = |passes: u32| {
            gpu.launch(
                &k,
                dims,
                KernelArgs::new()
                    .buf(&buf)
                    .u32(n_vec32)
                    .u32(passes)
                    .buf(&sink),
            )
        };
        let (passes, ms_one) = size_load(gpu, &run, if dram { 1 } else { 4 }, 1 << 20)?;
        let launch = || run(passes);
        let cost = Cost {
            name: if dram {
                r::ENERGY_DRAM_PJ_PER_BYTE
            } else {
                r::ENERGY_L2_PJ_PER_BYTE
            },
            unit: "pJ/B",
            op: "byte",
            ops_per_launch: stream_bytes_per_launch(threads, n_vec, passes),
            static_w,
            beyond_l2: dram.then_some(l2_pj),
            launch: &launch,
            ms_one,
        };
        let (mut m, seen) = self.dynamic_cost(&cost)?;
        if dram {
            let path = path_pj(&seen, static_w, cost.ops_per_launch);
            m = m
                .with("l2_pj_per_byte_subtracted", l2_pj)
                .with("dram_path_pj_per_byte", json!(path))
                .with("where", "each pass reads the whole buffer of >= 8 x L2: misses")
                .with(
                    "method",
                    "(P_window - energy_static_w) / (bytes per launch / ms per launch) - energy_l2_pj_per_byte",
                );
        } else {
            m = m.with("where", "a buffer of ~L2/4 read again and again: hits");
        }
        let median = m.median();
        res.metrics.push(
            m.with("kernel", kname)
                .with(
                    "instruction",
                    "ld.global.cg.v4.u32 (L2, not L1), 4 in flight per thread",
                )
                .with("footprint_bytes", fp)
                .with("grid", json!([blocks, LD_THREADS]))
                .with("passes_per_launch", passes),
        );
        Ok(median)
    }

    /// Sample a dynamic cost: every window's (P - static) / rate (less the L2 cost, for
    /// DRAM).
    /// One mma.sync load's dynamic pJ per FLOP (`energy_mma` or `energy_mma_tf32`), every
    /// SM full of warps, operands `words` (two sets, [`two_operand_sets`]).
    fn mma_cost(
        &mut self,
        res: &mut Results,
        load: MmaLoad,
        words: &[u32],
        static_w: f64,
    ) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let mma = self.kernel("energy_load", load.kernel())?;
        let operands = gpu.upload(words)?;
        let fout = gpu.alloc_zeros::<f32>(1024)?;
        let mma_blocks = self.blocks_for(&mma, MMA_THREADS)?;
        let mma_dims = LaunchDims::linear(mma_blocks, MMA_THREADS);
        let mma_warps = u64::from(mma_blocks) * u64::from(MMA_THREADS / 32);
        let mma_n = |iters: u32| {
            gpu.launch(
                &mma,
                mma_dims,
                KernelArgs::new().buf(&operands).u32(iters).buf(&fout),
            )
        };
        let (iters, ms_one) = size_load(gpu, &mma_n, 256, 1 << 24)?;
        let launch = || mma_n(iters);
        let cost = Cost {
            name: load.metric(),
            unit: "pJ/FLOP",
            op: "FLOP",
            ops_per_launch: load.flop_per_launch(mma_warps, iters),
            static_w,
            beyond_l2: None,
            launch: &launch,
            ms_one,
        };
        let (m, _) = self.dynamic_cost(&cost)?;
        res.metrics.push(
            m.with("kernel", load.kernel())
                .with("instruction", load.instruction())
                .with("grid", json!([mma_blocks, MMA_THREADS]))
                .with("chains_per_warp", MMA_ILP)
                .with("iters_per_launch", iters)
                .with("operands", load.operands()),
        );
        Ok(())
    }

    fn dynamic_cost(&mut self, c: &Cost<'_>) -> Result<(Metric, Vec<Window>), CalibError> {
        let reps = batch_reps(c.ms_one, BATCH_MS, MAX_REPS);
        let (ops, static_w, l2, name) = (c.ops_per_launch, c.static_w, c.beyond_l2, c.name);
        let value = |w: &Window| {
            pj_per_op(w.s.avg_w, static_w, ops, w.s.ms_per_launch)
                .map(|pj| l2.map_or(pj, |l2| dram_beyond_l2(pj, l2)))
                .ok_or_else(|| {
                    CalibError::Measurement(format!(
                        "{name}: no rate ({ops} {} per launch in {} ms)",
                        c.op, w.s.ms_per_launch
                    ))
                })
        };
        let (m, seen) = self.energy_windows(c.name, c.unit, Some(c.launch), reps, &value)?;
        let rate = median_of(
            seen.iter()
                .filter_map(|w| ops_per_s(ops, w.s.ms_per_launch)),
        );
        let dynamic_w = median_of(seen.iter().map(|w| w.s.avg_w - static_w));
        let m = with_windows(m, &seen)
            .with("op", c.op)
            .with("ops_per_launch", ops)
            .with("ops_per_s", json!(rate))
            .with("static_w", static_w)
            .with("dynamic_w", json!(dynamic_w))
            .with("ms_per_launch_single", c.ms_one)
            .with("reps_per_batch", reps);
        let m = m.with(
            "method",
            "(P_window - energy_static_w) / (ops per launch / ms per launch); P from NVML's energy counter, ms from CUDA events",
        );
        Ok((m, seen))
    }

    /// The stability loop over counter windows of one load; the windows of the measured
    /// samples (not the warm-up) come back beside the metric.
    fn energy_windows(
        &mut self,
        name: &str,
        unit: &str,
        load: Option<Launch<'_>>,
        reps: u32,
        value: &dyn Fn(&Window) -> Result<f64, CalibError>,
    ) -> Result<(Metric, Vec<Window>), CalibError> {
        let gpu = self.gpu;
        let policy = energy_policy(self.cfg.policy, name);
        let window_s = self.cfg.energy_window_s;
        let mut seen: Vec<Window> = Vec::new();
        let m = {
            let seen = &mut seen;
            self.sampled(name, unit, policy, |_| {
                let w = window(gpu, load, reps, window_s)?;
                let v = value(&w)?;
                seen.push(w);
                Ok(v)
            })?
        };
        let n = m.sampled.samples.len().min(seen.len());
        let seen = seen.split_off(seen.len() - n);
        let m = m
            .with("max_cov", policy.max_cov)
            .with("window_s_min", window_s)
            .with("batch_ms", BATCH_MS);
        Ok((m, seen))
    }

    /// NVML's enforced power limit, read once per sample (skipped where NVML has none).
    fn power_limit(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        match gpu.power_limit_w() {
            Err(e) => res.skipped.push(Skip {
                what: r::POWER_LIMIT_W.into(),
                why: format!("NVML's enforced power limit cannot be read: {e}"),
            }),
            Ok(w) => {
                res.observed.insert("nvml_power_limit_w".into(), json!(w));
                let policy = Policy {
                    warmup: 0,
                    ..self.cfg.policy
                };
                let m =
                    self.sampled(r::POWER_LIMIT_W, "W", policy, |_| Ok(gpu.power_limit_w()?))?;
                res.metrics.push(m.with(
                    "source",
                    "nvmlDeviceGetEnforcedPowerLimit (milliwatts), read once per sample; never set",
                ));
            }
        }
        Ok(())
    }
}

/// A metric with its windows' medians: power, window, launches, busy fraction, SM clock.
fn with_windows(m: Metric, seen: &[Window]) -> Metric {
    let med = |f: &dyn Fn(&Window) -> f64| json!(median_of(seen.iter().map(f)));
    let mhz: Vec<f64> = seen.iter().filter_map(|w| w.sm_mhz).collect();
    let range = |v: &[f64]| -> Value {
        if v.is_empty() {
            Value::Null
        } else {
            json!([
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            ])
        }
    };
    let watts: Vec<f64> = seen.iter().map(|w| w.s.avg_w).collect();
    m.with("avg_w", med(&|w| w.s.avg_w))
        .with("avg_w_samples", json!(watts))
        .with("window_s", med(&|w| w.s.window_s))
        .with("launches_per_window", med(&|w| w.s.launches as f64))
        .with("ms_per_launch", med(&|w| w.s.ms_per_launch))
        .with("busy", med(&|w| w.s.busy))
        .with("nvml_sm_mhz", json!(median_of(mhz.iter().copied())))
        .with("nvml_sm_mhz_range", range(&mhz))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn picojoules_from_watts_and_rates() {
        // 600 W against 100 W static at 500 TFLOP/s: 500 W / 5e14 FLOP/s = 1 pJ/FLOP;
        // 5e11 FLOP per launch in 1 ms is that rate
        assert_eq!(ops_per_s(5e11, 1.0), Some(5e14));
        let pj = pj_per_op(600.0, 100.0, 5e11, 1.0).unwrap();
        assert!((pj - 1.0).abs() < 1e-12, "{pj}");
        // 300 W above static at 3 TB/s: 100 pJ/B
        let pj = pj_per_op(420.0, 120.0, 6e9, 2.0).unwrap();
        assert!((pj - 100.0).abs() < 1e-9, "{pj}");
        // below the static power: negative, not hidden
        assert!(pj_per_op(90.0, 100.0, 1e9, 1.0).unwrap() < 0.0);
        // no rate, no figure
        assert_eq!(pj_per_op(600.0, 100.0, 5e11, 0.0), None);
        assert_eq!(pj_per_op(600.0, 100.0, 0.0, 1.0), None);
        assert_eq!(pj_per_op(600.0, 100.0, 1.0, f64::NAN), None);
    }

    #[test]
    fn dram_is_charged_beyond_the_l2_hit() {
        // the whole DRAM path 70 pJ/B, an L2 hit 30: 40 beyond L2; a model adding both for
        // a DRAM byte gets the path back
        assert_eq!(dram_beyond_l2(70.0, 30.0), 40.0);
        assert_eq!(dram_beyond_l2(70.0, 30.0) + 30.0, 70.0);
    }

    #[test]
    fn operations_per_launch() {
        // 132 SMs x 8 blocks x 8 warps, 1000 rounds of 2 chains of 4096 FLOP
        let warps = 132 * 8 * 8;
        assert_eq!(
            mma_flop_per_launch(warps, 1000),
            8448.0 * 1000.0 * 2.0 * 4096.0
        );
        // 4 blocks of 16 warps per SM, 100 rounds of 8 x 512 bytes
        assert_eq!(smem_bytes_per_launch(64, 100), 64.0 * 100.0 * 4096.0);
        // 1024 threads x 4 loads cover 4096 vectors a step: 2^20 vectors = 256 steps,
        // 3 passes = 3 x 16 MiB
        assert_eq!(
            stream_bytes_per_launch(1024, 1 << 20, 3),
            3.0 * 16.0 * 1048576.0
        );
        // a last partial step is read whole (the loads wrap)
        assert_eq!(stream_bytes_per_launch(1000, 4001, 1), 2.0 * 4000.0 * 16.0);
        // 2 ms at 1980 MHz
        assert_eq!(spin_cycles(2.0, 1980.0), 3_960_000);
        assert_eq!(spin_cycles(0.0, 1980.0), 1);
    }

    #[test]
    fn launches_are_sized_to_the_target() {
        // 256 rounds took 0.1 ms: 2 ms needs 5120
        assert_eq!(scaled_count(256, 0.1, 2.0, 1 << 24), 5120);
        // capped, and never below a quarter of the probe
        assert_eq!(scaled_count(256, 0.001, 2.0, 1000), 1000);
        assert_eq!(scaled_count(256, 100.0, 2.0, 1 << 24), 64);
        assert_eq!(scaled_count(1, 100.0, 2.0, 10), 1);
        assert_eq!(scaled_count(8, 0.0, 2.0, 100), 8);
    }

    #[test]
    fn footprints_hit_l2_and_miss_it() {
        // H100 (50 MiB) and H200 (60 MiB): 16 MiB, the plateau of the L2 sweep; A100: 8
        for (l2, want) in [(50u64, 16u64), (60, 16), (40, 8), (126, 32), (6, 2), (1, 1)] {
            let fp = l2_footprint(l2 * MIB);
            assert_eq!(fp, want * MIB, "L2 {l2} MiB");
            assert!(fp.is_power_of_two());
            assert!(fp as f64 <= 0.36 * (l2 * MIB) as f64 || l2 < 4, "{l2}");
        }
        assert_eq!(dram_footprint(50 * MIB), 512 * MIB);
        assert_eq!(dram_footprint(60 * MIB), 512 * MIB);
        assert_eq!(dram_footprint(6 * MIB), 256 * MIB);
        for l2 in [40u64, 50, 60, 126] {
            assert!(dram_footprint(l2 * MIB) >= 8 * l2 * MIB);
        }
    }

    #[test]
    fn the_energy_policy_keeps_three_samples_and_the_looser_limit() {
        let base = Policy {
            warmup: 2,
            min_samples: 2,
            max_cov: 0.01,
            max_samples: 2,
        };
        let p = energy_policy(base, r::ENERGY_MMA_PJ_PER_FLOP);
        assert_eq!(p.min_samples, 3);
        assert_eq!(p.max_samples, 3);
        assert_eq!(p.max_cov, 0.05);
        assert_eq!(p.warmup, 2);
        let p = energy_policy(
            Policy {
                min_samples: 7,
                max_samples: 30,
                ..base
            },
            r::ENERGY_STATIC_W,
        );
        assert_eq!((p.min_samples, p.max_samples), (7, 30));
    }

    #[test]
    fn operand_layout() {
        let one: Vec<u32> = (0..12).collect();
        let two: Vec<u32> = (100..112).collect();
        let v = two_operand_sets(&one, &two);
        assert_eq!(&v[..12], &[0, 1, 2, 3, 4, 5, 100, 101, 102, 103, 104, 105]);
        assert_eq!(
            &v[12..],
            &[6, 7, 8, 9, 10, 11, 106, 107, 108, 109, 110, 111]
        );
    }

    #[test]
    fn a_missing_or_still_counter_is_a_reason_to_skip() {
        struct Fixed(Option<u64>);
        impl EnergyCounter for Fixed {
            fn read_mj(&mut self) -> Option<u64> {
                self.0
            }
        }
        let t = Cell::new(0.0);
        let mut wait = || t.set(t.get() + 0.01);
        let mut now = || t.get();
        let why = counter_moves(&mut Fixed(None), &mut wait, &mut now, 2.0).unwrap_err();
        assert!(why.contains("cannot be read"), "{why}");
        let why = counter_moves(&mut Fixed(Some(7)), &mut wait, &mut now, 2.0).unwrap_err();
        assert!(why.contains("did not move in 2 s"), "{why}");
        // a counter that ticks after a while is fine
        struct Ticks(u64);
        impl EnergyCounter for Ticks {
            fn read_mj(&mut self) -> Option<u64> {
                self.0 += 1;
                Some(self.0 / 5)
            }
        }
        assert_eq!(
            counter_moves(&mut Ticks(0), &mut wait, &mut now, 2.0),
            Ok(())
        );
    }
}
