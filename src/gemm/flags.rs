//! The flags of `origami-bench` and what they become, checked before the GPU is touched
//! (bad input exits 2 with the flag named). The model flags (`run`, `sweep`): fp16 or
//! bf16, the origami family (the only one with a runner), a known variant; then the model
//! set up on the GPU in hand through [`crate::setup`]. The timing flags: a
//! [`TimingPolicy`]. The sweep's flags: a [`SweepRequest`] (the shard, every shape of
//! every list checked). The refit's flags: a [`RefitRequest`].

use std::path::PathBuf;

use clap::Args;

use crate::dtype::Dtype;
use crate::exit::Failure;
use crate::gpu::Gpu;
use crate::model::Selector;
use crate::setup::{setup, variant_named, Setup, SetupRequest};

use super::measure::TimingPolicy;
use super::refit::RefitRequest;
use super::runner::RunnerKernel;
use super::sweep_meta::Shard;
use super::sweep_run::{read_shape_lists, SweepRequest};

/// How the model that picks the configs is set up.
#[derive(Args, Debug, Clone)]
pub struct ModelFlags {
    /// Input element type: fp16, bf16, or tf32 (fp32 A, B and C on TF32 tensor cores; the
    /// origami family only).
    #[arg(long, default_value = "fp16")]
    pub dtype: String,
    /// Kernel family with a runner: origami (csrc/gemm.cu) or hopper (csrc/hopper_gemm.cu;
    /// compute capability 9.x); `run` also takes auto (the model picks the family per
    /// shape, as `origami-select --family auto`).
    #[arg(long, default_value = "origami")]
    pub family: String,
    /// Model variant for the pick: origami or seed (the NVIDIA port report's model as
    /// published).
    #[arg(long, default_value = "origami")]
    pub model: String,
    /// Use this GPU's embedded preset for the model's parameters instead of the GPU found.
    #[arg(long)]
    pub gpu: Option<String>,
    /// Leave out the constants fitted for the family on this architecture (embedded from
    /// calibrations/fitted/): the latency model of the NVIDIA port report as published.
    #[arg(long = "no-fitted")]
    pub no_fitted: bool,
    /// Pick with the calibration-only tier: the throughput model's constants from the
    /// measurements of the calibration named by TRITONBLAS_HW_PARAMS, nothing fitted
    /// (docs/calibration-only.md).
    #[arg(long = "calibration-only", conflicts_with = "no_fitted")]
    pub calibration_only: bool,
    /// Pick without the family's learned correction (docs/correction.md): the model alone.
    #[arg(long = "no-correction")]
    pub no_correction: bool,
}

impl ModelFlags {
    /// The input type, with the family and the variant checked (no GPU needed).
    pub fn checked_dtype(&self) -> Result<Dtype, Failure> {
        let dtype = self
            .dtype
            .parse::<Dtype>()
            .map_err(|e| Failure::bad(format!("--dtype: {e}")))?;
        // the widest rule of the families with a runner (the origami kernel's); the
        // hopper kernel's narrower one is its runner's check
        if let Some(why) = crate::model::family::origami::dtype_violation(dtype) {
            return Err(Failure::bad(format!("--dtype: {why}")));
        }
        if RunnerKernel::of_family(&self.family).is_none() && !self.is_auto() {
            return Err(Failure::bad(format!(
                "--family: only 'origami' and 'hopper' have a kernel runner, and 'auto' chooses between them (got '{}')",
                self.family
            )));
        }
        variant_named(&self.model)?;
        Ok(dtype)
    }

    /// `--family auto`: the model chooses the family per shape (`model::family_set`).
    pub fn is_auto(&self) -> bool {
        self.family
            .trim()
            .eq_ignore_ascii_case(crate::model::family_set::AUTO)
    }

    /// The same flags for one family (what `auto` chose).
    pub fn for_family(&self, family: &str) -> ModelFlags {
        ModelFlags {
            family: family.to_string(),
            ..self.clone()
        }
    }

    /// The kernel the runner compiles (the family, checked by `checked_dtype`).
    pub fn runner_kernel(&self) -> RunnerKernel {
        RunnerKernel::of_family(&self.family).unwrap_or(RunnerKernel::Origami)
    }

