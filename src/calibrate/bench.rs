//! The GPU drivers of the microbenchmarks in `csrc/` (one function per file), each metric
//! sampled through the stability loop. Sizes are read from the device (L2, SM count, free
//! memory), never assumed. Bandwidth samples are timed with CUDA events around one launch;
//! latencies and the clock are read from the kernels' own clock64 / %globaltimer records.

use std::collections::BTreeMap;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

#[path = "bench_energy.rs"]
pub mod energy;
#[path = "bench_tc.rs"]
pub mod tc;
#[path = "bench_tma.rs"]
pub mod tma;

use super::fit::{fit_dram_bw_coeff, plateau};
use super::results::{self as r, Metric, Results, Skip};
use super::stability::{sample, Policy};
use super::CalibError;
use crate::gpu::{DeviceBuffer, Gpu, Kernel, KernelArgs, LaunchDims, Module, ModuleSpec};
use crate::hw::schema::Curve;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Which microbenchmarks to run (`--only`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Bench {
    /// SM clock under load (csrc/sm_clock.cu).
    Clock,
    /// L2 bandwidth footprint sweep (csrc/l2_bw.cu).
    L2,
    /// DRAM read / copy / triad (csrc/dram_bw.cu).
    Dram,
    /// DRAM bandwidth vs active SMs, dram_bw_coeff (csrc/dram_bw.cu).
    DramSms,
    /// L2 bandwidth vs active SMs, the exponent of the model's L2 share law
    /// (csrc/l2_bw.cu). Not in the default run.
    L2Sms,
    /// L2 bandwidth vs the length of the rows read (32-256 B segments a pitch apart, as a
    /// tile of short K rows reads), the model's L2 row efficiencies (csrc/l2_bw.cu). Not in
    /// the default run.
    L2Rows,
    /// DRAM bandwidth vs the length of the rows read, bands of rows walked along K as a
    /// tile streams its operands from DRAM (csrc/dram_bw.cu). Not in the default run.
    DramRows,
    /// Pointer-chase latencies (csrc/pointer_chase.cu).
    Latency,
    /// The L2 and DRAM chases while every other SM streams memory (csrc/pointer_chase.cu).
    /// Not in the default run.
    LatencyLoaded,
    /// mma.sync latency and throughput (csrc/mma_latency.cu).
    Mma,
    /// Shared-memory read bandwidth, ld.shared.v4 and ldmatrix.x4 (csrc/smem_bw.cu).
    SmemBw,
    /// bar.sync cycles for 128/256/384 threads and the kernel launch cost (csrc/sync_cost.cu).
    SyncCost,
    /// Synthetic GEMM K-loop iteration cost vs warps and stages (csrc/kloop_cost.cu).
    KloopCost,
    /// Tensor-core throughput per SM: mma.sync against warps, and wgmma against N on
    /// compute capability 9.0 (csrc/tc_rate.cu, csrc/tc_wgmma.cu). Not in the default run.
    TcRate,
    /// TMA load latency and throughput from L2 and DRAM, compute capability 9.0
    /// (csrc/tma_load.cu). Not in the default run.
    Tma,
    /// Where the block scheduler places the blocks of one-block-per-SM launches of every
    /// size, and which SMs share a GPC (thread-block clusters, compute capability 9.0)
    /// (csrc/sm_topology.cu). Not in the default run.
    Topology,
    /// Energy per FLOP and per byte: idle and static power, dynamic pJ per tensor-core
    /// FLOP and per byte from shared memory, L2 and DRAM, from NVML's energy counter, and
    /// the enforced power limit (csrc/energy_load.cu); on compute capability 9.0 also per
    /// wgmma FLOP and per TMA byte from L2 and DRAM (csrc/tc_wgmma.cu, csrc/tma_load.cu).
    /// Not in the default run.
    Energy,
}

impl Bench {
    /// All benchmarks, in run order.
    pub const ALL: [Bench; 17] = [
        Bench::Clock,
        Bench::Mma,
        Bench::SmemBw,
        Bench::SyncCost,
        Bench::KloopCost,
        Bench::Latency,
        Bench::LatencyLoaded,
        Bench::L2,
        Bench::Dram,
        Bench::DramSms,
        Bench::L2Sms,
        Bench::L2Rows,
        Bench::DramRows,
        Bench::TcRate,
        Bench::Tma,
        Bench::Topology,
        Bench::Energy,
    ];

    /// What a run without `--only` measures: the benchmarks of the five model parameters.
    /// The on-chip cost benchmarks (smem-bw, sync-cost, kloop-cost), `tc-rate` and `tma`
    /// measure no parameter of the model yet (issue 14 will give them one) and have not run
    /// on a GPU: they are opt-in through `--only` until a GPU run has confirmed their wall
    /// time and CoV (an mbarrier wait of `tma` that never completed would hang the whole
    /// calibration; docs/calibrate.md). `energy` is opt-in for good: its windows of NVML's
    /// energy counter take ~30 s (~40 s on compute capability 9.0), ten times the default
    /// run.
    pub const DEFAULT: [Bench; 6] = [
        Bench::Clock,
        Bench::Mma,
        Bench::Latency,
        Bench::L2,
        Bench::Dram,
        Bench::DramSms,
    ];
}

/// How the drivers run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BenchConfig {
    pub policy: Policy,
    pub quick: bool,
    pub seed: u64,
    /// Shortest window of NVML's energy counter per energy sample, seconds (`--energy-s`).
    pub energy_window_s: f64,
}

