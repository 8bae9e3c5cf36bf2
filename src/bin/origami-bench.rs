//! `origami-bench`: run the origami GEMM kernel family (csrc/gemm.cu) on the GPU beside
//! cuBLAS; sweep shape lists (pick, brute force, cuBLAS), in shards merged back; re-make
//! reports and refit the model without a GPU. A shell over `origami::gemm` and
//! `origami::report`: parse, call, print, exit code. Method: docs/bench.md.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args as ClapArgs, Parser, Subcommand};

use origami::exit::{finish, help_line, Exit, Failure};
use origami::gemm::bench::{clock_seed, compile_threads, GpuBench};
use origami::gemm::flags::{CorrectionFlags, ModelFlags, RefitFlags, SweepFlags, TimingFlags};
use origami::gemm::measure::TimingPolicy;
use origami::gemm::merge::{merge_shards, MergeRequest};
use origami::gemm::refit::refit;
use origami::gemm::run::{problem_of, run_configs, RunChoice, RunOptions, MAX_PASSES, MAX_WARM_S};
use origami::gemm::sweep_files::summarize_folder;
use origami::gemm::sweep_run::{run_sweep, SweepFolder};
use origami::gpu::Gpu;
use origami::output::write_stdout;
use origami::report::{
    bench as out, plots::sweep_plots, progress::ConsoleProgress, refit as refit_out, run as run_out,
};
use origami::setup::override_file_from_env;

const TOOL: &str = "origami-bench";

/// Benchmark the origami GEMM kernel family against cuBLAS and the model's picks.
#[derive(Parser, Debug)]
#[command(
    name = "origami-bench",
    version,
    after_help = format!("{}\n{EXAMPLES}", help_line(&[Exit::Ok, Exit::Runtime, Exit::BadInput, Exit::NoGpu]))
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

const EXAMPLES: &str = "Examples:\n  origami-bench run 4096 4096 4096 --pick\n  origami-bench run 1000 1000 1000 --config 128x128x32,g8,w8,s4\n  origami-bench sweep --shapes data/seed_shapes.csv --out results/h200/bench\n  origami-bench sweep --shapes data/llm_shapes.csv --seed 7 --shard 0/4 --out runs/shard0\n  origami-bench merge --out results/h200/bench runs/shard0 runs/shard1 runs/shard2 runs/shard3\n  origami-bench report --out results/h200/bench\n  origami-bench refit --out results/h200/bench --fit-set seed_shapes --write calibrations/fitted/h200-origami.json";

#[derive(Subcommand, Debug)]
enum Cmd {
    /// One config (or the model's pick, or the model's top N) on one shape, cuBLAS beside it.
    Run(RunArgs),
    /// Per shape of the lists: the pick, the brute force over the family, cuBLAS.
    Sweep(SweepFlags),
    /// Join the folders of `sweep --shard I/N` into the files of one unsharded run (no GPU).
    Merge(JoinArgs),
    /// Join repeated passes of one sweep (other `--seed`s) into one folder whose times are
    /// each launch's median over the passes, with passes.csv beside (no GPU).
    Passes(JoinArgs),
    /// Re-make summary.json, the plots and the tables from a sweep folder (no GPU).
    Report(ReportArgs),
    /// Fit the model's constants to a sweep folder's measurements (no GPU).
    Refit(RefitFlags),
    /// Fit a learned correction of the model's ranking to a sweep folder's fitting sets and
    /// score it on every set beside the model alone (no GPU; docs/correction.md).
    FitCorrection(CorrectionFlags),
    /// The energy model against a sweep folder's measured energies (`sweep --energy-s`; no
    /// GPU): energy.csv, energy-fronts.png (measured front beside the predicted one) and a
    /// summary (median ratio, Kendall tau over configs, energy and sustained-time picks
    /// among the configs measured).
    Energy(EnergyArgs),
    /// Print a kernel family's configs as CSV (no GPU; origami or hopper): shared memory,
    /// validity and the -D defines of each (what the compile scripts read).
    Configs(ConfigsArgs),
}

