//! The typed report of `origami-bench run`, as `gemm::run` produces it: the shape, the
//! device, the model's pick, cuBLAS on the shape and, per chosen config, its instance
//! (registers, spills, shared memory), its check against cuBLAS and its time. Its writers
//! (text, JSON) are in `report::run`; the JSON keys are these fields (a config's run and
//! time flattened into its object).

use serde::Serialize;

use crate::gpu::ClockSample;

/// The shape that ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunShape {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub dtype: String,
}

/// cuBLAS on the shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CublasResult {
    pub median_ms: f64,
    pub cov: f64,
    pub samples: usize,
    pub tflops: f64,
    pub reps: u32,
    /// Energy under sustained load (`--energy-s`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sustained: Option<super::energy::Sustained>,
    /// Each pass's median with `--passes` (the first pass first); `median_ms` is their median.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pass_ms: Vec<f64>,
}

/// A config's time, when it verified.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimedConfig {
    pub median_ms: f64,
    pub cov: f64,
    pub samples: usize,
    pub reps: u32,
    pub tflops: f64,
    /// cuBLAS's median over the config's.
    pub vs_cublas: f64,
    /// Energy under sustained load (`--energy-s`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sustained: Option<super::energy::Sustained>,
    /// Each pass's median with `--passes` (the first pass first); `median_ms` is their median.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pass_ms: Vec<f64>,
}

/// A compiled config: its instance, its check against cuBLAS, its time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RanConfig {
    pub is_pick: bool,
    pub predicted_us: f64,
    pub registers: i32,
    pub local_bytes: i32,
    pub spills: bool,
    pub smem_bytes: u32,
    pub rel_err: f64,
    pub unwritten: u64,
    pub bound: f64,
    pub passed: bool,
    #[serde(flatten)]
    pub timed: Option<TimedConfig>,
}

/// One config of the run: compiled and run, or why not (`error`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigResult {
    pub config: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(flatten)]
    pub ran: Option<RanConfig>,
}

impl ConfigResult {
    /// Compiled and verified.
    pub fn passed(&self) -> bool {
        self.ran.as_ref().is_some_and(|r| r.passed)
    }
}

/// The report of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    pub shape: RunShape,
    pub gpu: String,
    /// The kernel family run (`--family`, or what `auto` chose).
    pub family: String,
    pub model_pick: String,
    pub cublas: CublasResult,
    pub configs: Vec<ConfigResult>,
    pub rotation_copies: u32,
    pub clocks: Option<ClockSample>,
    /// Seconds of back-to-back cuBLAS launches before the first timing (`--warm-s`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmed_s: Option<f64>,
}

impl RunReport {
    /// A config failed to compile or verify.
    pub fn any_failed(&self) -> bool {
        self.configs.iter().any(|c| !c.passed())
    }
}