/// Runs the drivers on one GPU, appending to a `Results`.
pub struct Runner<'g> {
    pub(super) gpu: &'g Gpu,
    pub(super) cfg: BenchConfig,
    pub(super) rng: StdRng,
    bar: ProgressBar,
    modules: BTreeMap<&'static str, Module>,
    nvml_sm_mhz: Vec<u32>,
    nvml_mem_mhz: Vec<u32>,
    reasons: std::collections::BTreeSet<String>,
    temps: Vec<u32>,
    power: Vec<f64>,
}

/// Launch `chase_build` (csrc/pointer_chase.cu) over `chain`: one cycle through its
/// 2^bits_total lines, visited in groups of 2^bits_local, a fresh permutation from `rng`.
/// Back-to-back launches per sample of the SM-limited bandwidths, each with its own zeroed
/// work counter.
pub const SMS_LAUNCHES: usize = 4;

pub(super) fn build_chain(
    gpu: &Gpu,
    build: &Kernel,
    chain: &DeviceBuffer<u32>,
    bits: (u32, u32),
    rng: &mut StdRng,
) -> Result<(), CalibError> {
    let keys: [u32; 3] = [rng.random(), rng.random(), rng.random()];
    gpu.launch(
        build,
        LaunchDims::linear(gpu.props().sm_count * 4, 256),
        KernelArgs::new()
            .buf(chain)
            .u32(bits.0)
            .u32(bits.1)
            .u32(keys[0])
            .u32(keys[1])
            .u32(keys[2]),
    )?;
    Ok(())
}

/// Independent 16-byte loads per thread and step of the L2 kernels (`L2_UNROLL` in
/// csrc/l2_bw.cu).
pub(super) const L2_UNROLL: u64 = 4;

/// Bytes one pass of `origami_stream_xor` (csrc/common.cuh: `l2_read`, `l2_read_rows`,
/// `energy_l2`, `energy_dram`) asks for: the steps that cover `n_vec` 16-byte vectors x
/// `threads` x `unroll` loads x 16 bytes (the wrapped loads of the last step counted: they
/// are real loads). The cp.async variant `l2_cp_rows` steps the same way.
pub(super) fn stream_pass_bytes(threads: u64, unroll: u64, n_vec: u64) -> u64 {
    let per_step = (threads * unroll).max(1);
    n_vec.div_ceil(per_step) * per_step * 16
}

pub(super) fn pow2_floor(x: u64) -> u64 {
    if x == 0 {
        0
    } else {
        1u64 << (63 - x.leading_zeros())
    }
}

/// Dynamic shared memory for one block per SM: more than half of the per-block opt-in
/// limit (an SM has that limit plus 1 KiB reserved per block, so two such blocks never
/// fit), rounded to 1 KiB, at least `min_bytes`; `None` when `min_bytes` is above the limit.
pub fn exclusive_smem_bytes(optin_bytes: u64, min_bytes: u32) -> Option<u32> {
    let optin = u32::try_from(optin_bytes).ok()?;
    let half = (optin / 2 + 1024).next_multiple_of(1024).min(optin);
    let b = half.max(min_bytes);
    (b <= optin).then_some(b)
}

fn fmt_bytes(b: u64) -> String {
    if b >= GIB && b % GIB == 0 {
        format!("{} GiB", b / GIB)
    } else if b >= MIB {
        format!("{:.1} MiB", b as f64 / MIB as f64)
    } else {
        format!("{} KiB", b / 1024)
    }
}

impl<'g> Runner<'g> {
    /// A runner with a progress bar of `steps` metrics (hidden when stderr is no terminal).
    pub fn new(gpu: &'g Gpu, cfg: BenchConfig, steps: u64) -> Self {
        let bar = ProgressBar::new(steps);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Self {
            gpu,
            cfg,
            rng: StdRng::seed_from_u64(cfg.seed),
            bar,
            modules: BTreeMap::new(),
            nvml_sm_mhz: Vec::new(),
            nvml_mem_mhz: Vec::new(),
            reasons: Default::default(),
            temps: Vec::new(),
            power: Vec::new(),
        }
    }

    /// Finish the progress bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// Take an NVML reading (kept for the provenance); silently nothing without NVML.
    pub fn observe_nvml(&mut self) {
        if let Ok(s) = self.gpu.nvml_sample() {
            self.nvml_sm_mhz.extend(s.sm_mhz);
            self.nvml_mem_mhz.extend(s.mem_mhz);
            self.temps.extend(s.temperature_c);
            self.power.extend(s.power_w);
            self.reasons.extend(s.throttle_reasons);
        }
    }

    /// Record what NVML saw and which modules were used into `res.observed`.
    pub fn record_observations(&self, res: &mut Results) {
        let mm = |v: &[u32]| -> Value {
            if v.is_empty() {
                Value::Null
            } else {
                json!({"min": v.iter().min(), "max": v.iter().max(), "n": v.len()})
            }
        };
        let o = &mut res.observed;
        o.insert("nvml_sm_clock_mhz".into(), mm(&self.nvml_sm_mhz));
        o.insert("nvml_mem_clock_mhz".into(), mm(&self.nvml_mem_mhz));
        o.insert("nvml_temperature_c".into(), mm(&self.temps));
        if !self.power.is_empty() {
            let max = self.power.iter().cloned().fold(f64::MIN, f64::max);
            o.insert("nvml_power_w_max".into(), json!(max));
        }
        o.insert("throttle_reasons_seen".into(), json!(self.reasons));
        let mods: BTreeMap<&str, Value> = self
            .modules
            .iter()
            .map(|(k, m)| (*k, serde_json::to_value(m.origin()).unwrap_or(Value::Null)))
            .collect();
        o.insert("modules".into(), json!(mods));
        o.insert("seed".into(), json!(self.cfg.seed));
        o.insert("quick".into(), json!(self.cfg.quick));
    }