#[derive(ClapArgs, Debug)]
struct RunArgs {
    /// Rows of A and C.
    #[arg(allow_hyphen_values = true)]
    m: String,
    /// Columns of B and C.
    #[arg(allow_hyphen_values = true)]
    n: String,
    /// Reduction dimension (a multiple of 8: the kernel loads A and B in 16-byte chunks).
    #[arg(allow_hyphen_values = true)]
    k: String,
    /// A config BMxBNxBK,gG,wW,sS[,switch...][,kS|,sk], repeatable; switches (whole words):
    /// cache_all and unpredicated (origami), cluster and swap (hopper: pairs of CTAs
    /// sharing A or B by multicast; C^T = B A^T), flatten, warp_specialize and
    /// epilogue_subtile (Triton's); kS: split-K in S runs, sk: Stream-K (hopper).
    #[arg(long, conflicts_with_all = ["pick", "top"])]
    config: Vec<String>,
    /// The model's pick (the default).
    #[arg(long)]
    pick: bool,
    /// The model's first N configs.
    #[arg(long)]
    top: Option<usize>,
    #[command(flatten)]
    model: ModelFlags,
    #[command(flatten)]
    timing: TimingFlags,
    /// Also measure energy under sustained load for cuBLAS and every config: back-to-back
    /// launches until NVML's energy counter ticked twice at least this many seconds apart
    /// (0.5-60; about 1 s is enough on an H100, whose counter ticks every ~70 ms): millijoules
    /// per GEMM, average watts, the sustained milliseconds per GEMM. Reads only; sets nothing.
    #[arg(long, value_name = "SECONDS")]
    energy_s: Option<f64>,
    /// Time cuBLAS and every config P times, in alternating order (cuBLAS then the configs,
    /// then backward, ...), and report each one's median over the passes: under the power
    /// cap the clocks drift during a run, and with an even P the drift costs every launch
    /// alike (1 to 8).
    #[arg(long, value_name = "P", default_value_t = 1)]
    passes: usize,
    /// With --passes: time the passes after the first each in a random order of its own
    /// (seeded by the run's seed) instead of backward and forward: under the power cap a
    /// launch also runs faster after a slower, lower-power one, which alternating passes keep
    /// the same every pass.
    #[arg(long)]
    shuffle: bool,
    /// Seconds of untimed back-to-back cuBLAS launches before the first timing (0 to 60;
    /// default 0): every pass then starts at the clock the GPU holds under sustained load
    /// (on an H100 at its 700 W cap), not at a cool GPU's burst clock.
    #[arg(
        long,
        value_name = "S",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    warm_s: f64,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    format: String,
}

/// The arguments of `merge` and `passes`: folders of one sweep into a new one.
#[derive(ClapArgs, Debug)]
struct JoinArgs {
    /// The new folder (created; must not hold a sweep).
    #[arg(long)]
    out: PathBuf,
    /// The folders to join: a sweep's shards in any order (merge), or its passes in the
    /// order passes.csv lists their times (passes: at least two).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Join what there is when shards are missing or a shard or pass is unfinished (cut
    /// by its time budget).
    #[arg(long)]
    allow_partial: bool,
    /// Skip the plots.
    #[arg(long)]
    no_plots: bool,
}

#[derive(ClapArgs, Debug)]
struct ReportArgs {
    /// Sweep folder.
    #[arg(long)]
    out: PathBuf,
    /// Skip the plots.
    #[arg(long)]
    no_plots: bool,
}

#[derive(ClapArgs, Debug)]
struct EnergyArgs {
    /// Sweep folder with energy columns in configs.csv.
    #[arg(long)]
    out: PathBuf,
    /// A calibration with the energy costs (origami-calibrate --only clock,energy); else
    /// the ones committed for the sweep's GPU (calibrations/energy/).
    #[arg(long = "energy-costs", value_name = "FILE.json")]
    energy_costs: Option<PathBuf>,
    /// A power limit for the predictions, W (default: the one the costs were measured
    /// under).
    #[arg(long = "power-limit", value_name = "W")]
    power_limit: Option<f64>,
    /// Skip the plot.
    #[arg(long)]
    no_plots: bool,
    /// Output format of the summary.
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    format: String,
}

