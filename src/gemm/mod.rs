//! The GEMM kernel runner for the `origami` family (`csrc/gemm.cu`, docs/gemm-kernel.md):
//! one NVRTC instance per config, verified against cuBLAS and timed beside it. It took over
//! from the C++ development harness (`scripts/gemm_dev/harness.cu`, in git history up to
//! commit c051717); docs/bench.md describes the method and the H200 results.
//!
//! - [`kernel`]: config -> module spec, launch shape, alignment rule, error bounds, L2
//!   rotation count (pure); the config rule it applies is the origami family's.
//! - [`verify`]: the relative Frobenius error metric and pass rule (pure).
//! - [`measure`]: the timing policy (graph batches, >= 10 samples, screen) over a
//!   [`measure::BatchTimer`], tested with a mock timer (pure).
//! - [`runner`]: the GPU side (parallel NVRTC compile, smem check, registers/spills,
//!   random inputs, NaN poison, cuBLAS reference, CUDA-graph timing).
//! - [`sweep`]: plan, per-config and per-shape rows, A/BF, rank, Kendall tau-b, summary,
//!   resume bookkeeping; `run_shape` drives the runner for one shape.
//! - [`fit`]: refit of the model's empirical constants to a committed sweep (CPU only).

pub mod fit;
pub mod kernel;
pub mod measure;
pub mod runner;
pub mod sweep;
pub mod verify;

use crate::gpu::GpuError;

/// What can go wrong in the runner.
#[derive(Debug, thiserror::Error)]
pub enum GemmError {
    /// Bad problem, config or dtype (exit code 2).
    #[error("{0}")]
    BadInput(String),
    /// The GPU layer failed (its own exit code: 4 for a missing GPU or library).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The module's shared-memory constant disagrees with the formula.
    #[error("config {config}: the module says {module_bytes} bytes of shared memory, the formula {formula_bytes}: csrc/gemm.cu and src/gemm/kernel.rs disagree")]
    SmemMismatch {
        config: String,
        module_bytes: i64,
        formula_bytes: u64,
    },
    /// Anything else at run time.
    #[error("{0}")]
    Runtime(String),
}

impl GemmError {
    /// Process exit code (DESIGN.md): 2 bad input, 4 no GPU/library, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            GemmError::BadInput(_) => 2,
            GemmError::Gpu(e) => e.exit_code(),
            _ => 1,
        }
    }
}
