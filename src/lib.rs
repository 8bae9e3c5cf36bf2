//! origami: calibrate NVIDIA GPUs with microbenchmarks, predict GEMM latency with the
//! Origami analytical model (tritonBLAS, ported to NVIDIA in seed 000), and pick GEMM
//! tile configurations without autotuning.

pub mod calibrate;
pub mod dtype;
pub mod exit;
pub mod gemm;
pub mod gpu;
pub mod hw;
pub mod model;
pub mod perf;
pub mod pick;
pub mod report;
pub mod setup;
pub mod stats;