#[derive(ClapArgs, Debug)]
struct ConfigsArgs {
    /// Kernel family: origami (csrc/gemm.cu) or hopper (csrc/hopper_gemm.cu).
    #[arg(long, default_value = "origami")]
    family: String,
    /// Input element type (fp16, bf16, or tf32 for the origami family): the defines of its
    /// instances.
    #[arg(long, default_value = "fp16")]
    dtype: String,
    /// Opt-in shared memory per block, bytes: configs above it are listed as invalid.
    #[arg(long)]
    smem_limit: Option<u64>,
}

fn main() -> ExitCode {
    let cli = match origami::usage::parse_args::<Cli>(TOOL) {
        Ok(c) => c,
        Err(exit) => return exit.into(),
    };
    let r = match cli.cmd {
        Cmd::Run(a) => run_cmd(a),
        Cmd::Sweep(a) => sweep_cmd(a),
        Cmd::Merge(a) => merge_cmd(a),
        Cmd::Passes(a) => passes_cmd(a),
        Cmd::Report(a) => report(&a.out, a.no_plots, None),
        Cmd::Refit(a) => refit_cmd(a),
        Cmd::FitCorrection(a) => fit_correction_cmd(a),
        Cmd::Energy(a) => energy_cmd(&a),
        Cmd::Configs(a) => configs_cmd(&a),
    };
    finish(TOOL, r)
}