    /// The model on `gpu` (its properties, or `--gpu`'s preset; `TRITONBLAS_HW_PARAMS` on
    /// top; the fitted tier unless `--no-fitted`, or the calibration-only tier) and its
    /// selector for `dtype`.
    pub fn setup_on(&self, gpu: &Gpu, dtype: Dtype) -> Result<(Setup, Selector<'static>), Failure> {
        let device = self.gpu.is_none().then(|| gpu.props().clone());
        let req = SetupRequest {
            calibration_only: self.calibration_only,
            ..SetupRequest::from_env(
                device,
                self.gpu.clone(),
                &self.family,
                &self.model,
                self.no_fitted,
            )
        };
        let mut s = setup(&req)?;
        if self.no_correction {
            s = s.without_correction();
        }
        let sel = s.selector(dtype)?;
        Ok((s, sel))
    }
}

/// How configs and cuBLAS are timed.
#[derive(Args, Debug, Clone)]
pub struct TimingFlags {
    /// Samples per full measurement (at least 10 recommended; the median is reported).
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
    /// Samples before the brute-force screen (configs slower than --screen-cut x the best
    /// so far stop there).
    #[arg(long, default_value_t = 3)]
    pub screen_samples: usize,
    /// Screen threshold (ratio to the best median so far); 0 disables the screen.
    #[arg(long, default_value_t = 1.25)]
    pub screen_cut: f64,
    /// Target duration of one sample (a CUDA graph of back-to-back launches), ms.
    #[arg(long, default_value_t = 0.5)]
    pub sample_ms: f64,
}

impl TimingFlags {
    /// The policy (bad input names the flag).
    pub fn policy(&self) -> Result<TimingPolicy, Failure> {
        TimingPolicy::from_flags(
            self.samples,
            self.screen_samples,
            self.screen_cut,
            self.sample_ms,
        )
        .map_err(Failure::bad)
    }

    /// The warning a tool prints when the samples are few.
    pub fn warning(&self) -> Option<String> {
        (self.samples < 10).then(|| {
            format!(
                "--samples {} is below 10; medians of few samples are noisy",
                self.samples
            )
        })
    }
}

/// The flags of `origami-bench sweep`.
#[derive(Args, Debug, Clone)]
pub struct SweepFlags {
    /// Shape lists (CSV with M,N,K[,dtype][,model,layer]); repeatable; the set name is the file stem.
    #[arg(long, required = true)]
    pub shapes: Vec<PathBuf>,
    /// Output folder (created; an earlier run there is resumed: finished shapes are skipped).
    #[arg(long, default_value = "bench-out")]
    pub out: PathBuf,
    /// Run shard I of N: the shapes at positions I, I+N, ... of the lists (from 0); join
    /// the shards' folders with `merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Only the first N configs of the model's order per shape (the pick always).
    #[arg(long)]
    pub max_configs: Option<usize>,
    /// N configs spread over the model's whole order per shape: the pick, the last, and
    /// ranks at geometric steps between (configs that differ a lot: for scoring a model
    /// across the space, e.g. energy, at N configs per shape).
    #[arg(long, value_name = "N", conflicts_with_all = ["max_configs", "only_pick"])]
    pub spread: Option<usize>,
    /// Only the pick (and cuBLAS).
    #[arg(long)]
    pub only_pick: bool,
    /// Stop starting new shapes once this many seconds are used (resume later).
    #[arg(long)]
    pub time_budget_s: Option<f64>,
    /// Also measure every fully timed config's energy under sustained load (NVML's energy
    /// counter, a window of this many seconds, 0.5-60; at least that long per config: pair
    /// it with --max-configs or --only-pick): configs.csv's energy_mj, energy_w and
    /// sustained_ms columns.
    #[arg(long, value_name = "SECONDS")]
    pub energy_s: Option<f64>,
    /// Compile threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Base seed of the random inputs (default: from the clock; give shards one seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Skip the plots.
    #[arg(long)]
    pub no_plots: bool,
    #[command(flatten)]
    pub model: ModelFlags,
    #[command(flatten)]
    pub timing: TimingFlags,
}

impl SweepFlags {
    /// The sweep asked for, with `command` (the command line) for its meta.
    pub fn request(&self, command: String) -> Result<SweepRequest, Failure> {
        let dtype = self.model.checked_dtype()?;
        if self.model.is_auto() {
            return Err(Failure::bad(
                "--family auto: a sweep brute-forces one kernel's space; sweep origami and hopper each, or time auto's picks with `origami-bench run --family auto` (scripts/hopper/auto_check.sh)",
            ));
        }
        let policy = self.timing.policy()?;
        if self.max_configs == Some(0) {
            return Err(Failure::bad("--max-configs: must be at least 1"));
        }
        if self.spread.is_some_and(|n| n < 2) {
            return Err(Failure::bad(
                "--spread: must be at least 2 (the pick and the last config)",
            ));
        }
        if let Some(w) = self.energy_s {
            super::energy::check_window(w).map_err(Failure::bad)?;
        }
        let shard = self.shard.as_deref().map(Shard::parse).transpose();
        Ok(SweepRequest {
            shard: shard.map_err(Failure::bad)?,
            lists: read_shape_lists(&self.shapes, dtype)?,
            dtype,
            model: self.model.model.clone(),
            max_configs: self.max_configs,
            spread: self.spread,
            only_pick: self.only_pick,
            time_budget_s: self.time_budget_s,
            energy_s: self.energy_s,
            seed: self.seed,
            policy,
            command,
        })
    }
}

