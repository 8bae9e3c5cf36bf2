//! Drivers of the on-chip cost microbenchmarks (issue 14, "calibration drives the model"):
//! the costs a GEMM's main loop pays besides its MMAs and its L2/DRAM traffic.
//!
//! - `csrc/smem_bw.cu`: shared-memory read bandwidth in bytes per SM cycle, for
//!   `ld.shared.v4.u32` and `ldmatrix.x4`. NVIDIA's tuning guides give 128 bytes per clock
//!   per SM for sm_80 and later (A100 / Hopper tuning guides, "Shared Memory").
//! - `csrc/sync_cost.cu`: cycles per `bar.sync` for 128, 256 and 384 threads (the method of
//!   Jia et al., arXiv:1804.06826: clock64 around a loop, differential in the length), and
//!   microseconds per empty-kernel launch on a stream and inside a CUDA graph, and what a
//!   small dependent reduction kernel adds after a kernel that fills every SM (split-K's
//!   second kernel beyond its bytes: `tp_splitk_reduce_cycles`).
//! - `csrc/kloop_cost.cu`: cycles per iteration of a multistage cp.async K loop without
//!   MMAs (the structure of CUTLASS's sm80 multistage mainloop), for 4 and 8 warps and 2..5
//!   stages, with the fit `cycles = fixed + exposed / (stages - 1)`: `fixed` is the model's
//!   missing per-iteration cost (barrier, address arithmetic, issue), `exposed` the L2
//!   latency that stages - 1 copies in flight leave uncovered.
//!
//! Every figure is read from clock64 inside the kernels (no SM clock needed), except the
//! launch costs and the dependent reduction, which are CUDA-event times. The pure arithmetic (grouping blocks by SM,
//! subtracting the empty loop, the stage fit) is below the drivers, with its tests.

use std::collections::BTreeMap;

use rand::Rng;
use serde_json::json;

use super::bench::Runner;
use super::results::{self as r, Results, Skip};
use super::CalibError;
use crate::gpu::{KernelArgs, LaunchDims};
use crate::hw::schema::Curve;

/// Threads per block of the shared-memory kernels (`SMEM_THREADS` in csrc/smem_bw.cu).
const SMEM_THREADS: u32 = 1024;
/// Independent 512-byte warp reads per loop round (`SMEM_UNROLL`).
const SMEM_UNROLL: u32 = 8;
/// Bytes one warp instruction reads in both shared-memory kernels.
const WARP_READ_BYTES: u32 = 512;
/// Barriers per loop round (`SYNC_UNROLL` in csrc/sync_cost.cu).
const SYNC_UNROLL: u32 = 8;
/// Block sizes of the barrier benchmark.
pub const BAR_THREADS: [u32; 3] = [128, 256, 384];
/// Warps per block and stages of the K-loop benchmark.
pub const KLOOP_WARPS: [u32; 2] = [4, 8];
pub const KLOOP_STAGES: [u32; 4] = [2, 3, 4, 5];