/// The timing policy, with a warning when the samples are few.
fn policy(t: &TimingFlags) -> Result<TimingPolicy, Failure> {
    t.warning().inspect(|w| eprintln!("{TOOL}: warning: {w}"));
    t.policy()
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

fn run_cmd(a: RunArgs) -> Result<(), Failure> {
    let dtype = a.model.checked_dtype()?;
    let pol = policy(&a.timing)?;
    if !(1..=MAX_PASSES).contains(&a.passes) {
        return Err(Failure::bad(format!(
            "--passes {}: must be 1 to {MAX_PASSES}",
            a.passes
        )));
    }
    if a.shuffle && a.passes < 2 {
        return Err(Failure::bad(
            "--shuffle orders the passes after the first: give --passes 2 or more",
        ));
    }
    if let Some(w) = a.energy_s {
        origami::gemm::energy::check_window(w).map_err(Failure::bad)?;
    }
    if !(0.0..=MAX_WARM_S).contains(&a.warm_s) {
        return Err(Failure::bad(format!(
            "--warm-s {}: must be 0 to {MAX_WARM_S} seconds",
            a.warm_s
        )));
    }
    if a.model.is_auto() && a.model.calibration_only {
        return Err(Failure::bad(
            "--calibration-only with --family auto: the family choice uses each family's own tier; name the family (origami or hopper)",
        ));
    }
    if a.model.is_auto() && !a.config.is_empty() {
        return Err(Failure::bad(
            "--config with --family auto: a config is one family's; name the family (origami or hopper)",
        ));
    }
    let gpu_for_auto = if a.model.is_auto() {
        Some(Gpu::open(0)?)
    } else {
        None
    };
    // --family auto: the family the model chooses for this shape, then a run of it
    let model = match &gpu_for_auto {
        Some(gpu) => {
            let family = auto_family(&a, gpu, dtype)?;
            a.model.for_family(family)
        }
        None => a.model.clone(),
    };
    let kind = model.runner_kernel();
    let p = problem_of(&a.m, &a.n, &a.k, dtype, kind)?;
    let choice = RunChoice::from_flags(&a.config, a.top, kind, dtype)?;
    if let RunChoice::Given(given) = &choice {
        for c in given {
            kind.check_launch(c, &p)?;
        }
    }
    let gpu = match gpu_for_auto {
        Some(g) => g,
        None => Gpu::open(0)?,
    };
    let (_, sel) = model.setup_on(&gpu, dtype)?;
    let mut bench = GpuBench::new(gpu, dtype, kind, compile_threads(None), Instant::now())?;
    let (report, failed) = run_configs(
        &mut bench,
        &sel,
        &p,
        &choice,
        &pol,
        RunOptions {
            seed: clock_seed(),
            energy_s: a.energy_s,
            passes: a.passes,
            warm_s: a.warm_s,
            shuffle: a.shuffle,
        },
    )?;
    failed.iter().for_each(|f| eprintln!("{TOOL}: {f}"));
    match a.format.as_str() {
        "json" => write_stdout(&format!("{}\n", run_out::run_json(&report)))?,
        _ => write_stdout(&run_out::run_text(&report))?,
    }
    if report.any_failed() {
        return Err(Failure::runtime(
            "a config failed to compile or verify (see above)",
        ));
    }
    Ok(())
}

/// The family `--family auto` chooses for the run's shape (`origami-select --family auto`
/// on the same hardware tiers), said on stderr with each member's pick.
fn auto_family(
    a: &RunArgs,
    gpu: &Gpu,
    dtype: origami::dtype::Dtype,
) -> Result<&'static str, Failure> {
    use origami::engine::{Engine, EngineRequest};
    let engine = Engine::new(&EngineRequest {
        device: a.model.gpu.is_none().then(|| gpu.props().clone()),
        gpu: a.model.gpu.clone(),
        hw_file: override_file_from_env(),
        family: origami::model::family_set::AUTO.into(),
        model: a.model.model.clone(),
        no_fitted: a.model.no_fitted,
        no_correction: a.model.no_correction,
        cache_entries: None,
        calibration_only: false,
    })
    .map_err(|e| Failure::bad(e.to_string()))?;
    let dims = [&a.m, &a.n, &a.k].map(|v| origami::model::problem::parse_dim("", v));
    let [Ok(m), Ok(n), Ok(k)] = dims else {
        // the run's own checks name the bad size
        return Ok("origami");
    };
    let pick = engine
        .select(m, n, k, dtype.name())
        .map_err(|e| Failure::bad(e.to_string()))?;
    eprintln!(
        "{TOOL}: --family auto chose {} for {m}x{n}x{k} {}: {} predicted {:.2} us",
        pick.family,
        dtype.name(),
        pick.config_text,
        pick.predicted_us
    );
    Ok(pick.family)
}

fn sweep_cmd(a: SweepFlags) -> Result<(), Failure> {
    a.model.checked_dtype()?;
    // The timing warning, in the order of the checks; every list is read and checked
    // before the GPU is touched (exit 2 on bad input).
    policy(&a.timing)?;
    let req = a.request(command_line())?;
    let progress = ConsoleProgress::new(TOOL);
    let folder = SweepFolder::open(&a.out, req.shard, &progress)?;
    let started = Instant::now();
    let gpu = Gpu::open(0)?;
    let (setup, sel) = a.model.setup_on(&gpu, req.dtype)?;
    let mut bench = GpuBench::new(
        gpu,
        req.dtype,
        a.model.runner_kernel(),
        compile_threads(a.threads),
        started,
    )?;
    let meta = run_sweep(&mut bench, &setup, &sel, &req, folder, &progress)?;
    report(&a.out, a.no_plots, Some(meta.to_value()))?;
    let left = meta.run.shapes_left;
    if left > 0 {
        eprintln!("{TOOL}: {left} shapes not run (time budget); the outputs cover the others");
    }
    Ok(())
}

fn merge_cmd(a: JoinArgs) -> Result<(), Failure> {
    let (dirs, dest) = (a.dirs, a.out.clone());
    let req = MergeRequest {
        dirs,
        dest,
        allow_partial: a.allow_partial,
        command: command_line(),
    };
    let o = merge_shards(&req)?;
    o.warnings()
        .iter()
        .for_each(|w| eprintln!("{TOOL}: warning: {w}"));
    eprintln!(
        "{TOOL}: merged {} shards, {} shapes, into {}",
        o.shards,
        o.shapes,
        a.out.display()
    );
    report(&a.out, a.no_plots, Some(o.meta.to_value()))
}

