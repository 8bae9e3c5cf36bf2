//! The calibration toolkit (the NVIDIA port report, section 4 and appendix C.1):
//! microbenchmarks in `csrc/` driven from `bench`, each metric repeated by the `stability`
//! loop until its CoV is at or below the threshold, reduced by `fit`, turned into the five
//! Origami parameters and a hardware document by `assemble`, and validated by `check`.
//! `bench_extra` drives the on-chip cost benchmarks (shared memory, barriers and launches,
//! the K loop), recorded as measurements beside the five parameters; `bench::energy` the
//! energy costs (`--only energy`: static power, pJ per FLOP and per byte); `bench_topology`
//! where the block scheduler puts the blocks of a launch and which SMs share a GPC
//! (`--only topology`).
//!
//! Exit codes (the table in docs/architecture.md): 0 ok, 1 runtime failure, 2 bad input or
//! usage, 3 unstable measurement, 4 no GPU / driver / NVRTC.

pub mod assemble;
pub mod bench;
pub mod bench_dram_rows;
pub mod bench_extra;
pub mod bench_l2_rows;
pub mod bench_l2_sms;
pub mod bench_loaded;
pub mod bench_topology;
pub mod check;
pub mod cli;
pub mod fit;
pub mod results;
pub mod stability;
pub mod text;

use std::time::Instant;

use serde_json::json;

use crate::exit::{Exit, ToExit};
use crate::gpu::{Gpu, GpuError};
use bench::{Bench, BenchConfig, Runner};
use results::Results;
use stability::NonFiniteSample;