    fn module(&mut self, stem: &'static str) -> Result<&Module, CalibError> {
        if !self.modules.contains_key(stem) {
            let m = self.gpu.load_module(&ModuleSpec::embedded(stem))?;
            self.modules.insert(stem, m);
        }
        Ok(&self.modules[stem])
    }

    pub(super) fn kernel(&mut self, stem: &'static str, name: &str) -> Result<Kernel, CalibError> {
        Ok(self.module(stem)?.kernel(name)?)
    }

    /// A kernel of an sm_90a-only microbenchmark: the cubin nvcc built for sm_90a, else
    /// NVRTC for sm_90a (the Hopper GEMM's target; wgmma exists nowhere else).
    fn kernel_sm90a(&mut self, stem: &'static str, name: &str) -> Result<Kernel, CalibError> {
        if !self.modules.contains_key(stem) {
            let m = self
                .gpu
                .load_module(&ModuleSpec::embedded(stem).target("sm_90a"))?;
            self.modules.insert(stem, m);
        }
        Ok(self.modules[stem].kernel(name)?)
    }

    /// Dynamic shared memory that leaves room for one block per SM only (more than half
    /// of what a block may opt in to, at least `min_bytes`), with the kernel's limit raised
    /// to it. Returns (bytes, blocks of `threads` that fit on an SM: 1 unless the GPU
    /// defies the arithmetic, recorded by the callers).
    fn exclusive_smem(
        &self,
        k: &Kernel,
        threads: u32,
        min_bytes: u32,
    ) -> Result<(u32, u32), CalibError> {
        let bytes = exclusive_smem_bytes(self.gpu.props().smem_per_block_optin_bytes, min_bytes)
            .ok_or_else(|| {
                CalibError::Measurement(format!(
                    "'{}' needs {min_bytes} bytes of shared memory, more than a block may have",
                    k.name()
                ))
            })?;
        k.set_max_dynamic_smem(bytes)?;
        let fit = k.max_active_blocks_per_sm(threads, bytes as usize)?;
        Ok((bytes, fit))
    }

    /// The %smid values present, ascending (they need not be 0..sm_count-1).
    pub(super) fn smids(&mut self) -> Result<Vec<u32>, CalibError> {
        let gpu = self.gpu;
        let sms = gpu.props().sm_count;
        let map = self.kernel("dram_bw", "smid_map")?;
        let mask = gpu.alloc_zeros::<u32>(64)?;
        gpu.launch(
            &map,
            LaunchDims::linear(sms * 16, 32),
            KernelArgs::new().buf(&mask),
        )?;
        let bits = gpu.download(&mask)?;
        Ok((0..64 * 32u32)
            .filter(|&i| bits[(i / 32) as usize] & (1 << (i % 32)) != 0)
            .collect())
    }

    /// The lowest %smid present (the SM the latency benchmarks pin their chains to).
    pub(super) fn lowest_smid(&mut self) -> Result<u32, CalibError> {
        self.smids()?
            .first()
            .copied()
            .ok_or_else(|| CalibError::Measurement("no %smid seen".into()))
    }

    pub(super) fn sampled(
        &mut self,
        name: &str,
        unit: &str,
        policy: Policy,
        f: impl FnMut(usize) -> Result<f64, CalibError>,
    ) -> Result<Metric, CalibError> {
        self.bar.set_message(name.to_string());
        let s = sample(&policy, f)?;
        self.bar.inc(1);
        if !s.stable {
            self.bar.suspend(|| {
                eprintln!(
                    "warning: {name} did not reach CoV <= {:.2}% after {} samples (CoV {:.2}%)",
                    100.0 * policy.max_cov,
                    s.summary.n,
                    100.0 * s.summary.cov
                )
            });
        }
        Ok(Metric::new(name, unit, s))
    }

    /// One SM-limited bandwidth metric (`dram-sms`, `l2-sms`): per sample, [`SMS_LAUNCHES`]
    /// launches of `launch(sample, j, counter_j, sm_mask)` timed together, `bytes` over
    /// their time in GB/s; the SM mask the kernels mark must count `k` SMs (else the
    /// metric fails, naming `what`).
    pub(super) fn sampled_on_sms(
        &mut self,
        name: &str,
        k: u32,
        what: &str,
        bytes: f64,
        launch: impl Fn(
            usize,
            usize,
            &DeviceBuffer<u32>,
            &DeviceBuffer<u32>,
        ) -> Result<(), crate::gpu::GpuError>,
    ) -> Result<Metric, CalibError> {
        let gpu = self.gpu;
        let mut counters = gpu.alloc_zeros::<u32>(SMS_LAUNCHES)?;
        let mut mask = gpu.alloc_zeros::<u32>(64)?;
        let mut seen_bad: Option<u32> = None;
        let policy = self.cfg.policy;
        let m = {
            let (counters, mask, seen_bad) = (&mut counters, &mut mask, &mut seen_bad);
            self.sampled(name, "GB/s", policy, |i| {
                gpu.zero(counters)?;
                gpu.zero(mask)?;
                let (ctr, msk) = (&*counters, &*mask);
                let ms = gpu.time_ms(|| {
                    for j in 0..SMS_LAUNCHES {
                        launch(i, j, ctr, msk)?;
                    }
                    Ok(())
                })?;
                let bits = gpu.download(msk)?;
                let active: u32 = bits.iter().map(|w| w.count_ones()).sum();
                if active != k {
                    *seen_bad = Some(active);
                }
                Ok(bytes / (ms * 1e-3) / 1e9)
            })?
        };
        if let Some(active) = seen_bad {
            return Err(CalibError::Measurement(format!(
                "SM-limited {what} read meant for {k} SMs ran on {active}"
            )));
        }
        Ok(m.with("launches_per_sample", SMS_LAUNCHES))
    }

