//! origami: calibrate NVIDIA GPUs with microbenchmarks, predict GEMM latency with the
//! Origami analytical model (the tritonBLAS paper's, as the NVIDIA port report ported it),
//! and pick GEMM tile configurations without autotuning.

pub mod calibrate;
pub mod constants;
pub mod dtype;
pub mod exit;
pub mod gemm;
pub mod gpu;
pub mod hw;
pub mod input;
pub mod model;
pub mod output;
pub mod perf;
pub mod pick;
pub mod report;
pub mod setup;
pub mod stats;
pub mod usage;
