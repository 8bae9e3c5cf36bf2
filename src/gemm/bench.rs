//! What a sweep or a single run needs from whatever compiles, verifies and times configs
//! of the project's kernels (the origami or the hopper family): the [`GemmBench`] trait. [`GpuBench`] is the real one (NVRTC and
//! cuBLAS on the GPU, over [`super::runner::Runner`]); [`super::mock::MockBench`] returns
//! deterministic times so that CI runs a whole sweep, sharded or not, without a GPU.

use std::time::Instant;

use crate::dtype::Dtype;
use crate::gpu::{ClockSample, Gpu};
use crate::model::{Config, Problem};

use super::measure::{Timing, TimingPolicy};
use super::runner::{Runner, RunnerKernel, ShapeData};
use super::verify::Verification;
use super::GemmError;

/// What a compiled instance reports of itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InstanceInfo {
    pub registers: i32,
    /// Per-thread local memory (spills when above 0).
    pub local_bytes: i32,
    pub smem_bytes: u32,
}

/// The outcome of compiling a plan's configs.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileOutcome {
    /// One message per config (or instance) that failed.
    pub failures: Vec<String>,
    /// Compile threads used.
    pub threads: usize,
}

/// Compile, verify and time configs of one of the project's kernels (and cuBLAS beside them).
pub trait GemmBench {
    /// The device data of one shape (inputs, outputs, the reference).
    type Shape;
    /// The device's name.
    fn device_name(&self) -> String;
    /// The driver version, when known.
    fn driver(&self) -> Option<String>;
    /// A clock reading, when one can be had.
    fn clocks(&self) -> Option<ClockSample>;
    /// Seconds since the bench was opened (the time budget, each shape's seconds).
    fn elapsed_s(&self) -> f64;
    /// Compile and load every config (in parallel where it can); failures are kept per
    /// config and reported by [`GemmBench::instance`].
    fn compile(&mut self, configs: &[Config], progress: &(dyn Fn() + Sync)) -> CompileOutcome;
    /// The compiled instance of a config, or why there is none.
    fn instance(&self, c: &Config) -> Result<InstanceInfo, String>;
    /// Why a compiled config cannot be launched on a problem (a split-K workspace beyond
    /// the runner's limit), if so: the sweep records it and moves on.
    fn launch_violation(&self, _c: &Config, _p: &Problem) -> Option<String> {
        None
    }
    /// Fresh inputs of a shape from `seed`, and the reference.
    fn prepare(&mut self, p: &Problem, seed: u64) -> Result<Self::Shape, GemmError>;
    /// How many copies of the inputs the timing rotates through.
    fn rotation(&self, data: &Self::Shape) -> u32;
    /// Time cuBLAS on the shape (a full measurement).
    fn time_cublas(
        &mut self,
        data: &Self::Shape,
        policy: &TimingPolicy,
    ) -> Result<Timing, GemmError>;
    /// Run a config once against the reference; also the launch's milliseconds.
    fn verify(
        &mut self,
        data: &mut Self::Shape,
        c: &Config,
    ) -> Result<(Verification, f64), GemmError>;
    /// Energy under sustained load (`energy::sustained`) of a config, or of cuBLAS when
    /// `c` is `None`, at about `ms_per_launch`; `None` where the bench has no energy counter.
    fn sustained(
        &mut self,
        _data: &Self::Shape,
        _c: Option<&Config>,
        _ms_per_launch: f64,
        _min_window_s: f64,
    ) -> Result<Option<super::energy::Sustained>, GemmError> {
        Ok(None)
    }
    /// Time a config (see [`super::measure::measure`] for `best_ms`, `full`, `first_ms`).
    fn time_config(
        &mut self,
        data: &Self::Shape,
        c: &Config,
        policy: &TimingPolicy,
        best_ms: Option<f64>,
        full: bool,
        first_ms: Option<f64>,
    ) -> Result<Timing, GemmError>;
}

/// The real bench: the runner on a GPU (the origami or the hopper family's kernel),
/// compiling on `threads` threads.
pub struct GpuBench {
    pub runner: Runner,
    threads: usize,
    started: Instant,
}

impl GpuBench {
    /// Open the runner on `gpu` for `dtype`; `started` is when the command began (the time
    /// budget counts from there).
    pub fn new(
        gpu: Gpu,
        dtype: Dtype,
        kind: RunnerKernel,
        threads: usize,
        started: Instant,
    ) -> Result<Self, GemmError> {
        Ok(GpuBench {
            runner: Runner::new(gpu, dtype, kind)?,
            threads,
            started,
        })
    }
}

impl GemmBench for GpuBench {
    type Shape = ShapeData;

    fn launch_violation(&self, c: &Config, p: &Problem) -> Option<String> {
        self.runner.launch_violation(c, p)
    }

    fn device_name(&self) -> String {
        self.runner.gpu.props().name.clone()
    }

    fn driver(&self) -> Option<String> {
        self.runner.gpu.driver_version().ok()
    }

    fn clocks(&self) -> Option<ClockSample> {
        self.runner.gpu.nvml_sample().ok()
    }

    fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    fn compile(&mut self, configs: &[Config], progress: &(dyn Fn() + Sync)) -> CompileOutcome {
        CompileOutcome {
            failures: self.runner.compile_all(configs, self.threads, progress),
            threads: self.threads,
        }
    }

    fn instance(&self, c: &Config) -> Result<InstanceInfo, String> {
        self.runner.instance(c).map(|i| InstanceInfo {
            registers: i.attrs.num_regs,
            local_bytes: i.attrs.local_size_bytes,
            smem_bytes: i.smem_bytes,
        })
    }

    fn prepare(&mut self, p: &Problem, seed: u64) -> Result<ShapeData, GemmError> {
        self.runner.prepare(p, seed)
    }

    fn rotation(&self, data: &ShapeData) -> u32 {
        data.rotation
    }

    fn sustained(
        &mut self,
        data: &Self::Shape,
        c: Option<&Config>,
        ms_per_launch: f64,
        min_window_s: f64,
    ) -> Result<Option<super::energy::Sustained>, GemmError> {
        match c {
            Some(c) => self
                .runner
                .sustained_config(data, c, ms_per_launch, min_window_s),
            None => self
                .runner
                .sustained_cublas(data, ms_per_launch, min_window_s),
        }
    }

    fn time_cublas(
        &mut self,
        data: &ShapeData,
        policy: &TimingPolicy,
    ) -> Result<Timing, GemmError> {
        self.runner.time_cublas(data, policy)
    }

    fn verify(
        &mut self,
        data: &mut ShapeData,
        c: &Config,
    ) -> Result<(Verification, f64), GemmError> {
        self.runner.verify(data, c)
    }

    fn time_config(
        &mut self,
        data: &ShapeData,
        c: &Config,
        policy: &TimingPolicy,
        best_ms: Option<f64>,
        full: bool,
        first_ms: Option<f64>,
    ) -> Result<Timing, GemmError> {
        self.runner
            .time_config(data, c, policy, best_ms, full, first_ms)
    }
}

/// Compile threads: the number given, or every core.
pub fn compile_threads(n: Option<usize>) -> usize {
    n.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|v| v.get())
            .unwrap_or(4)
    })
}

/// A seed from the clock (inputs differ from run to run unless `--seed` is given).
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5eed)
}