fn passes_cmd(a: JoinArgs) -> Result<(), Failure> {
    use origami::gemm::passes::{join_passes, PassesRequest};
    let req = PassesRequest {
        dirs: a.dirs,
        dest: a.out.clone(),
        allow_partial: a.allow_partial,
        command: command_line(),
    };
    let o = join_passes(&req)?;
    if o.shapes_left > 0 {
        eprintln!(
            "{TOOL}: warning: {} shapes left out: not in every pass (--allow-partial)",
            o.shapes_left
        );
    }
    if o.models_differ {
        eprintln!(
            "{TOOL}: warning: the passes ran with different models: the predictions and picks are those of the first folder given"
        );
    }
    let pct = |v: Option<f64>| v.map_or_else(|| "-".into(), |x| format!("{:.1} %", 100.0 * x));
    eprintln!(
        "{TOOL}: joined {} passes, {} shapes, into {}; {} launches timed in every pass: spread (slowest / fastest - 1) median {}, above 10 % {}; Kendall tau between the first two passes, median over shapes {}",
        o.passes,
        o.shapes,
        a.out.display(),
        o.launches,
        pct(o.median_spread),
        pct(o.spread_over_10pct),
        o.pass_tau_median
            .map_or_else(|| "-".into(), |t| format!("{t:.3}"))
    );
    report(&a.out, a.no_plots, Some(o.meta.to_value()))
}

/// summary.json (and shapes.csv derived again), then the plots of a sweep folder; the
/// tables on stdout.
fn report(dir: &Path, no_plots: bool, meta: Option<serde_json::Value>) -> Result<(), Failure> {
    let rows = summarize_folder(dir, meta)?;
    if !no_plots {
        sweep_plots(dir, &rows)?;
    }
    write_stdout(&out::report_text(&rows.shapes))?;
    Ok(())
}

/// `energy`: the model's energies beside a sweep's measured ones.
fn energy_cmd(a: &EnergyArgs) -> Result<(), Failure> {
    use origami::gemm::energy_check::check_folder;
    use origami::report::pareto_plot::{front, pareto_png, ParetoPanel};
    if let Some(w) = a.power_limit {
        if !(w.is_finite() && w > 0.0) {
            return Err(Failure::bad(format!(
                "--power-limit: {w} is not a power in watts above 0"
            )));
        }
    }
    let c = check_folder(&a.out, a.energy_costs.as_deref(), a.power_limit)?;
    let csv_path = a.out.join("energy.csv");
    origami::gemm::sweep_files::write_csv(&csv_path, &c.rows)
        .map_err(|e| Failure::runtime(format!("{}: {e}", csv_path.display())))?;
    if !a.no_plots {
        let panels: Vec<ParetoPanel> = c
            .shapes
            .iter()
            .map(|s| {
                let mine: Vec<_> = c
                    .rows
                    .iter()
                    .filter(|r| {
                        r.set == s.set
                            && r.m == s.m
                            && r.n == s.n
                            && r.k == s.k
                            && r.dtype == s.dtype
                    })
                    .collect();
                let pred: Vec<(f64, f64)> = mine
                    .iter()
                    .map(|r| (r.predicted_sustained_us, r.predicted_mj))
                    .collect();
                let meas: Vec<(f64, f64)> = mine
                    .iter()
                    .map(|r| (r.measured_sustained_us, r.measured_mj))
                    .collect();
                ParetoPanel {
                    title: format!(
                        "{}x{}x{} tau {:.2}",
                        s.m,
                        s.n,
                        s.k,
                        s.tau_energy.unwrap_or(f64::NAN)
                    ),
                    predicted_front: front(&pred),
                    predicted: pred,
                    measured_front: front(&meas),
                    measured: meas,
                }
            })
            .collect();
        let png = a.out.join("energy-fronts.png");
        pareto_png(
            &panels,
            "sustained time (x, µs) vs energy per GEMM (y, mJ); grey/blue: predicted, orange: measured",
            &png,
        )
        .map_err(Failure::runtime)?;
    }
    let text = match a.format.as_str() {
        "json" => format!(
            "{:#}\n",
            serde_json::json!({
                "rows": c.rows.len(),
                "shapes": c.shapes,
                "median_ratio": c.median_ratio,
                "median_abs_error": c.median_abs_error,
                "tau_energy_median": c.tau_energy_median,
                "tau_sustained_median": c.tau_sustained_median,
                "energy_pick_median": c.energy_pick_median,
                "energy_pick_min": c.energy_pick_min,
                "sustained_pick_median": c.sustained_pick_median,
                "sustained_pick_min": c.sustained_pick_min,
                "unpriced": c.unpriced,
            })
        ),
        _ => origami::report::energy::energy_text(&c),
    };
    write_stdout(&text)
}