impl Runner<'_> {
    // ---------------------------------------------------------------------------------
    /// csrc/smem_bw.cu: bytes per SM cycle of conflict-free `ld.shared.v4.u32` and
    /// `ldmatrix.x4` reads by every resident warp.
    pub fn smem_bw(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let arch = gpu.arch();
        let iters: u32 = if self.cfg.quick { 256 } else { 1024 };
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let policy = self.cfg.policy;
        let variants = [
            (r::SMEM_READ_V4, "smem_read_v4", "ld.shared.v4.u32", 0u32),
            (
                r::SMEM_LDMATRIX_X4,
                "smem_ldmatrix_x4",
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                75,
            ),
        ];
        for (name, kname, instr, min_arch) in variants {
            if arch < min_arch {
                res.skipped.push(Skip {
                    what: format!("{name} ({instr})"),
                    why: format!("needs sm_{min_arch} or later; this GPU is sm_{arch}"),
                });
                continue;
            }
            let k = self.kernel("smem_bw", kname)?;
            let blocks = self.blocks_for(&k, SMEM_THREADS)?;
            let rec = gpu.alloc_zeros::<u64>(blocks as usize * 3)?;
            let seed: u32 = self.rng.random();
            let bytes_per_block = f64::from(SMEM_THREADS / 32)
                * f64::from(iters)
                * f64::from(SMEM_UNROLL * WARP_READ_BYTES);
            let dims = LaunchDims::linear(blocks, SMEM_THREADS);
            let mut sms_seen = 0usize;
            let m = {
                let sms_seen = &mut sms_seen;
                self.sampled(name, "B/cycle/SM", policy, |_| {
                    gpu.launch(
                        &k,
                        dims,
                        KernelArgs::new().u32(iters).u32(seed).buf(&sink).buf(&rec),
                    )?;
                    let v = gpu.download(&rec)?;
                    let mut rates = per_sm_rate(&v, bytes_per_block)
                        .map_err(|e| CalibError::Measurement(format!("{kname}: {e}")))?;
                    *sms_seen = rates.len();
                    rates.sort_by(f64::total_cmp);
                    Ok(crate::stats::median(&rates))
                })?
            };
            res.metrics.push(
                m.with("instruction", instr)
                    .with("grid", json!([blocks, SMEM_THREADS]))
                    .with("sms_reporting", sms_seen)
                    .with("iters", iters)
                    .with("bytes_per_block", bytes_per_block)
                    .with(
                        "method",
                        "bytes of the blocks on one SM / (latest clock64 end - earliest start) on that SM, median over SMs",
                    )
                    .with(
                        "reference",
                        "128 B/clk/SM on sm_80 and later (NVIDIA Ampere and Hopper tuning guides)",
                    ),
            );
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    /// csrc/sync_cost.cu: cycles per `bar.sync` (one block of 128, 256, 384 threads), and
    /// the time per empty-kernel launch on the stream and as graph nodes.
    pub fn sync_cost(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let bar = self.kernel("sync_cost", "bar_rounds")?;
        let empty = self.kernel("sync_cost", "empty_rounds")?;
        let nop = self.kernel("sync_cost", "empty_kernel")?;
        let n: u32 = if self.cfg.quick { 1024 } else { 4096 };
        let cycles = gpu.alloc_zeros::<u64>(1)?;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let policy = self.cfg.policy;
        let run = |k: &crate::gpu::Kernel, threads: u32, iters: u32| -> Result<f64, CalibError> {
            gpu.launch(
                k,
                LaunchDims::linear(1, threads),
                KernelArgs::new().u32(iters).buf(&cycles).buf(&sink),
            )?;
            Ok(gpu.download(&cycles)?[0] as f64)
        };
        for threads in BAR_THREADS {
            let mut overhead = Vec::new();
            let m = {
                let overhead = &mut overhead;
                self.sampled(&r::bar_sync_metric(threads), "cycles", policy, |_| {
                    let d = LoopDiff {
                        body_n: run(&bar, threads, n)?,
                        body_2n: run(&bar, threads, 2 * n)?,
                        empty_n: run(&empty, threads, n)?,
                        empty_2n: run(&empty, threads, 2 * n)?,
                    };
                    overhead.push(d.empty_per_round(n));
                    Ok(d.per_op(n, SYNC_UNROLL))
                })?
            };
            overhead.sort_by(f64::total_cmp);
            res.metrics.push(
                m.with("threads", threads)
                    .with("warps", threads / 32)
                    .with("barriers_per_round", SYNC_UNROLL)
                    .with("rounds", json!([n, 2 * n]))
                    .with("empty_loop_cycles_per_round", crate::stats::median(&overhead))
                    .with(
                        "method",
                        "((bar(2N) - bar(N)) - (empty(2N) - empty(N))) / (N x 8), clock64 in thread 0 of one block",
                    ),
            );
        }
        // Launch cost: an empty kernel of one warp.
        let dims = LaunchDims::linear(1, 32);
        let clock = res.used(r::SM_CLOCK);
        let in_cycles = |us: f64| clock.map(|mhz| us * mhz);
        let launches: u32 = if self.cfg.quick { 500 } else { 2000 };
        let m = self.sampled(r::LAUNCH_STREAM, "us", policy, |_| {
            let ms = gpu.time_ms(|| {
                for _ in 0..launches {
                    gpu.launch(&nop, dims, KernelArgs::new().u32(0))?;
                }
                Ok(())
            })?;
            Ok(per_launch_us(ms, launches))
        })?;
        let cyc = in_cycles(m.median());
        res.metrics.push(
            m.with("launches_per_sample", launches)
                .with("kernel", "empty, 1 x 32 threads, one u32 parameter")
                .with("sm_cycles", json!(cyc))
                .with(
                    "method",
                    "CUDA events around back-to-back launches on one stream: the slower of host submission and device launch",
                ),
        );
        let nodes: u32 = if self.cfg.quick { 128 } else { 256 };
        let replays: u32 = if self.cfg.quick { 4 } else { 16 };
        let graph = gpu.capture(|| {
            for _ in 0..nodes {
                gpu.launch(&nop, dims, KernelArgs::new().u32(0))?;
            }
            Ok(())
        })?;
        let m = self.sampled(r::LAUNCH_GRAPH, "us", policy, |_| {
            let ms = gpu.time_graph_ms(&graph, replays)?;
            Ok(per_launch_us(ms, nodes))
        })?;
        let cyc = in_cycles(m.median());
        res.metrics.push(
            m.with("nodes_per_graph", nodes)
                .with("replays_per_sample", replays)
                .with("sm_cycles", json!(cyc))
                .with(
                    "method",
                    "CUDA events around back-to-back replays of a graph of empty-kernel nodes, per node (the graph's own launch is amortised over its nodes)",
                ),
        );
        self.dependent_reduce(res)
    }

    /// csrc/sync_cost.cu `spin_all` then `reduce_pair`: what split-K's second kernel costs
    /// beyond its bytes ([`r::DEPENDENT_REDUCE`], microseconds): graphs of
    /// [`REDUCE_PAIRS`] x [spin] and of [`REDUCE_PAIRS`] x [spin, reduce], the difference
    /// of their replay times over the pairs.
    fn dependent_reduce(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let spin = self.kernel("sync_cost", "spin_all")?;
        let reduce = self.kernel("sync_cost", "reduce_pair")?;
        let sms = gpu.props().sm_count;
        let mhz = res
            .used(r::SM_CLOCK)
            .unwrap_or(gpu.props().sm_clock_mhz)
            .max(1.0);
        let spin_cycles = (SPIN_US * mhz) as u64;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let ws = gpu.alloc_zeros::<f32>(2 * REDUCE_FLOATS as usize)?;
        let out = gpu.alloc_zeros::<f32>(REDUCE_FLOATS as usize)?;
        let spin_dims = LaunchDims::linear(sms, 128);
        let reduce_dims = LaunchDims::linear(sms * 2, 256);
        let graph = |with_reduce: bool| {
            gpu.capture(|| {
                for _ in 0..REDUCE_PAIRS {
                    gpu.launch(
                        &spin,
                        spin_dims,
                        KernelArgs::new().u64(spin_cycles).buf(&sink),
                    )?;
                    if with_reduce {
                        gpu.launch(
                            &reduce,
                            reduce_dims,
                            KernelArgs::new().buf(&ws).buf(&out).u32(REDUCE_FLOATS),
                        )?;
                    }
                }
                Ok(())
            })
        };
        let (alone, paired) = (graph(false)?, graph(true)?);
        let replays: u32 = if self.cfg.quick { 2 } else { 8 };
        let policy = self.cfg.policy;
        let m = self.sampled(r::DEPENDENT_REDUCE, "us", policy, |_| {
            let a = gpu.time_graph_ms(&alone, replays)?;
            let b = gpu.time_graph_ms(&paired, replays)?;
            Ok(dependent_us(a, b, REDUCE_PAIRS))
        })?;
        let cyc = m.median() * mhz;
        res.metrics.push(
            m.with("pairs_per_graph", REDUCE_PAIRS)
                .with("replays_per_sample", replays)
                .with("spin_cycles", spin_cycles)
                .with("reduce_floats", REDUCE_FLOATS)
                .with("grid", json!({"spin": [sms, 128], "reduce": [sms * 2, 256]}))
                .with("sm_cycles", json!(cyc))
                .with(
                    "method",
                    "CUDA events around replays of graphs of R x [spin_all on every SM] and R x [spin_all, reduce_pair], (paired - alone) / R",
                ),
        );
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    /// csrc/kloop_cost.cu: cycles per synthetic K-loop iteration for 4 and 8 warps and
    /// 2..5 stages, one block, L2-resident data; one curve per warp count with its fit.
    pub fn kloop_cost(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let l2 = gpu.props().l2_bytes;
        // A buffer far inside L2 (at most a quarter of it, at most 4 MiB), a power of two.
        let buf_bytes = kloop_buffer_bytes(l2);
        let buf = self.alloc_u32(buf_bytes)?;
        self.fill("kloop_cost", &buf)?;
        let cycles = gpu.alloc_zeros::<u64>(1)?;
        let sink = gpu.alloc_zeros::<u32>(1024)?;
        let n: u32 = if self.cfg.quick { 1024 } else { 4096 };
        let policy = self.cfg.policy;
        for warps in KLOOP_WARPS {
            let threads = 32 * warps;
            let stage_bytes = u64::from(threads) * 16;
            let tile_mask = (buf_bytes / stage_bytes - 1) as u32;
            let mut points = Vec::new();
            for stages in KLOOP_STAGES {
                let k = self.kernel("kloop_cost", &format!("kloop_s{stages}"))?;
                let dims = LaunchDims::linear(1, threads).with_smem(stages * stage_bytes as u32);
                let run = |iters: u32| -> Result<f64, CalibError> {
                    gpu.launch(
                        &k,
                        dims,
                        KernelArgs::new()
                            .buf(&buf)
                            .u32(tile_mask)
                            .u32(iters)
                            .buf(&cycles)
                            .buf(&sink),
                    )?;
                    Ok(gpu.download(&cycles)?[0] as f64)
                };
                // One untimed pass over the buffer (and more) so that it sits in L2.
                run(n)?;
                let name = r::kloop_metric(warps, stages);
                let m = self.sampled(&name, "cycles", policy, |_| {
                    let c1 = run(n)?;
                    let c2 = run(2 * n)?;
                    Ok((c2 - c1) / f64::from(n))
                })?;
                points.push([f64::from(stages), m.median()]);
                res.metrics.push(
                    m.with("warps", warps)
                        .with("stages", stages)
                        .with("stage_bytes", stage_bytes)
                        .with("buffer_bytes", buf_bytes)
                        .with("iters", json!([n, 2 * n]))
                        .with(
                            "per_iteration",
                            "cp.async.wait_group; bar.sync; address + cp.async.cg 16 B per thread; commit; ldmatrix.x4; xor",
                        )
                        .with(
                            "method",
                            "(cycles(2N) - cycles(N)) / N, clock64 in thread 0 of one block on an idle GPU",
                        ),
                );
            }
            let pts: Vec<(f64, f64)> = points.iter().map(|p| (p[0], p[1])).collect();
            let mut fit = BTreeMap::new();
            if let Some(f) = fit_stage_curve(&pts) {
                fit.insert("fixed_cycles".into(), f.fixed);
                fit.insert("exposed_latency_cycles".into(), f.exposed);
                fit.insert("rms_error_cycles".into(), f.rms_error);
            }
            fit.insert("warps".into(), f64::from(warps));
            res.curves.insert(
                r::kloop_curve(warps),
                Curve {
                    x_name: "stages".into(),
                    y_name: "cycles_per_iteration".into(),
                    points,
                    fit,
                },
            );
        }
        Ok(())
    }
}

// -------------------------------------------------------------------------------------
// Pure arithmetic (tested below without a GPU).

/// Bytes per cycle of each SM from the records `[smid, clk0, clk1]` of the blocks of a
/// shared-memory kernel that each read `bytes_per_block`: the blocks of one SM are summed
/// and divided by the span from their earliest start to their latest end (clock64 is one
/// counter per SM, so the records of one SM are comparable, those of two SMs are not).
/// Sorted by smid. Errors on a block that did not report or a non-positive span.
pub fn per_sm_rate(rec: &[u64], bytes_per_block: f64) -> Result<Vec<f64>, String> {
    if rec.is_empty() || rec.len() % 3 != 0 {
        return Err(format!("{} record words, not a multiple of 3", rec.len()));
    }
    // smid -> (blocks, earliest start, latest end)
    let mut by_sm: BTreeMap<u64, (u32, u64, u64)> = BTreeMap::new();
    for (b, r) in rec.chunks_exact(3).enumerate() {
        let (smid, t0, t1) = (r[0], r[1], r[2]);
        if t1 == 0 || t1 <= t0 {
            return Err(format!(
                "block {b} reported no time span (clk0 {t0}, clk1 {t1})"
            ));
        }
        let e = by_sm.entry(smid).or_insert((0, t0, t1));
        e.0 += 1;
        e.1 = e.1.min(t0);
        e.2 = e.2.max(t1);
    }
    Ok(by_sm
        .values()
        .map(|&(blocks, t0, t1)| f64::from(blocks) * bytes_per_block / (t1 - t0) as f64)
        .collect())
}

/// Clock readings of a loop with a body and of the same loop without it, each at N and
/// 2N rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopDiff {
    pub body_n: f64,
    pub body_2n: f64,
    pub empty_n: f64,
    pub empty_2n: f64,
}

impl LoopDiff {
    /// Cycles of one operation when every round holds `ops` of them: the differences in
    /// the length cancel the fixed cost, the empty loop's difference the loop overhead.
    pub fn per_op(&self, n: u32, ops: u32) -> f64 {
        ((self.body_2n - self.body_n) - (self.empty_2n - self.empty_n))
            / (f64::from(n) * f64::from(ops))
    }

    /// Cycles per round of the empty loop (its overhead).
    pub fn empty_per_round(&self, n: u32) -> f64 {
        (self.empty_2n - self.empty_n) / f64::from(n)
    }
}

/// Microseconds per launch of `launches` launches timed at `ms` milliseconds.
pub fn per_launch_us(ms: f64, launches: u32) -> f64 {
    ms * 1e3 / f64::from(launches.max(1))
}

/// Spin-reduce pairs per graph of the dependent-reduction metric.
pub const REDUCE_PAIRS: u32 = 64;
/// Microseconds each `spin_all` keeps the SMs busy (at the measured SM clock).
const SPIN_US: f64 = 5.0;
/// Floats per run of `reduce_pair`'s workspace (two runs: 128 KiB, L2-resident).
const REDUCE_FLOATS: u32 = 16 * 1024;

/// Microseconds the dependent kernel adds per pair: graphs of `pairs` spins alone (`alone`
/// ms) and paired with the reduction (`paired` ms).
pub fn dependent_us(alone_ms: f64, paired_ms: f64, pairs: u32) -> f64 {
    (paired_ms - alone_ms) * 1e3 / f64::from(pairs.max(1))
}

/// The K-loop's source buffer: a power of two, at most a quarter of L2 and 4 MiB, at
/// least 64 KiB.
pub fn kloop_buffer_bytes(l2_bytes: u64) -> u64 {
    let cap = (l2_bytes / 4).clamp(64 << 10, 4 << 20);
    1u64 << (63 - cap.leading_zeros())
}

/// `cycles(stages) = fixed + exposed / (stages - 1)` fitted by least squares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageFit {
    /// Cycles per iteration with every copy's latency hidden (infinitely many stages).
    pub fixed: f64,
    /// Latency exposed with one copy in flight (stages = 2), beyond `fixed`.
    pub exposed: f64,
    /// Root-mean-square residual (cycles).
    pub rms_error: f64,
}

