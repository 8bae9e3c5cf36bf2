//! The GEMM kernel runner for the `origami` family (`csrc/gemm.cu`, docs/gemm-kernel.md):
//! one NVRTC instance per config, verified against cuBLAS and timed beside it; the sweep
//! over shape lists (sharded across machines and merged back), the single run, and the
//! refit of the model to a sweep. It took over from the C++ development harness
//! (`scripts/gemm_dev/harness.cu`, in git history up to commit c051717); docs/bench.md
//! describes the method and the H200 results.
//!
//! - [`kernel`]: config -> module spec, launch shape, alignment rule, error bounds, L2
//!   rotation count (pure); the config rule it applies is the origami family's.
//! - [`verify`]: the relative Frobenius error metric and pass rule (pure).
//! - [`measure`]: the timing policy (graph batches, >= 10 samples, screen) over a
//!   [`measure::BatchTimer`], tested with a mock timer (pure).
//! - [`runner`]: the GPU side (parallel NVRTC compile, smem check, registers/spills,
//!   random inputs, NaN poison, cuBLAS reference, CUDA-graph timing).
//! - [`bench`]: the [`bench::GemmBench`] trait (what a sweep or a run needs of a device)
//!   and its GPU implementation; [`mock`]: a deterministic one for tests and CI.
//! - [`flags`]: the model and timing flags of `run` and `sweep`, and what they become.
//! - [`sweep`]: plan, per-config and per-shape rows, A/BF, rank, Kendall tau-b, summary,
//!   resume bookkeeping; `run_shape` runs one shape on a bench.
//! - [`shape_metrics`]: the per-shape rows of a sweep folder derived again from its
//!   `configs.csv` (what `origami-bench report` shows, for any runner) (pure).
//! - [`sweep_files`]: the files of a sweep folder (`configs.csv`, `shapes.csv`,
//!   `summary.json`, the plots' names): CSV rows read, appended and rewritten, the
//!   summary derived again and written.
//! - [`sweep_meta`]: the typed meta of `summary.json` (plan and run) and the shard.
//! - [`sweep_run`]: the sweep driver (lists, shard, resume, budget, outputs).
//! - [`merge`]: shard folders -> the folder one unsharded run writes.
//! - [`passes`]: repeated passes of one sweep -> one folder of per-launch medians.
//! - [`run`]: `origami-bench run` (one shape, the chosen configs, cuBLAS beside), into
//!   the typed report of [`run_report`].
//! - [`fit`]: refit of the model's empirical constants to a committed sweep (CPU only);
//!   [`refit`]: the whole `refit` command around it (setup, scores, absolute scale).

pub mod bench;
pub mod correction_fit;
pub mod energy;
pub mod energy_check;
pub mod fit;
pub mod flags;
pub mod hopper_kernel;
pub mod kernel;
pub mod measure;
pub mod merge;
pub mod mock;
pub mod passes;
pub mod refit;
pub mod run;
pub mod run_report;
pub mod runner;
pub mod shape_metrics;
pub mod sweep;
pub mod sweep_files;
pub mod sweep_meta;
pub mod sweep_run;
pub mod verify;

use crate::exit::{Exit, ToExit};
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

impl ToExit for GemmError {
    /// Bad input, the GPU layer's own code (no GPU or library), a run-time failure otherwise.
    fn exit_code(&self) -> Exit {
        match self {
            GemmError::BadInput(_) => Exit::BadInput,
            GemmError::Gpu(e) => e.exit_code(),
            _ => Exit::Runtime,
        }
    }
}