/// The flags of `origami-bench refit`.
#[derive(Args, Debug, Clone)]
pub struct RefitFlags {
    /// Sweep folder (its configs.csv).
    #[arg(long)]
    pub out: PathBuf,
    /// Sets (shape-list stems) to fit on; the others are reported as held out.
    #[arg(long = "fit-set", required = true)]
    pub fit_sets: Vec<String>,
    /// Write the fitted override (flat TRITONBLAS_HW_PARAMS JSON) here.
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// Write the fitted model's prediction beside the measured time of every timed launch
    /// here (CSV: set, shape, config, predicted and measured us, whether it is the pick).
    #[arg(long)]
    pub predictions: Option<PathBuf>,
    /// Start from the calibration-only tier: the throughput model's constants from the
    /// measurements of the calibration named by TRITONBLAS_HW_PARAMS, nothing fitted
    /// (with --rounds 0: that tier's score; docs/calibration-only.md).
    #[arg(long = "calibration-only")]
    pub calibration_only: bool,
    /// Coordinate-descent rounds.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Knobs the descent leaves at their starting value (comma separated): constants
    /// measured rather than fitted, e.g. tp_l2_active_exponent from origami-calibrate
    /// --only l2-sms, set in TRITONBLAS_HW_PARAMS.
    #[arg(long, value_delimiter = ',')]
    pub hold: Vec<String>,
    /// Weight of the mean Kendall tau-b in the objective (mean A/BF + this x tau).
    #[arg(long = "tau-weight", default_value_t = super::fit::DEFAULT_TAU_WEIGHT)]
    pub tau_weight: f64,
    /// Preset whose GPU description and parameters the fit starts from (TRITONBLAS_HW_PARAMS is applied on top).
    #[arg(long, default_value = "h200")]
    pub gpu: String,
    /// Model variant: origami or seed (the NVIDIA port report's model as published).
    #[arg(long, default_value = "origami")]
    pub model: String,
    /// Input type of the rows to use.
    #[arg(long, default_value = "fp16")]
    pub dtype: String,
    /// Kernel family the measurements are of (origami: this project's kernel; triton: a
    /// triton_sweep.py run converted to configs.csv).
    #[arg(long, default_value = "origami")]
    pub family: String,
}

impl RefitFlags {
    /// The refit asked for, with the override file (`TRITONBLAS_HW_PARAMS`) on top of the
    /// preset.
    pub fn request(&self, override_file: Option<PathBuf>) -> RefitRequest {
        RefitRequest {
            dir: self.out.clone(),
            fit_sets: self.fit_sets.clone(),
            rounds: self.rounds,
            tau_weight: self.tau_weight,
            gpu: self.gpu.clone(),
            model: self.model.clone(),
            dtype: self.dtype.clone(),
            family: self.family.clone(),
            override_file,
            calibration_only: self.calibration_only,
            held: self.hold.clone(),
        }
    }
}