/// Fit [`StageFit`] to `(stages, cycles)` points (stages >= 2). `None` with fewer than two
/// distinct stage counts.
pub fn fit_stage_curve(points: &[(f64, f64)]) -> Option<StageFit> {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .filter(|(s, c)| *s >= 2.0 && c.is_finite() && s.is_finite())
        .map(|&(s, c)| (1.0 / (s - 1.0), c))
        .collect();
    let n = xy.len() as f64;
    if xy.len() < 2 {
        return None;
    }
    let mx = xy.iter().map(|p| p.0).sum::<f64>() / n;
    let my = xy.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = xy.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 1e-12 {
        return None;
    }
    let sxy: f64 = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let exposed = sxy / sxx;
    let fixed = my - exposed * mx;
    let rms = (xy
        .iter()
        .map(|p| (fixed + exposed * p.0 - p.1).powi(2))
        .sum::<f64>()
        / n)
        .sqrt();
    Some(StageFit {
        fixed,
        exposed,
        rms_error: rms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_one_sm_share_its_span() {
        // SM 3: two blocks overlapping over [100, 1100]; SM 7: one block over [50, 550].
        let rec = [3, 100, 1000, 7, 50, 550, 3, 200, 1100];
        let r = per_sm_rate(&rec, 64_000.0).unwrap();
        assert_eq!(r, vec![2.0 * 64_000.0 / 1000.0, 64_000.0 / 500.0]);
        // 128 B/cycle: 1024 threads x 1024 rounds x 8 loads x 16 B in 1048576 cycles
        let bytes = 32.0 * 1024.0 * 8.0 * 512.0;
        let r = per_sm_rate(&[0, 5, 5 + (1 << 20)], bytes).unwrap();
        assert_eq!(r, vec![128.0]);
    }

    #[test]
    fn a_block_without_a_span_is_an_error() {
        assert!(per_sm_rate(&[0, 10, 0], 1.0).is_err(), "never written");
        assert!(per_sm_rate(&[0, 10, 10], 1.0).is_err(), "zero span");
        assert!(per_sm_rate(&[0, 10], 1.0).is_err(), "truncated");
        assert!(per_sm_rate(&[], 1.0).is_err());
    }

    #[test]
    fn the_empty_loop_and_the_fixed_cost_are_removed() {
        // fixed 500 cycles, loop overhead 3 per round, 8 barriers of 20 cycles per round
        let n = 4096;
        let body = |r: u32| 500.0 + f64::from(r) * (3.0 + 8.0 * 20.0);
        let empty = |r: u32| 480.0 + f64::from(r) * 3.0;
        let d = LoopDiff {
            body_n: body(n),
            body_2n: body(2 * n),
            empty_n: empty(n),
            empty_2n: empty(2 * n),
        };
        assert!((d.per_op(n, 8) - 20.0).abs() < 1e-9);
        assert!((d.empty_per_round(n) - 3.0).abs() < 1e-9);
    }

    #[test]
    fn dependent_reduce_is_the_difference_per_pair() {
        // 64 pairs: 0.448 ms alone, 0.576 ms with the reductions -> 2 us each
        assert!((dependent_us(0.448, 0.576, 64) - 2.0).abs() < 1e-9);
        assert!(dependent_us(1.0, 1.0, 0) == 0.0);
    }

    #[test]
    fn launch_time_per_launch() {
        assert!((per_launch_us(4.0, 2000) - 2.0).abs() < 1e-12);
        assert!(per_launch_us(1.0, 0).is_finite());
    }

    #[test]
    fn kloop_buffer_is_a_small_power_of_two_inside_l2() {
        assert_eq!(kloop_buffer_bytes(50 << 20), 4 << 20); // H100: 50 MiB L2
        assert_eq!(kloop_buffer_bytes(6 << 20), 1 << 20); // 1.5 MiB -> 1 MiB
        assert_eq!(kloop_buffer_bytes(1 << 10), 64 << 10);
        for l2 in [40u64 << 20, 60 << 20, 72 << 20, 6 << 20] {
            let b = kloop_buffer_bytes(l2);
            assert!(b.is_power_of_two() && b <= l2 / 4);
            // whole stages of 4 and 8 warps (2 and 4 KiB) tile it
            assert_eq!(b % 4096, 0);
        }
    }

    #[test]
    fn the_stage_fit_recovers_fixed_and_exposed_cost() {
        let pts: Vec<(f64, f64)> = [2.0, 3.0, 4.0, 5.0]
            .iter()
            .map(|&s| (s, 60.0 + 300.0 / (s - 1.0)))
            .collect();
        let f = fit_stage_curve(&pts).unwrap();
        assert!((f.fixed - 60.0).abs() < 1e-9, "{f:?}");
        assert!((f.exposed - 300.0).abs() < 1e-9, "{f:?}");
        assert!(f.rms_error < 1e-9);
        // a flat curve: everything is fixed cost
        let f = fit_stage_curve(&[(2.0, 80.0), (3.0, 80.0), (5.0, 80.0)]).unwrap();
        assert!((f.fixed - 80.0).abs() < 1e-9 && f.exposed.abs() < 1e-9);
        // noise shows in the residual
        let f = fit_stage_curve(&[(2.0, 361.0), (3.0, 209.0), (4.0, 161.0), (5.0, 134.0)]).unwrap();
        assert!(f.rms_error > 0.0 && f.rms_error < 5.0, "{f:?}");
        assert!(fit_stage_curve(&[(3.0, 1.0)]).is_none());
        assert!(fit_stage_curve(&[(3.0, 1.0), (3.0, 2.0)]).is_none());
        assert!(
            fit_stage_curve(&[(1.0, 1.0), (3.0, 2.0)]).is_none(),
            "stages < 2"
        );
    }
}