/// Errors of a calibration run.
#[derive(Debug, thiserror::Error)]
pub enum CalibError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("measurement failed: {0}")]
    Measurement(String),
    #[error("measurement returned a bad value: {0}")]
    NonFinite(#[from] NonFiniteSample),
    #[error("unstable measurements (CoV above {max_cov_pct}% after the allowed samples): {metrics}; rerun on an idle GPU, raise --max-samples, or pass --allow-unstable to write them anyway", metrics = .metrics.join(", "))]
    Unstable {
        max_cov_pct: f64,
        metrics: Vec<String>,
    },
    #[error(transparent)]
    Assemble(#[from] assemble::AssembleError),
    #[error("{0}")]
    Usage(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl ToExit for CalibError {
    fn exit_code(&self) -> Exit {
        match self {
            CalibError::Gpu(e) => e.exit_code(),
            CalibError::Unstable { .. } => Exit::Unstable,
            CalibError::Usage(_) => Exit::BadInput,
            _ => Exit::Runtime,
        }
    }
}

/// Run the selected benchmarks on one open GPU.
pub fn run_on(gpu: &Gpu, benches: &[Bench], cfg: BenchConfig) -> Result<Results, CalibError> {
    let t0 = Instant::now();
    let mut res = Results::new(gpu.props().clone());
    let steps = estimate_steps(gpu, benches, cfg.quick);
    let mut runner = Runner::new(gpu, cfg, steps);
    runner.observe_nvml();
    let has = |b: Bench| benches.contains(&b);
    let outcome = (|| -> Result<(), CalibError> {
        if has(Bench::Clock) {
            runner.clock(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::Mma) {
            runner.mma(&mut res)?;
        }
        if has(Bench::SmemBw) {
            runner.smem_bw(&mut res)?;
        }
        if has(Bench::SyncCost) {
            runner.sync_cost(&mut res)?;
        }
        if has(Bench::KloopCost) {
            runner.kloop_cost(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::Latency) {
            runner.latency(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::LatencyLoaded) {
            runner.latency_loaded(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::L2) {
            runner.l2(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::Dram) || has(Bench::DramSms) {
            runner.dram(&mut res, has(Bench::Dram), has(Bench::DramSms))?;
            runner.observe_nvml();
        }
        if has(Bench::L2Sms) {
            runner.l2_sms(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::L2Rows) {
            runner.l2_rows(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::DramRows) {
            runner.dram_rows(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::TcRate) {
            runner.tc_rate(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::Tma) {
            runner.tma(&mut res)?;
            runner.observe_nvml();
        }
        if has(Bench::Topology) {
            runner.topology(&mut res)?;
        }
        if has(Bench::Energy) {
            runner.energy(&mut res)?;
            runner.observe_nvml();
        }
        Ok(())
    })();
    runner.finish();
    outcome?;
    runner.record_observations(&mut res);
    res.observed.insert(
        "benchmarks_wall_s".into(),
        json!(t0.elapsed().as_secs_f64()),
    );
    res.observed.insert(
        "benchmarks".into(),
        json!(benches
            .iter()
            .map(|b| serde_json::to_value(b).unwrap_or_default())
            .collect::<Vec<_>>()),
    );
    Ok(res)
}

fn estimate_steps(gpu: &Gpu, benches: &[Bench], quick: bool) -> u64 {
    steps_for(
        u64::from(gpu.props().sm_count),
        gpu.props().compute_capability,
        benches,
        quick,
    )
}

/// Metrics each benchmark samples (the progress bar's length).
fn steps_for(sms: u64, cc: [u32; 2], benches: &[Bench], quick: bool) -> u64 {
    let sm90a = bench::tc::sm90a_skip_reason(cc).is_none();
    benches
        .iter()
        .map(|b| match b {
            Bench::Clock => 1,
            // latency and 3 ILP intervals per type: f16, bf16; tf32 from 8.0, fp8 from 8.9
            Bench::Mma => {
                let cc = cc[0] * 10 + cc[1];
                4 * (2 + u64::from(cc >= 80) + u64::from(cc >= 89))
            }
            Bench::SmemBw => 2,
            Bench::SyncCost => {
                // + stream and graph launches, the dependent reduction
                bench_extra::BAR_THREADS.len() as u64 + 3
            }
            Bench::KloopCost => {
                (bench_extra::KLOOP_WARPS.len() * bench_extra::KLOOP_STAGES.len()) as u64
            }
            Bench::Latency => 3,
            Bench::LatencyLoaded => 2,
            Bench::L2 => 5,
            Bench::Dram => 3,
            Bench::DramSms => {
                if quick {
                    12
                } else {
                    sms
                }
            }
            Bench::L2Sms => bench_l2_sms::sm_counts(sms as u32, quick).len() as u64,
            // each segment length and the contiguous reference; l2-rows twice (loads, copies)
            Bench::L2Rows => 2 * (bench_l2_rows::SEGMENT_BYTES.len() as u64 + 1),
            Bench::DramRows => bench_l2_rows::SEGMENT_BYTES.len() as u64 + 1,
            // 5 warp counts; 4 N x 2 warpgroup counts of wgmma on 9.0
            Bench::TcRate => {
                bench::tc::WARPS.len() as u64
                    + if sm90a {
                        (bench::tc::WGMMA_NS.len() * bench::tc::WGMMA_WARPGROUPS.len()) as u64
                    } else {
                        0
                    }
            }
            // 2 latencies, 2 x (bytes per cycle, GB/s)
            Bench::Tma => {
                if sm90a {
                    6
                } else {
                    0
                }
            }
            // one reading: the block placement and the GPCs
            Bench::Topology => 1,
            // idle, static, active, 4 dynamic costs (+ tf32 from 8.0), the power limit;
            // wgmma and TMA on 9.0
            Bench::Energy => bench::energy::metrics(cc, sm90a),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_count_every_sampled_metric() {
        let default = Bench::DEFAULT;
        assert_eq!(
            steps_for(132, [9, 0], &default, false),
            1 + 16 + 3 + 5 + 3 + 132
        );
        assert_eq!(
            steps_for(132, [9, 0], &default, true),
            1 + 16 + 3 + 5 + 3 + 12
        );
        // mma: f16 and bf16 everywhere, tf32 from 8.0, fp8 from 8.9
        assert_eq!(steps_for(80, [7, 5], &[Bench::Mma], false), 8);
        assert_eq!(steps_for(108, [8, 0], &[Bench::Mma], false), 12);
        assert_eq!(steps_for(128, [8, 9], &[Bench::Mma], false), 16);
        assert_eq!(steps_for(132, [9, 0], &[Bench::TcRate], false), 5 + 8);
        assert_eq!(steps_for(108, [8, 0], &[Bench::TcRate], false), 5);
        assert_eq!(steps_for(132, [9, 0], &[Bench::Tma], true), 6);
        assert_eq!(steps_for(128, [8, 9], &[Bench::Tma], false), 0);
        assert_eq!(steps_for(132, [9, 0], &[Bench::Energy], false), 15);
        assert_eq!(steps_for(108, [8, 0], &[Bench::Energy], false), 10);
        assert_eq!(steps_for(80, [7, 5], &[Bench::Energy], false), 9);
        assert_eq!(steps_for(132, [9, 0], &[Bench::Topology], false), 1);
        assert_eq!(steps_for(108, [8, 0], &[Bench::Topology], true), 1);
    }
}