/// The flags of `origami-bench fit-correction`.
#[derive(Args, Debug, Clone)]
pub struct CorrectionFlags {
    /// Sweep folder (its configs.csv: the fitting sets' rows and any held-out ones).
    #[arg(long)]
    pub out: PathBuf,
    /// Sets (shape-list stems) to fit on; every other set and type is scored as held out.
    #[arg(long = "fit-set", required_unless_present = "score")]
    pub fit_sets: Vec<String>,
    /// Write the correction file (calibrations/fitted/<gpu>-<family>-correction.json) here.
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// Fit nothing: score this correction file (or `embedded`, the one the selection
    /// applies) against the model alone on every set of the folder, each selection within
    /// the launches the sweep timed (another GPU's sweep, an older space's).
    #[arg(long, conflicts_with = "write", value_name = "FILE|embedded")]
    pub score: Option<String>,
    /// With --score: also write every shape's scores here as CSV (set, dtype, M, N, K, the
    /// launches the tau ranks, A/BF and Kendall tau of the model alone and corrected).
    #[arg(long = "per-shape", requires = "score", value_name = "FILE.csv")]
    pub per_shape: Option<PathBuf>,
    /// Preset whose GPU the sweep ran on (the family's embedded fitted constants apply).
    #[arg(long, default_value = "h100-sxm")]
    pub gpu: String,
    /// Input type of the fitting rows.
    #[arg(long, default_value = "fp16")]
    pub dtype: String,
    /// Kernel family the sweep is of (one with fitted throughput-model constants).
    #[arg(long, default_value = "hopper")]
    pub family: String,
    /// The fitting shapes' launches the residual is fitted on: those of the selection's
    /// space, or every config of the family's compiled table the sweep timed (`compiled`).
    /// The folds and every score stay within the selection's space.
    #[arg(long = "fit-space", value_enum, default_value = "selection")]
    pub fit_space: super::correction_fit::FitSpace,
    /// Boosting rounds (trees) to choose among (comma separated; cross-validated).
    #[arg(long, value_delimiter = ',', default_value = "300,600")]
    pub trees: Vec<usize>,
    /// Leaves per tree at most, to choose among.
    #[arg(long, value_delimiter = ',', default_value = "15,31,63")]
    pub leaves: Vec<usize>,
    /// Launches per leaf at least, to choose among.
    #[arg(long = "min-leaf", value_delimiter = ',', default_value = "40,100,200")]
    pub min_leaf: Vec<usize>,
    /// Cross-validation folds over the fitting shapes (whole shapes per fold).
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Weight of the mean Kendall tau-b in the choice (mean A/BF + this x tau), as refit's.
    #[arg(long = "tau-weight", default_value_t = super::fit::DEFAULT_TAU_WEIGHT)]
    pub tau_weight: f64,
    /// Shrinkage of each tree.
    #[arg(long = "learning-rate", default_value_t = 0.05)]
    pub learning_rate: f64,
    /// Guards to choose among (comma separated fractions): a pick must be predicted by the
    /// model within this share beyond the tie band of its best (0: within the tie band).
    #[arg(long, value_delimiter = ',', default_value = "0,0.03,0.1")]
    pub guard: Vec<f64>,
}

impl CorrectionFlags {
    /// The fit asked for; `command` is recorded in the file.
    pub fn request(&self, command: String) -> super::correction_fit::CorrectionRequest {
        super::correction_fit::CorrectionRequest {
            dir: self.out.clone(),
            fit_sets: self.fit_sets.clone(),
            dtype: self.dtype.clone(),
            gpu: self.gpu.clone(),
            family: self.family.clone(),
            fit_space: self.fit_space,
            trees: self.trees.clone(),
            leaves: self.leaves.clone(),
            min_leaf: self.min_leaf.clone(),
            learning_rate: self.learning_rate,
            guards: self.guard.clone(),
            folds: self.folds,
            tau_weight: self.tau_weight,
            command,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Exit;

    fn flags(dtype: &str, family: &str, model: &str) -> ModelFlags {
        ModelFlags {
            dtype: dtype.into(),
            family: family.into(),
            model: model.into(),
            gpu: None,
            no_fitted: false,
            calibration_only: false,
            no_correction: false,
        }
    }

    #[test]
    fn model_flags_are_checked_with_the_flag_named() {
        assert_eq!(
            flags("bf16", "origami", "seed").checked_dtype(),
            Ok(Dtype::Bf16)
        );
        for (d, f, m, needle) in [
            ("fp8", "origami", "origami", "--dtype"),
            ("fp32", "origami", "origami", "ask for tf32"),
            (
                "fp16",
                "triton",
                "origami",
                "--family: only 'origami' and 'hopper'",
            ),
            ("fp16", "origami", "nope", "--model: unknown model 'nope'"),
        ] {
            let e = flags(d, f, m).checked_dtype().unwrap_err();
            assert_eq!(e.exit, Exit::BadInput);
            assert!(e.msg.contains(needle), "{e}");
        }
    }

    #[test]
    fn timing_flags_become_the_policy() {
        let mut t = TimingFlags {
            samples: 5,
            screen_samples: 8,
            screen_cut: 0.0,
            sample_ms: 0.5,
        };
        let p = t.policy().unwrap();
        assert_eq!(p.screen_samples, 5);
        assert!(p.screen_cut.is_infinite());
        assert!(t.warning().is_some());
        t.screen_cut = 0.5;
        assert!(t.policy().unwrap_err().msg.contains("--screen-cut"));
    }
}
