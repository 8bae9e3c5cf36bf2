//! Performance models that need no GPU: speed of light (SOL), the warp-specialized
//! persistent GEMM model with an L2 reuse model, and the roofline trace; `cli` and `run`
//! hold the flag rules and the jobs of `origami-predict`.
//!
//! Sources: the warp-specialized persistent GEMM model (SOL and WSPersistentGEMM models,
//! s-curve plots) and the NVFP4 group-GEMM roofline trace (first-principles roofline
//! tracing, B200 constants, NVFP4 grouped GEMM). Per-GPU constants live in
//! `calibrations/perf/*.json`, embedded at build time.

pub mod cli;
pub mod gpu;
pub mod l2;
pub mod plot;
pub mod problem;
pub mod roofline;
pub mod run;
pub mod sol;
pub mod table;
pub mod ws;

pub use gpu::{GpuPerf, HardwarePerf, WsConfig, KNOWN_GPUS};
pub use problem::{GemmBytes, OutDtype, Pair, Problem};
pub use roofline::{roofline, Roofline, RooflineOptions};

pub use sol::{sol, Sol};
pub use ws::{ws_predict, L2Mode, WsBreakdown, WsOptions};

/// Errors of the perf models; every one is a bad input (exit code 2 in the binary)
/// except `Io`.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    #[error("unknown gpu '{0}' (known: {known})", known = KNOWN_GPUS.join(", "))]
    UnknownGpu(String),
    #[error("gpu '{gpu}' has no {what} for dtype '{key}' (it has: {have})")]
    NoRate {
        gpu: String,
        what: &'static str,
        key: String,
        have: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {msg}")]
    Input { path: String, msg: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl crate::exit::ToExit for PerfError {
    /// Bad input, but for a failed read or write (run-time failure).
    fn exit_code(&self) -> crate::exit::Exit {
        match self {
            PerfError::Io { .. } => crate::exit::Exit::Runtime,
            _ => crate::exit::Exit::BadInput,
        }
    }
}
