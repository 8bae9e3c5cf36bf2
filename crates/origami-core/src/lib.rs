//! Origami's GPU-free core: what a GEMM config selection needs and nothing that loads CUDA.
//! The hardware description and its tiers (`hw`: schema, presets, calibration files, the
//! fitted constants), the model constants (`constants`), the kernel families and the
//! latency and throughput models (`model`), the setup that turns a request into a selector
//! (`setup`), the selection job and its reports (`pick`, `report`). The command-line tools,
//! calibration and the GEMM runner live in the `origami` crate on top; the Python and C
//! bindings link this crate alone.

pub mod constants;
pub mod dtype;
pub mod engine;
pub mod exit;
pub mod hw;
pub mod input;
pub mod lru;
pub mod model;
pub mod output;
pub mod pick;
pub mod report;
pub mod setup;
pub mod stats;
