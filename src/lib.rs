//! origami: calibrate NVIDIA GPUs with microbenchmarks, predict GEMM latency with the
//! Origami analytical model (the tritonBLAS paper's, as the NVIDIA port report ported it),
//! and pick GEMM tile configurations without autotuning.

pub mod calibrate;
pub mod device;
pub mod gemm;
pub mod gpu;
pub mod perf;
pub mod report;
pub mod usage;

// The GPU-free core, under the paths the tools have always used.
pub use origami_core::{
    constants, dtype, engine, exit, hw, input, model, output, pick, setup, stats,
};