    pub(super) fn blocks_for(&self, k: &Kernel, threads: u32) -> Result<u32, CalibError> {
        let occ = k.max_active_blocks_per_sm(threads, 0)?.max(1);
        Ok(self.gpu.props().sm_count * occ)
    }

    pub(super) fn fill(
        &mut self,
        stem: &'static str,
        buf: &DeviceBuffer<u32>,
    ) -> Result<(), CalibError> {
        let k = self.kernel(stem, "origami_fill")?;
        let seed: u32 = self.rng.random();
        let sms = self.gpu.props().sm_count;
        self.gpu.launch(
            &k,
            LaunchDims::linear(sms * 8, 256),
            KernelArgs::new()
                .buf(buf)
                .u64((buf.len() / 4) as u64)
                .u32(seed),
        )?;
        Ok(())
    }

    pub(super) fn alloc_u32(&self, bytes: u64) -> Result<DeviceBuffer<u32>, CalibError> {
        Ok(self.gpu.alloc_zeros::<u32>((bytes / 4) as usize)?)
    }

    /// The in-kernel clock record [clk0, clk1, ns0, ns1] as MHz.
    fn rec_mhz(rec: &[u64]) -> Option<f64> {
        let dc = rec[1].wrapping_sub(rec[0]) as f64;
        let dt = rec[3].wrapping_sub(rec[2]) as f64;
        (dt > 0.0 && dc > 0.0).then(|| dc / dt * 1e3)
    }

    /// 32 x 6 words of random fp32 values in (-1, 1) (tf32 mma.sync fragments per lane).
    pub(super) fn random_f32_words(&mut self) -> Vec<u32> {
        (0..32 * 6)
            .map(|_| self.rng.random_range(-1.0f32..1.0).to_bits())
            .collect()
    }

    /// 32 x 6 words of random fp16 pairs in (-1, 1) (mma.sync A and B fragments per lane).
    fn random_f16_words(&mut self) -> Vec<u32> {
        let h = |x: f32| u32::from(half::f16::from_f32(x).to_bits());
        (0..32 * 6)
            .map(|_| {
                h(self.rng.random_range(-1.0..1.0)) | (h(self.rng.random_range(-1.0..1.0)) << 16)
            })
            .collect()
    }