fn fit_correction_cmd(a: CorrectionFlags) -> Result<(), Failure> {
    if let Some(file) = &a.score {
        let (text, rows) =
            origami::gemm::correction_fit::score_file(&a.out, file, &a.gpu, &a.family)?;
        if let Some(path) = &a.per_shape {
            let mut csv = String::from(origami::gemm::correction_fit::PER_SHAPE_HEADER);
            csv.push('\n');
            for r in rows {
                csv.push_str(&r);
                csv.push('\n');
            }
            std::fs::write(path, csv)
                .map_err(|e| Failure::runtime(format!("{}: {e}", path.display())))?;
            eprintln!("{TOOL}: wrote {}", path.display());
        }
        return write_stdout(&text);
    }
    let command = std::iter::once(TOOL.to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let r = origami::gemm::correction_fit::fit_correction(&a.request(command))?;
    write_stdout(&origami::gemm::correction_fit::report_text(&r))?;
    if let Some(path) = &a.write {
        std::fs::write(path, r.correction.file_text())
            .map_err(|e| Failure::runtime(format!("{}: {e}", path.display())))?;
        eprintln!("{TOOL}: wrote {}", path.display());
    }
    Ok(())
}

fn refit_cmd(a: RefitFlags) -> Result<(), Failure> {
    let r = refit(&a.request(override_file_from_env()))?;
    if let Some(s) = &r.scale_step {
        eprintln!("{TOOL}: {}", refit_out::scale_step_line(s));
    }
    write_stdout(&refit_out::refit_text(&r))?;
    if let Some(path) = &a.write {
        std::fs::write(path, refit_out::override_file_text(&r))
            .map_err(|e| Failure::runtime(format!("{}: {e}", path.display())))?;
        eprintln!("{TOOL}: wrote {}", path.display());
    }
    if let Some(path) = &a.predictions {
        std::fs::write(path, refit_out::predictions_csv(&r))
            .map_err(|e| Failure::runtime(format!("{}: {e}", path.display())))?;
        eprintln!("{TOOL}: wrote {}", path.display());
    }
    Ok(())
}

/// `configs`: a family's config listing (`model::family::origami::config_list`,
/// `model::family::hopper::config_list`).
fn configs_cmd(a: &ConfigsArgs) -> Result<(), Failure> {
    use origami::model::family::{hopper, origami as mma};
    let dtype: origami::dtype::Dtype = a.dtype.parse().map_err(Failure::bad)?;
    let text = match a.family.trim() {
        "origami" => mma::config_list::config_list_csv(dtype, a.smem_limit),
        "hopper" => hopper::config_list::config_list_csv(dtype, a.smem_limit),
        other => Err(format!(
            "--family: the listing is of 'origami' or 'hopper' (got '{other}')"
        )),
    }
    .map_err(Failure::bad)?;
    write_stdout(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_argument_and_subcommand_is_described() {
        assert_eq!(
            origami::usage::undocumented(&Cli::command()),
            Vec::<String>::new()
        );
    }
}