    // ---------------------------------------------------------------------------------
    /// csrc/sm_clock.cu: clock64 against %globaltimer on every SM, with NVML alongside.
    pub fn clock(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let k = self.kernel("sm_clock", "sm_clock_load")?;
        let sms = self.gpu.props().sm_count;
        let blocks = sms * 2;
        let rec = self.gpu.alloc_zeros::<u64>(blocks as usize * 4)?;
        let sink = self.gpu.alloc_zeros::<f32>(256)?;
        let dims = LaunchDims::linear(blocks, 256);
        let gpu = self.gpu;
        let launch = |iters: u32| {
            gpu.launch(
                &k,
                dims,
                KernelArgs::new().u32(iters).f32(1.0).buf(&sink).buf(&rec),
            )
        };
        // Size the kernel to ~25 ms (10 ms with --quick) from a short probe.
        let probe_iters = 1u32 << 14;
        launch(probe_iters)?;
        let ms = gpu.time_ms(|| launch(probe_iters))?;
        let target_ms = if self.cfg.quick { 10.0 } else { 25.0 };
        let iters = ((f64::from(probe_iters) * target_ms / ms.max(1e-3)) as u64)
            .clamp(1 << 14, 1 << 30) as u32;
        let mut nvml_during: Vec<u32> = Vec::new();
        let mut nvml_max: Vec<u32> = Vec::new();
        let mut spread: Vec<f64> = Vec::new();
        let policy = self.cfg.policy;
        let m = {
            let nvml = &mut nvml_during;
            let nvml_max = &mut nvml_max;
            let spread = &mut spread;
            self.sampled(r::SM_CLOCK, "MHz", policy, |_| {
                launch(iters)?;
                std::thread::sleep(Duration::from_secs_f64(target_ms * 0.5e-3));
                if let Ok(s) = gpu.nvml_sample() {
                    nvml.extend(s.sm_mhz);
                    nvml_max.extend(s.max_sm_mhz);
                }
                let v = gpu.download(&rec)?;
                let mut per_block: Vec<f64> = v.chunks_exact(4).filter_map(Self::rec_mhz).collect();
                if per_block.len() != blocks as usize {
                    return Err(CalibError::Measurement(format!(
                        "sm_clock: {} of {blocks} blocks reported a clock",
                        per_block.len()
                    )));
                }
                per_block.sort_by(f64::total_cmp);
                spread.push((per_block[per_block.len() - 1] - per_block[0]) / per_block[0]);
                Ok(crate::stats::median(&per_block))
            })?
        };
        let nvml_med = (!nvml_during.is_empty()).then(|| {
            let v: Vec<f64> = nvml_during.iter().map(|&x| f64::from(x)).collect();
            crate::stats::median(&v)
        });
        // the highest clock the GPU allows: NVML's, else the driver's; the calibration
        // never uses a reading above it (`r::sm_clock_used`)
        let max_mhz = nvml_max
            .iter()
            .max()
            .map(|&x| f64::from(x))
            .unwrap_or(self.gpu.props().sm_clock_mhz);
        if m.median() > max_mhz {
            eprintln!(
                "origami-calibrate: the SM clock read {:.0} MHz, above the GPU's maximum {max_mhz:.0} MHz: the calibration uses {max_mhz:.0}",
                m.median()
            );
        }
        res.metrics.push(
            m.with(
                "method",
                "clock64 cycles / %globaltimer ns per block, median over blocks",
            )
            .with(r::SM_CLOCK_MAX, max_mhz)
            .with("blocks", blocks)
            .with("iters", iters)
            .with("nvml_sm_mhz_during", json!(nvml_during))
            .with("nvml_sm_mhz_median", json!(nvml_med))
            .with(
                "max_block_spread",
                json!(spread.iter().cloned().fold(0.0, f64::max)),
            ),
        );
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    /// csrc/l2_bw.cu: footprint sweep over powers of two from L2/16 to L2/2, all SMs,
    /// 16-byte ld.global.cg; the L2 bandwidth is the plateau at the largest footprint.
    pub fn l2(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let k = self.kernel("l2_bw", "l2_read")?;
        let threads = 512u32;
        let blocks = self.blocks_for(&k, threads)?;
        let nthreads = u64::from(blocks) * u64::from(threads);
        let l2 = self.gpu.props().l2_bytes;
        let top = pow2_floor(l2 / 2).max(256 * 1024);
        let mut fps = Vec::new();
        let mut f = pow2_floor(l2 / 16).clamp(128 * 1024, top);
        while f <= top {
            fps.push(f);
            f *= 2;
        }
        if self.cfg.quick && fps.len() > 2 {
            fps.drain(..fps.len() - 2);
        }
        let buf = self.alloc_u32(top)?;
        self.fill("l2_bw", &buf)?;
        let sink = self.gpu.alloc_zeros::<u32>(1024)?;
        let clk = self.gpu.alloc_zeros::<u64>(4)?;
        let dims = LaunchDims::linear(blocks, threads);
        let gpu = self.gpu;
        let mut points = Vec::new();
        for &fp in &fps {
            let n_vec = fp / 16;
            let bytes_per_pass = stream_pass_bytes(nthreads, L2_UNROLL, n_vec);
            let launch = |passes: u32| {
                gpu.launch(
                    &k,
                    dims,
                    KernelArgs::new()
                        .buf(&buf)
                        .u32(n_vec as u32)
                        .u32(passes)
                        .buf(&sink)
                        .buf(&clk),
                )
            };
            launch(2)?;
            let ms = gpu.time_ms(|| launch(8))? / 8.0;
            let passes = ((2.0 / ms.max(1e-4)) as u64).clamp(1, 1 << 20) as u32;
            let bytes = f64::from(passes) * bytes_per_pass as f64;
            let policy = self.cfg.policy;
            let name = r::l2_footprint_metric(fp);
            let m = self.sampled(&name, "GB/s", policy, |_| {
                let ms = gpu.time_ms(|| launch(passes))?;
                Ok(bytes / (ms * 1e-3) / 1e9)
            })?;
            let rec = gpu.download(&clk)?;
            let m = m
                .with("footprint_bytes", fp)
                .with("passes", passes)
                .with("bytes_per_launch", bytes)
                .with("grid", json!([blocks, threads]))
                .with("loads_in_flight_per_thread", 4)
                .with("sm_clock_during_mhz", json!(Self::rec_mhz(&rec)));
            points.push([fp as f64, m.median()]);
            res.metrics.push(m);
        }
        let pts: Vec<(f64, f64)> = points.iter().map(|p| (p[0], p[1])).collect();
        let pl = plateau(&pts)
            .ok_or_else(|| CalibError::Measurement("no L2 footprint measured".into()))?;
        let chosen = r::l2_footprint_metric(fps[pl.index]);
        let mut best = res.metric(&chosen).expect("measured above").clone();
        best.name = r::L2_READ.into();
        best = best
            .with("chosen", "largest footprint of the sweep (the plateau)")
            .with("plateau_spread", pl.spread);
        res.metrics.push(best);
        let mut fit = BTreeMap::new();
        fit.insert("plateau_gbps".into(), pl.value);
        fit.insert("plateau_spread".into(), pl.spread);
        res.curves.insert(
            r::L2_FOOTPRINT_CURVE.into(),
            Curve {
                x_name: "footprint_bytes".into(),
                y_name: "l2_read_gbps".into(),
                points,
                fit,
            },
        );
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    /// csrc/dram_bw.cu: read / copy / triad over arrays of at least 8x L2 (and 2 GiB), and
    /// the SM-limited read curve with its `min(1, c x SMs)` fit.
    pub fn dram(
        &mut self,
        res: &mut Results,
        plain: bool,
        sms_curve: bool,
    ) -> Result<(), CalibError> {
        let p = self.gpu.props().clone();
        let l2 = p.l2_bytes;
        let flush_bytes = (2 * l2).next_multiple_of(MIB);
        let mut arr = (8 * l2).max(2 * GIB).next_multiple_of(16 * MIB);
        let (free, _) = self.gpu.mem_info()?;
        let need = |a: u64| 3 * a + flush_bytes;
        if need(arr) as f64 > 0.8 * free as f64 {
            arr = (((0.8 * free as f64) as u64).saturating_sub(flush_bytes) / 3) / (16 * MIB)
                * (16 * MIB);
            if arr < 4 * l2 {
                return Err(CalibError::Measurement(format!(
                    "not enough free GPU memory for the DRAM benchmark ({} free, need 3 x {} )",
                    fmt_bytes(free as u64),
                    fmt_bytes(4 * l2)
                )));
            }
        }
        let a = self.alloc_u32(arr)?;
        let b = self.alloc_u32(arr)?;
        let c = self.alloc_u32(arr)?;
        let flush = self.alloc_u32(flush_bytes)?;
        for buf in [&a, &b, &c, &flush] {
            self.fill("dram_bw", buf)?;
        }
        let read = self.kernel("dram_bw", "dram_read")?;
        let threads = 512u32;
        let blocks = self.blocks_for(&read, threads)?;
        let dims = LaunchDims::linear(blocks, threads);
        let sink = self.gpu.alloc_zeros::<u32>(1024)?;
        let clk = self.gpu.alloc_zeros::<u64>(4)?;
        let n_vec = arr / 16;
        let gpu = self.gpu;
        let policy = self.cfg.policy;
        let flush_l2 = || {
            gpu.launch(
                &read,
                dims,
                KernelArgs::new()
                    .buf(&flush)
                    .u64(flush_bytes / 16)
                    .buf(&sink)
                    .buf(&clk),
            )
        };
        let arr_f = arr as f64;
        if plain {
            let copy = self.kernel("dram_bw", "dram_copy")?;
            let triad = self.kernel("dram_bw", "dram_triad")?;
            let m = self.sampled(r::DRAM_READ, "GB/s", policy, |_| {
                flush_l2()?;
                let ms = gpu.time_ms(|| {
                    gpu.launch(
                        &read,
                        dims,
                        KernelArgs::new().buf(&a).u64(n_vec).buf(&sink).buf(&clk),
                    )
                })?;
                Ok(arr_f / (ms * 1e-3) / 1e9)
            })?;
            let rec = gpu.download(&clk)?;
            res.metrics.push(
                m.with("array_bytes", arr)
                    .with("bytes_counted", "array read once")
                    .with("grid", json!([blocks, threads]))
                    .with("loads_in_flight_per_thread", 4)
                    .with("sm_clock_during_mhz", json!(Self::rec_mhz(&rec))),
            );
            let m = self.sampled(r::DRAM_COPY, "GB/s", policy, |_| {
                flush_l2()?;
                let ms = gpu.time_ms(|| {
                    gpu.launch(&copy, dims, KernelArgs::new().buf(&a).buf(&b).u64(n_vec))
                })?;
                Ok(2.0 * arr_f / (ms * 1e-3) / 1e9)
            })?;
            res.metrics.push(
                m.with("array_bytes", arr)
                    .with("bytes_counted", "read a + write b"),
            );
            let m = self.sampled(r::DRAM_TRIAD, "GB/s", policy, |_| {
                flush_l2()?;
                let ms = gpu.time_ms(|| {
                    gpu.launch(
                        &triad,
                        dims,
                        KernelArgs::new()
                            .buf(&a)
                            .buf(&b)
                            .buf(&c)
                            .f32(0.5)
                            .u64(n_vec),
                    )
                })?;
                Ok(3.0 * arr_f / (ms * 1e-3) / 1e9)
            })?;
            res.metrics.push(
                m.with("array_bytes", arr)
                    .with("bytes_counted", "read b, c + write a"),
            );
        }
        if sms_curve {
            self.dram_sms(res, &a, arr)?;
        }
        Ok(())
    }

    fn dram_sms(
        &mut self,
        res: &mut Results,
        a: &DeviceBuffer<u32>,
        arr: u64,
    ) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let sms = gpu.props().sm_count;
        // Which %smid values exist (they need not be 0..sm_count-1).
        let ids = self.smids()?;
        if ids.len() != sms as usize {
            res.observed.insert(
                "smid_note".into(),
                json!(format!(
                    "{} distinct %smid values seen for {sms} SMs",
                    ids.len()
                )),
            );
        }
        let k_fn = self.kernel("dram_bw", "dram_read_sms")?;
        let threads = 512u32;
        let blocks = self.blocks_for(&k_fn, threads)?;
        let dims = LaunchDims::linear(blocks, threads);
        let chunk_vec: u64 = u64::from(threads) * 4 * 8;
        let arr_vec = arr / 16 / chunk_vec * chunk_vec;
        let per_sm_vec = 64 * MIB / 16;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let n = ids.len() as u32;
        let ks: Vec<u32> = if self.cfg.quick {
            let mut v: Vec<u32> = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128]
                .into_iter()
                .filter(|&k| k < n)
                .collect();
            v.push(n);
            v
        } else {
            (1..=n).collect()
        };
        let mut points = Vec::new();
        for &k in &ks {
            let limit = ids[k as usize - 1] + 1;
            let window = (u64::from(k) * per_sm_vec).min(arr_vec) / chunk_vec * chunk_vec;
            let slots = (arr_vec - window) / chunk_vec + 1;
            let name = r::dram_sms_metric(k);
            let bytes = SMS_LAUNCHES as f64 * window as f64 * 16.0;
            let m = self.sampled_on_sms(&name, k, "DRAM", bytes, |i, j, ctr, msk| {
                let offset = ((i * SMS_LAUNCHES + j) as u64 * 7919 % slots) * chunk_vec;
                gpu.launch(
                    &k_fn,
                    dims,
                    KernelArgs::new()
                        .buf(a)
                        .u64(offset)
                        .u64(window)
                        .u32(chunk_vec as u32)
                        .u32(limit)
                        .buf_at(ctr, j)
                        .buf(msk)
                        .buf(&sink),
                )
            })?;
            points.push([f64::from(k), m.median()]);
            res.metrics
                .push(m.with("active_sms", k).with("window_bytes", window * 16));
        }
        let pts: Vec<(f64, f64)> = points.iter().map(|p| (p[0], p[1])).collect();
        let fit = fit_dram_bw_coeff(&pts).ok_or_else(|| {
            CalibError::Measurement("cannot fit dram_bw_coeff: fewer than 2 valid points".into())
        })?;
        let mut f = BTreeMap::new();
        f.insert("dram_bw_coeff".into(), fit.coeff);
        f.insert("rms_error".into(), fit.rms_error);
        f.insert("max_abs_error".into(), fit.max_abs_error);
        f.insert("saturation_sms".into(), fit.saturation_sms);
        f.insert("reference_gbps".into(), fit.reference_gbps);
        f.insert("points".into(), fit.n as f64);
        if let Some(full) = res.median(r::DRAM_READ) {
            f.insert("full_chip_read_gbps".into(), full);
        }
        res.curves.insert(
            r::DRAM_SMS_CURVE.into(),
            Curve {
                x_name: "active_sms".into(),
                y_name: "dram_read_gbps".into(),
                points,
                fit: f,
            },
        );
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    /// csrc/pointer_chase.cu: L2 hit, DRAM page-local and DRAM fully random latencies.
    pub fn latency(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let p = gpu.props().clone();
        let build = self.kernel("pointer_chase", "chase_build")?;
        let touch = self.kernel("pointer_chase", "chase_touch")?;
        let touch_sm = self.kernel("pointer_chase", "chase_touch_sm")?;
        let chase = self.kernel("pointer_chase", "chase")?;
        let (free, _) = gpu.mem_info()?;
        let l2_fp = pow2_floor(p.l2_bytes / 8).max(256 * 1024);
        let dram_fp = ((8 * p.l2_bytes).max(GIB)).next_power_of_two();
        let mut random_fp = (4 * GIB).max(dram_fp);
        let flush_bytes = (2 * p.l2_bytes).next_multiple_of(MIB);
        if (random_fp + flush_bytes) as f64 > 0.7 * free as f64 {
            random_fp = dram_fp;
        }
        if (random_fp + flush_bytes) as f64 > 0.8 * free as f64 || random_fp > 16 * GIB {
            return Err(CalibError::Measurement(format!(
                "not enough free GPU memory for the pointer chase ({} free)",
                fmt_bytes(free as u64)
            )));
        }
        let buf = self.alloc_u32(random_fp)?;
        let flush = self.alloc_u32(flush_bytes)?;
        self.fill("pointer_chase", &flush)?;
        let mut out = gpu.alloc_zeros::<u64>(3)?;
        let mut claim = gpu.alloc_zeros::<u32>(1)?;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let sms = p.sm_count;
        // Every chase runs on one SM, the lowest %smid present (see csrc/pointer_chase.cu).
        let target_smid = self.lowest_smid()?;
        let quick = self.cfg.quick;
        let page_bits = 14u32; // 2 MiB / 128 B
                               // (metric, footprint, bits_local (None = fully random), steps, warm, warm L2 with the chain)
        type Variant<'a> = (&'a str, u64, Option<u32>, u32, u32, bool);
        let variants: [Variant; 3] = [
            (
                r::L2_HIT_LATENCY,
                l2_fp,
                None,
                if quick { 2048 } else { 8192 },
                0,
                true,
            ),
            (
                r::DRAM_LATENCY_PAGE,
                dram_fp,
                Some(page_bits),
                if quick { 1024 } else { 4096 },
                64,
                false,
            ),
            (
                r::DRAM_LATENCY_RANDOM,
                random_fp,
                None,
                if quick { 1024 } else { 4096 },
                64,
                false,
            ),
        ];
        let policy = self.cfg.policy;
        for (name, fp, local, steps, warm, warm_l2) in variants {
            let lines = fp / 128;
            let bits_total = lines.trailing_zeros();
            let bits_local = local.unwrap_or(bits_total).min(bits_total);
            let mut rng = StdRng::seed_from_u64(self.rng.random());
            let m = self.sampled(name, "cycles", policy, |_| {
                build_chain(gpu, &build, &buf, (bits_total, bits_local), &mut rng)?;
                if warm_l2 {
                    gpu.zero(&mut claim)?;
                    gpu.launch(
                        &touch_sm,
                        LaunchDims::linear(sms * 2, 1024),
                        KernelArgs::new()
                            .buf(&buf)
                            .u64(fp / 16)
                            .u32(target_smid)
                            .buf(&claim)
                            .buf(&sink),
                    )?;
                } else {
                    gpu.launch(
                        &touch,
                        LaunchDims::linear(sms * 4, 256),
                        KernelArgs::new()
                            .buf(&flush)
                            .u64(flush_bytes / 16)
                            .buf(&sink),
                    )?;
                }
                let start = rng.random_range(0..lines) as u32 * 32;
                gpu.zero(&mut out)?;
                gpu.zero(&mut claim)?;
                gpu.launch(
                    &chase,
                    LaunchDims::linear(sms * 2, 32),
                    KernelArgs::new()
                        .buf(&buf)
                        .u32(start)
                        .u32(warm)
                        .u32(steps)
                        .buf(&out)
                        .u32(target_smid)
                        .buf(&claim),
                )?;
                let o = gpu.download(&out)?;
                if o[0] == 0 {
                    return Err(CalibError::Measurement(format!(
                        "pointer chase: no block landed on SM {target_smid}"
                    )));
                }
                Ok(o[0] as f64 / f64::from(steps))
            })?;
            res.metrics.push(
                m.with("footprint_bytes", fp)
                    .with("line_bytes", 128)
                    .with("steps", steps)
                    .with(
                        "order",
                        match local {
                            Some(_) => "random lines inside each 2 MiB page, pages in sequence",
                            None => "one random cycle over the whole footprint",
                        },
                    )
                    .with("load", "ld.global.cg (L1 bypassed)")
                    .with("smid", target_smid),
            );
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    /// csrc/mma_latency.cu: dependent mma.sync chains (latency) and ILP 2/4/8 (issue
    /// interval of one warp) for f16, bf16, (sm_80+) tf32 and (sm_89+) fp8 e4m3.
    pub fn mma(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let arch = gpu.arch();
        let iters: u32 = if self.cfg.quick { 1024 } else { 4096 };
        let out = gpu.alloc_zeros::<f32>(32)?;
        let cycles = gpu.alloc_zeros::<u64>(1)?;
        let policy = self.cfg.policy;
        for dt in ["f16", "bf16", "tf32", "fp8"] {
            if dt == "tf32" && arch < 80 {
                res.skipped.push(Skip {
                    what: "mma_tf32 (m16n8k8 tf32)".into(),
                    why: format!("needs sm_80 or later; this GPU is sm_{arch}"),
                });
                continue;
            }
            if dt == "fp8" && arch < 89 {
                res.skipped.push(Skip {
                    what: "mma_fp8 (m16n8k32 e4m3)".into(),
                    why: format!("needs sm_89 or later; this GPU is sm_{arch}"),
                });
                continue;
            }
            // Fresh small random operands (never zeros): f16 / bf16 pairs, one fp32 (tf32) or
            // four e4m3 bytes.
            let words: Vec<u32> = (0..32 * 6)
                .map(|_| match dt {
                    "f16" => {
                        let h = |x: f32| u32::from(half::f16::from_f32(x).to_bits());
                        h(self.rng.random_range(-1.0..1.0))
                            | (h(self.rng.random_range(-1.0..1.0)) << 16)
                    }
                    "bf16" => {
                        let h = |x: f32| u32::from(half::bf16::from_f32(x).to_bits());
                        h(self.rng.random_range(-1.0..1.0))
                            | (h(self.rng.random_range(-1.0..1.0)) << 16)
                    }
                    "tf32" => self.rng.random_range(0.5f32..1.0).to_bits(),
                    _ => (0..4).fold(0u32, |acc, i| {
                        let s: u32 = self.rng.random_range(0..2);
                        let e: u32 = self.rng.random_range(3..7);
                        let m: u32 = self.rng.random_range(0..8);
                        acc | (((s << 7) | (e << 3) | m) << (8 * i))
                    }),
                })
                .collect();
            let input = gpu.upload(&words)?;
            for ilp in [1u32, 2, 4, 8] {
                let k = self.kernel("mma_latency", &format!("mma_{dt}_ilp{ilp}"))?;
                let name = if ilp == 1 {
                    format!("mma_{dt}_latency_cycles")
                } else {
                    format!("mma_{dt}_ilp{ilp}_cycles_per_mma")
                };
                // Differential: (cycles(2N) - cycles(N)) / N removes the fixed cost of the
                // clock reads, loop setup and the drain of the last instruction.
                let run = |n: u32| -> Result<f64, CalibError> {
                    gpu.launch(
                        &k,
                        LaunchDims::linear(1, 32),
                        KernelArgs::new().buf(&input).u32(n).buf(&out).buf(&cycles),
                    )?;
                    Ok(gpu.download(&cycles)?[0] as f64)
                };
                let m = self.sampled(&name, "cycles", policy, |_| {
                    let c1 = run(iters)?;
                    let c2 = run(2 * iters)?;
                    Ok((c2 - c1) / f64::from(iters * ilp))
                })?;
                let instr = match dt {
                    "fp8" => "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32".to_string(),
                    "tf32" => "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32".to_string(),
                    _ => format!("mma.sync.aligned.m16n8k16.row.col.f32.{dt}.{dt}.f32"),
                };
                res.metrics.push(
                    m.with("instruction", instr)
                        .with("ilp", ilp)
                        .with("iters", json!([iters, 2 * iters]))
                        .with(
                            "method",
                            "(cycles(2N) - cycles(N)) / (N x ilp), clock64 in one warp",
                        )
                        .with("warps", 1),
                );
            }
        }
        Ok(())
    }
}
