//! `origami-bench`: run the origami GEMM kernel family (csrc/gemm.cu) on the GPU, verified
//! against cuBLAS and timed beside it; sweep shape lists (the model's pick, the brute force
//! over the family, cuBLAS) into CSV/JSON/PNG; re-make reports and refit the model's
//! constants from a committed sweep without a GPU. Method: docs/bench.md.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};
use serde_json::json;

use origami::dtype::Dtype;
use origami::gemm::fit::{
    fit, measured_shapes, median_time_ratio, score, score_with, FitState, LaunchTable,
};
use origami::gemm::kernel::{check_config, check_problem, error_bound, tflops};
use origami::gemm::measure::TimingPolicy;
use origami::gemm::runner::Runner;
use origami::gemm::sweep::{
    done_keys, keep_complete, plan, run_shape, shape_row, ConfigRow, ShapeRow, SweepOptions,
};
use origami::gemm::GemmError;
use origami::gpu::{Gpu, GpuError};
use origami::hw::{resolve, ResolveInput, Resolved, HW_PARAMS_ENV};
use origami::model::family::family;
use origami::model::problem::{parse_config, parse_dim};
use origami::model::shapes::read_shapes;
use origami::model::{Config, ModelConstants, Problem, Selector, Variant};
use origami::report::bench as out;
use origami::report::plots;

/// Benchmark the origami GEMM kernel family against cuBLAS and the model's picks.
#[derive(Parser, Debug)]
#[command(
    name = "origami-bench",
    version,
    after_help = "Exit codes: 0 ok, 1 runtime failure, 2 bad input, 4 no GPU or CUDA library.\nExamples:\n  origami-bench run 4096 4096 4096 --pick\n  origami-bench run 1000 1000 1000 --config 128x128x32,g8,w8,s4\n  origami-bench sweep --shapes data/seed_shapes.csv --out results/h200/bench\n  origami-bench report --out results/h200/bench\n  origami-bench refit --out results/h200/bench --fit-set seed_shapes --write calibrations/fitted/h200-origami.json"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// One config (or the model's pick, or the model's top N) on one shape, cuBLAS beside it.
    Run(RunArgs),
    /// Per shape of the lists: the pick, the brute force over the family, cuBLAS.
    Sweep(SweepArgs),
    /// Re-make summary.json, the plots and the tables from a sweep folder (no GPU).
    Report(ReportArgs),
    /// Fit the model's constants to a sweep folder's measurements (no GPU).
    Refit(RefitArgs),
    /// Print the origami kernel's configs as CSV (no GPU): warp grid, shared memory,
    /// validity and the -D defines of each (what the compile scripts read).
    Configs(ConfigsArgs),
}

#[derive(ClapArgs, Debug, Clone)]
struct ModelArgs {
    /// Input element type: fp16 or bf16.
    #[arg(long, default_value = "fp16")]
    dtype: String,
    /// Kernel family (only origami has a runner).
    #[arg(long, default_value = "origami")]
    family: String,
    /// Model variant for the pick: origami or seed.
    #[arg(long, default_value = "origami")]
    model: String,
    /// Use this GPU's embedded preset for the model's parameters instead of the GPU found.
    #[arg(long)]
    gpu: Option<String>,
    /// Leave out the constants fitted for the family on this architecture (embedded from
    /// calibrations/fitted/): the seed 000 latency model as published.
    #[arg(long = "no-fitted")]
    no_fitted: bool,
}

#[derive(ClapArgs, Debug, Clone)]
struct TimingArgs {
    /// Samples per full measurement (at least 10 recommended; the median is reported).
    #[arg(long, default_value_t = 10)]
    samples: usize,
    /// Samples before the brute-force screen (configs slower than --screen-cut x the best
    /// so far stop there).
    #[arg(long, default_value_t = 3)]
    screen_samples: usize,
    /// Screen threshold (ratio to the best median so far); 0 disables the screen.
    #[arg(long, default_value_t = 1.25)]
    screen_cut: f64,
    /// Target duration of one sample (a CUDA graph of back-to-back launches), ms.
    #[arg(long, default_value_t = 0.5)]
    sample_ms: f64,
}

#[derive(ClapArgs, Debug)]
struct RunArgs {
    #[arg(allow_hyphen_values = true)]
    m: String,
    #[arg(allow_hyphen_values = true)]
    n: String,
    #[arg(allow_hyphen_values = true)]
    k: String,
    /// A config BMxBNxBK,gG,wW,sS.
    #[arg(long, conflicts_with_all = ["pick", "top"])]
    config: Vec<String>,
    /// The model's pick (the default).
    #[arg(long)]
    pick: bool,
    /// The model's first N configs.
    #[arg(long)]
    top: Option<usize>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    timing: TimingArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
enum Format {
    Text,
    Json,
}

#[derive(ClapArgs, Debug)]
struct SweepArgs {
    /// Shape lists (CSV with M,N,K[,dtype][,model,layer]); repeatable; the set name is the file stem.
    #[arg(long, required = true)]
    shapes: Vec<PathBuf>,
    /// Output folder (created; an earlier run there is resumed: finished shapes are skipped).
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
    /// Only the first N configs of the model's order per shape (the pick always).
    #[arg(long)]
    max_configs: Option<usize>,
    /// Only the pick (and cuBLAS).
    #[arg(long)]
    only_pick: bool,
    /// Stop starting new shapes once this many seconds are used (resume later).
    #[arg(long)]
    time_budget_s: Option<f64>,
    /// Compile threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Base seed of the random inputs (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// Skip the plots.
    #[arg(long)]
    no_plots: bool,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    timing: TimingArgs,
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
struct RefitArgs {
    /// Sweep folder (its configs.csv).
    #[arg(long)]
    out: PathBuf,
    /// Sets (shape-list stems) to fit on; the others are reported as held out.
    #[arg(long = "fit-set", required = true)]
    fit_sets: Vec<String>,
    /// Write the fitted override (flat TRITONBLAS_HW_PARAMS JSON) here.
    #[arg(long)]
    write: Option<PathBuf>,
    /// Coordinate-descent rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Weight of the mean Kendall tau-b in the objective (mean A/BF + this x tau).
    #[arg(long = "tau-weight", default_value_t = origami::gemm::fit::DEFAULT_TAU_WEIGHT)]
    tau_weight: f64,
    /// Preset whose GPU description and parameters the fit starts from (TRITONBLAS_HW_PARAMS is applied on top).
    #[arg(long, default_value = "h200")]
    gpu: String,
    /// Model variant.
    #[arg(long, default_value = "origami")]
    model: String,
    /// Input type of the rows to use.
    #[arg(long, default_value = "fp16")]
    dtype: String,
    /// Kernel family the measurements are of (origami: this project's kernel; triton: a
    /// triton_sweep.py run converted to configs.csv).
    #[arg(long, default_value = "origami")]
    family: String,
}

#[derive(ClapArgs, Debug)]
struct ConfigsArgs {
    /// Input element type (fp16 or bf16): the defines of its instances.
    #[arg(long, default_value = "fp16")]
    dtype: String,
    /// Opt-in shared memory per block, bytes: configs above it are listed as invalid.
    #[arg(long)]
    smem_limit: Option<u64>,
}

/// A failure with its exit code.
struct Fail {
    code: u8,
    msg: String,
}

fn bad(msg: impl std::fmt::Display) -> Fail {
    Fail {
        code: 2,
        msg: msg.to_string(),
    }
}

fn runtime(msg: impl std::fmt::Display) -> Fail {
    Fail {
        code: 1,
        msg: msg.to_string(),
    }
}

impl From<GemmError> for Fail {
    fn from(e: GemmError) -> Self {
        Fail {
            code: e.exit_code() as u8,
            msg: e.to_string(),
        }
    }
}

impl From<GpuError> for Fail {
    fn from(e: GpuError) -> Self {
        Fail {
            code: e.exit_code() as u8,
            msg: e.to_string(),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run(a) => run_cmd(a),
        Cmd::Sweep(a) => sweep_cmd(a),
        Cmd::Report(a) => report_cmd(&a.out, a.no_plots, None).map(|_| ()),
        Cmd::Refit(a) => refit_cmd(a),
        Cmd::Configs(a) => configs_cmd(&a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("origami-bench: error: {}", f.msg);
            ExitCode::from(f.code)
        }
    }
}

/// Validated model choices (no GPU needed).
struct ModelChoice {
    dtype: Dtype,
    family: &'static dyn origami::model::KernelFamily,
    variant: Variant,
}

fn model_choice(a: &ModelArgs) -> Result<ModelChoice, Fail> {
    let dtype = a
        .dtype
        .parse::<Dtype>()
        .map_err(|e| bad(format!("--dtype: {e}")))?;
    if !matches!(dtype, Dtype::Fp16 | Dtype::Bf16) {
        return Err(bad(format!(
            "--dtype: the origami kernel runs fp16 or bf16, not {dtype}"
        )));
    }
    if a.family != "origami" {
        return Err(bad(format!(
            "--family: only 'origami' has a kernel runner (got '{}')",
            a.family
        )));
    }
    let family = family("origami").expect("the origami family exists");
    let variant = Variant::parse(&a.model).ok_or_else(|| {
        bad(format!(
            "--model: unknown model '{}' (known: origami, seed)",
            a.model
        ))
    })?;
    Ok(ModelChoice {
        dtype,
        family,
        variant,
    })
}

fn policy(t: &TimingArgs) -> Result<TimingPolicy, Fail> {
    if t.samples == 0 || t.screen_samples == 0 {
        return Err(bad("--samples and --screen-samples must be at least 1"));
    }
    if !(t.sample_ms > 0.0 && t.sample_ms.is_finite()) {
        return Err(bad("--sample-ms must be a positive number"));
    }
    if t.screen_cut != 0.0 && !(t.screen_cut >= 1.0 && t.screen_cut.is_finite()) {
        return Err(bad("--screen-cut must be 0 (off) or at least 1"));
    }
    if t.samples < 10 {
        eprintln!(
            "origami-bench: warning: --samples {} is below 10; medians of few samples are noisy",
            t.samples
        );
    }
    Ok(TimingPolicy {
        samples: t.samples,
        screen_samples: t.screen_samples.min(t.samples),
        screen_cut: if t.screen_cut == 0.0 {
            f64::INFINITY
        } else {
            t.screen_cut
        },
        target_sample_ms: t.sample_ms,
        max_reps: 512,
    })
}

/// Resolve the model's hardware: the GPU found (tier 1 + its embedded calibration), or
/// `--gpu NAME`'s preset; TRITONBLAS_HW_PARAMS on top (as origami-select).
fn resolve_hw(gpu: Option<&Gpu>, preset: Option<&String>) -> Result<Resolved, Fail> {
    let override_file = std::env::var_os(HW_PARAMS_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let device = match (preset, gpu) {
        (None, Some(g)) => Some(g.props().clone()),
        _ => None,
    };
    resolve(&ResolveInput {
        device,
        gpu_name: preset.cloned(),
        override_file,
    })
    .map_err(|e| match e {
        origami::hw::resolve::ResolveError::File(e) => bad(format!("{HW_PARAMS_ENV}: {e}")),
        other => bad(format!("--gpu: {other}")),
    })
}

/// The selector for the GPU in hand: its hardware parameters resolved as origami-select
/// does (tier 1 from the device, its preset, TRITONBLAS_HW_PARAMS), or from `--gpu`.
fn selector_on(
    gpu: &Gpu,
    args: &ModelArgs,
    mc: &ModelChoice,
) -> Result<(Selector<'static>, Resolved), Fail> {
    let mut res = resolve_hw(Some(gpu), args.gpu.as_ref())?;
    if !args.no_fitted {
        origami::hw::fitted::apply_fitted(&mut res, mc.family.name());
    }
    let consts = constants_of(&res)?;
    let sel = Selector::new(
        mc.family,
        &res.gpu,
        &res.params,
        &consts,
        mc.variant,
        mc.dtype,
    )
    .map_err(|e| bad(format!("--family origami: {e}")))?;
    Ok((sel, res))
}

fn constants_of(res: &Resolved) -> Result<ModelConstants, Fail> {
    ModelConstants::with_overrides(res.constants.iter().map(|(k, (v, _))| (k.as_str(), *v)))
        .map_err(|e| bad(format!("hardware parameters: {e}")))
}

fn open_gpu() -> Result<Gpu, Fail> {
    Ok(Gpu::open(0)?)
}

fn threads(n: Option<usize>) -> usize {
    n.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|v| v.get())
            .unwrap_or(4)
    })
}

fn run_cmd(a: RunArgs) -> Result<(), Fail> {
    let mc = model_choice(&a.model)?;
    let pol = policy(&a.timing)?;
    let m = parse_dim("M", &a.m).map_err(bad)?;
    let n = parse_dim("N", &a.n).map_err(bad)?;
    let k = parse_dim("K", &a.k).map_err(bad)?;
    let p = Problem {
        m,
        n,
        k,
        dtype: mc.dtype,
    };
    check_problem(&p)?;
    let mut given: Vec<Config> = Vec::new();
    for c in &a.config {
        let c = parse_config(c).map_err(|e| bad(format!("--config: {e}")))?;
        check_config(&c)?;
        given.push(c);
    }
    if a.top == Some(0) {
        return Err(bad("--top: must be at least 1"));
    }
    let gpu = open_gpu()?;
    let (sel, _) = selector_on(&gpu, &a.model, &mc)?;
    let (selection, planned) = plan(&sel, &p, a.top, a.top.is_none());
    let configs: Vec<(Config, bool, f64)> = if given.is_empty() {
        planned
            .iter()
            .map(|x| (x.config, x.is_pick, x.predicted_us))
            .collect()
    } else {
        given
            .iter()
            .map(|c| {
                // The config's own prediction (its launch included); a config outside the
                // family's feasible set gets its tile's.
                let cycles = sel.predict_config(&p, c).unwrap_or_else(|| {
                    sel.predict_tile(&p, (c.block_m, c.block_n, c.block_k), c.group_m)
                        .l_total
                });
                (*c, *c == selection.pick.config, sel.cycles_to_us(cycles))
            })
            .collect()
    };
    let mut runner = Runner::new(gpu, mc.dtype)?;
    let cfgs: Vec<Config> = configs.iter().map(|c| c.0).collect();
    let fails = runner.compile_all(&cfgs, threads(None), &|| {});
    for f in &fails {
        eprintln!("origami-bench: {f}");
    }
    let seed = clock_seed();
    let mut data = runner.prepare(&p, seed)?;
    let cb = runner.time_cublas(&data, &pol)?;
    let cbs = cb
        .summary()
        .ok_or_else(|| runtime("cuBLAS gave no finite sample"))?;
    let mut results = Vec::new();
    for (c, is_pick, pred_us) in &configs {
        let inst = match runner.instance(c) {
            Ok(i) => i,
            Err(e) => {
                results.push(json!({"config": c.to_string(), "error": e}));
                continue;
            }
        };
        let (regs, local, smem) = (
            inst.attrs.num_regs,
            inst.attrs.local_size_bytes,
            inst.smem_bytes,
        );
        let (v, first_ms) = runner.verify(&mut data, c)?;
        let mut r = json!({
            "config": c.to_string(), "is_pick": is_pick, "predicted_us": pred_us,
            "registers": regs, "local_bytes": local, "spills": local > 0, "smem_bytes": smem,
            "rel_err": v.rel_err, "unwritten": v.unwritten, "bound": error_bound(mc.dtype), "passed": v.passed,
        });
        if v.passed {
            let t = runner.time_config(&data, c, &pol, None, true, Some(first_ms))?;
            if let Some(s) = t.summary() {
                let o = r.as_object_mut().expect("object");
                o.insert("median_ms".into(), json!(s.median));
                o.insert("cov".into(), json!(s.cov));
                o.insert("samples".into(), json!(s.n));
                o.insert("reps".into(), json!(t.reps));
                o.insert("tflops".into(), json!(tflops(&p, s.median)));
                o.insert("vs_cublas".into(), json!(cbs.median / s.median));
            }
        }
        results.push(r);
    }
    let clocks = runner.gpu.nvml_sample().ok();
    let any_failed = results
        .iter()
        .any(|r| r.get("passed") != Some(&json!(true)));
    let doc = json!({
        "shape": {"m": p.m, "n": p.n, "k": p.k, "dtype": p.dtype.to_string()},
        "gpu": runner.gpu.props().name,
        "model_pick": selection.pick.config.to_string(),
        "cublas": {"median_ms": cbs.median, "cov": cbs.cov, "samples": cbs.n, "tflops": tflops(&p, cbs.median), "reps": cb.reps},
        "configs": results,
        "rotation_copies": data.rotation,
        "clocks": clocks,
    });
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&doc).map_err(runtime)?),
        Format::Text => {
            println!(
                "{}x{}x{} {} on {} (model pick {}; inputs rotated over {} copies)",
                p.m,
                p.n,
                p.k,
                p.dtype,
                runner.gpu.props().name,
                selection.pick.config,
                data.rotation
            );
            println!(
                "{:<22} {:>10} {:>7} {:>9} {:>8} {:>5} {:>6} {:>10} {:>6}",
                "config",
                "median ms",
                "CoV",
                "TFLOP/s",
                "vs cuB",
                "regs",
                "spill",
                "rel_err",
                "pred us"
            );
            println!(
                "{:<22} {:>10.4} {:>7.3} {:>9.1}",
                "cuBLAS",
                cbs.median,
                cbs.cov,
                tflops(&p, cbs.median)
            );
            for r in &results {
                let f = |k: &str| r.get(k).and_then(|v| v.as_f64());
                println!(
                    "{:<22} {:>10} {:>7} {:>9} {:>8} {:>5} {:>6} {:>10} {:>6}{}",
                    format!(
                        "{}{}",
                        r["config"].as_str().unwrap_or("?"),
                        if r["is_pick"] == json!(true) { "*" } else { "" }
                    ),
                    f("median_ms").map_or("-".into(), |v| format!("{v:.4}")),
                    f("cov").map_or("-".into(), |v| format!("{v:.3}")),
                    f("tflops").map_or("-".into(), |v| format!("{v:.1}")),
                    f("vs_cublas").map_or("-".into(), |v| format!("{:.1}%", 100.0 * v)),
                    f("registers").map_or("-".into(), |v| format!("{v}")),
                    r.get("spills").map_or("-".into(), |v| v.to_string()),
                    f("rel_err").map_or("-".into(), |v| format!("{v:.2e}")),
                    f("predicted_us").map_or("-".into(), |v| format!("{v:.1}")),
                    if r.get("passed") == Some(&json!(false)) {
                        "  FAILED verification"
                    } else if r.get("error").is_some() {
                        "  not compiled"
                    } else {
                        ""
                    }
                );
            }
        }
    }
    if any_failed {
        return Err(runtime("a config failed to compile or verify (see above)"));
    }
    Ok(())
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5eed)
}

/// Set name of a shape list: its file stem.
fn set_name(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "shapes".into())
}

/// "model/layer" labels of a shape list (empty when it has no such columns).
fn labels(path: &Path, n: usize) -> Vec<String> {
    let mut v = vec![String::new(); n];
    let Ok(text) = std::fs::read_to_string(path) else {
        return v;
    };
    let mut r = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let Ok(h) = r.headers().cloned() else {
        return v;
    };
    let col = |name: &str| h.iter().position(|x| x.eq_ignore_ascii_case(name));
    let (cm, cl) = (col("model"), col("layer"));
    for (i, rec) in r.records().enumerate().take(n) {
        if let Ok(rec) = rec {
            let parts: Vec<&str> = [cm, cl]
                .iter()
                .flatten()
                .filter_map(|c| rec.get(*c))
                .filter(|s| !s.is_empty())
                .collect();
            v[i] = parts.join("/");
        }
    }
    v
}

/// Shape-specific seed (stable for a base seed).
fn shape_seed(base: u64, p: &Problem) -> u64 {
    let mut x = base ^ p.m.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= p.n.wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(17);
    x ^= p.k.wrapping_mul(0x94D0_49BB_1331_11EB).rotate_left(31);
    x
}

fn sweep_cmd(a: SweepArgs) -> Result<(), Fail> {
    let mc = model_choice(&a.model)?;
    let pol = policy(&a.timing)?;
    if a.max_configs == Some(0) {
        return Err(bad("--max-configs: must be at least 1"));
    }
    // Read and check every list before touching the GPU (exit 2 on bad input).
    let mut lists: Vec<(String, Vec<Problem>, Vec<String>)> = Vec::new();
    for path in &a.shapes {
        let probs = read_shapes(path, mc.dtype).map_err(|e| bad(format!("--shapes {e}")))?;
        for p in &probs {
            if p.dtype != mc.dtype {
                return Err(bad(format!(
                    "--shapes {}: shape {}x{}x{} is {}, the sweep runs {} (--dtype)",
                    path.display(),
                    p.m,
                    p.n,
                    p.k,
                    p.dtype,
                    mc.dtype
                )));
            }
            check_problem(p).map_err(|e| {
                bad(format!(
                    "--shapes {}: {}x{}x{}: {e}",
                    path.display(),
                    p.m,
                    p.n,
                    p.k
                ))
            })?;
        }
        let l = labels(path, probs.len());
        lists.push((set_name(path), probs, l));
    }
    std::fs::create_dir_all(&a.out)
        .map_err(|e| runtime(format!("--out {}: {e}", a.out.display())))?;
    let cfg_path = a.out.join(out::CONFIGS_CSV);
    let shp_path = a.out.join(out::SHAPES_CSV);
    let done_rows: Vec<ShapeRow> = out::read_csv(&shp_path).map_err(runtime)?;
    let done = done_keys(&done_rows);
    if !done.is_empty() {
        // Drop config rows of a shape that was cut off before its summary row.
        let rows: Vec<ConfigRow> = out::read_csv(&cfg_path).map_err(runtime)?;
        let n0 = rows.len();
        let kept = keep_complete(rows, &done);
        if kept.len() != n0 {
            out::write_csv(&cfg_path, &kept).map_err(runtime)?;
        }
        eprintln!(
            "origami-bench: resuming in {}: {} shapes already done",
            a.out.display(),
            done.len()
        );
    } else if std::fs::metadata(&cfg_path).is_ok() {
        out::write_csv::<ConfigRow>(&cfg_path, &[]).map_err(runtime)?;
    }
    let t0 = Instant::now();
    let gpu = open_gpu()?;
    let (sel, res) = selector_on(&gpu, &a.model, &mc)?;
    // Plan every pending shape (microseconds each), then compile the union once.
    struct Job {
        set: String,
        label: String,
        p: Problem,
        planned: Vec<origami::gemm::sweep::Planned>,
    }
    let mut jobs = Vec::new();
    for (set, probs, labels) in &lists {
        for (p, label) in probs.iter().zip(labels) {
            let key = (set.clone(), p.m, p.n, p.k, p.dtype.to_string());
            if done.contains(&key) {
                continue;
            }
            let (_, planned) = plan(&sel, p, a.max_configs, a.only_pick);
            jobs.push(Job {
                set: set.clone(),
                label: label.clone(),
                p: *p,
                planned,
            });
        }
    }
    let mut uniq: HashSet<Config> = HashSet::new();
    for j in &jobs {
        for x in &j.planned {
            uniq.insert(x.config);
        }
    }
    let all: Vec<Config> = uniq.into_iter().collect();
    let meta_gpu = gpu.props().name.clone();
    let mut runner = Runner::new(gpu, mc.dtype)?;
    let nthreads = threads(a.threads);
    let pb = indicatif::ProgressBar::new(all.len() as u64);
    pb.set_message("compiling");
    let tc = Instant::now();
    let fails = runner.compile_all(&all, nthreads, &|| pb.inc(1));
    pb.finish_and_clear();
    let n_inst: HashSet<Config> = all
        .iter()
        .map(origami::gemm::kernel::instance_key)
        .collect();
    eprintln!(
        "origami-bench: {} kernel instances ({} planned configs with their group sizes) compiled and loaded in {:.1} s ({} threads), {} failed",
        n_inst.len(),
        all.len(),
        tc.elapsed().as_secs_f64(),
        nthreads,
        fails.len()
    );
    for f in fails.iter().take(10) {
        eprintln!("origami-bench:   {f}");
    }
    let base_seed = a.seed.unwrap_or_else(clock_seed);
    let clocks0 = runner.gpu.nvml_sample().ok();
    let total: u64 = jobs.iter().map(|j| j.planned.len() as u64).sum();
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} configs {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let opts = SweepOptions { policy: pol };
    let mut stopped = 0usize;
    for (i, j) in jobs.iter().enumerate() {
        if let Some(budget) = a.time_budget_s {
            // Rough cost: two launches per config at ~100 TFLOP/s plus ~5 ms of host work.
            let est = j.planned.len() as f64 * (2.0 * j.p.flops() / 100e12 + 0.005) + 0.5;
            if t0.elapsed().as_secs_f64() + est > budget {
                stopped = jobs.len() - i;
                eprintln!(
                    "origami-bench: time budget: stopping before {}x{}x{} ({} shapes left; run again with the same --out to resume)",
                    j.p.m, j.p.n, j.p.k, stopped
                );
                break;
            }
        }
        pb.set_message(format!("{} {}x{}x{}", j.set, j.p.m, j.p.n, j.p.k));
        let ts = Instant::now();
        let (rows, cb) = run_shape(
            &mut runner,
            &j.set,
            &j.p,
            &j.planned,
            &opts,
            shape_seed(base_seed, &j.p),
            &|| pb.inc(1),
        )?;
        let mut srow = shape_row(&j.set, &j.label, &j.p, &rows, Some(cb));
        srow.sm_mhz = runner.gpu.nvml_sample().ok().and_then(|c| c.sm_mhz);
        srow.seconds = ts.elapsed().as_secs_f64();
        out::append_csv(&cfg_path, &rows)
            .map_err(|e| runtime(format!("{}: {e}", cfg_path.display())))?;
        out::append_csv(&shp_path, std::slice::from_ref(&srow))
            .map_err(|e| runtime(format!("{}: {e}", shp_path.display())))?;
        pb.suspend(|| {
            eprintln!(
                "origami-bench: [{}/{}] {} {}x{}x{}: pick {} {} TF, best {} {} TF, cuBLAS {:.1} TF, A/BF {}, tau {}, {:.1} s",
                i + 1,
                jobs.len(),
                j.set,
                j.p.m,
                j.p.n,
                j.p.k,
                srow.pick,
                srow.pick_tflops.map_or("-".into(), |v| format!("{v:.1}")),
                srow.bf_config,
                srow.bf_tflops.map_or("-".into(), |v| format!("{v:.1}")),
                srow.cublas_tflops.unwrap_or(0.0),
                srow.a_bf.map_or("-".into(), |v| format!("{:.1}%", 100.0 * v)),
                srow.kendall_tau.map_or("-".into(), |v| format!("{v:.3}")),
                srow.seconds
            )
        });
    }
    pb.finish_and_clear();
    let clocks1 = runner.gpu.nvml_sample().ok();
    let meta = json!({
        "gpu": meta_gpu,
        "gpu_source": res.gpu_source,
        "dtype": mc.dtype.to_string(),
        "family": "origami",
        "model": a.model.model,
        "params": res.params,
        "constants_overridden": res.constants.iter().map(|(k, (v, _))| (k.clone(), *v)).collect::<std::collections::BTreeMap<_, _>>(),
        "policy": {"samples": pol.samples, "screen_samples": pol.screen_samples, "screen_cut": a.timing.screen_cut, "target_sample_ms": pol.target_sample_ms, "max_reps": pol.max_reps},
        "error_bound": error_bound(mc.dtype),
        "base_seed": base_seed,
        "clocks_start": clocks0,
        "clocks_end": clocks1,
        "driver": runner.gpu.driver_version().ok(),
        "shapes_left": stopped,
        "command": std::env::args().collect::<Vec<_>>().join(" "),
    });
    report_cmd(&a.out, a.no_plots, Some(meta))?;
    if stopped > 0 {
        eprintln!(
            "origami-bench: {stopped} shapes not run (time budget); the outputs cover the others"
        );
    }
    Ok(())
}

/// summary.json, plots and the text tables from a sweep folder.
fn report_cmd(dir: &Path, no_plots: bool, meta: Option<serde_json::Value>) -> Result<(), Fail> {
    let shapes: Vec<ShapeRow> = out::read_csv(&dir.join(out::SHAPES_CSV)).map_err(bad)?;
    if shapes.is_empty() {
        return Err(bad(format!(
            "{}: no shapes.csv rows (run `origami-bench sweep --out {}` first)",
            dir.display(),
            dir.display()
        )));
    }
    let configs: Vec<ConfigRow> = out::read_csv(&dir.join(out::CONFIGS_CSV)).map_err(bad)?;
    let sp = dir.join(out::SUMMARY_JSON);
    // Keep the meta of the sweep that made the folder when re-reporting.
    let meta = meta.unwrap_or_else(|| {
        std::fs::read_to_string(&sp)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("meta").cloned())
            .unwrap_or(json!({}))
    });
    let j = out::summary_json(&shapes, meta);
    std::fs::write(
        &sp,
        serde_json::to_string_pretty(&j).map_err(runtime)? + "\n",
    )
    .map_err(|e| runtime(format!("{}: {e}", sp.display())))?;
    if !no_plots {
        plots::predicted_vs_measured_png(&shapes, &configs, &dir.join(out::PLOT_PRED_VS_MEAS))
            .map_err(runtime)?;
        plots::abf_png(&shapes, &dir.join(out::PLOT_ABF)).map_err(runtime)?;
    }
    print!("{}", out::shapes_table(&shapes));
    println!();
    print!("{}", out::summary_text(&shapes));
    Ok(())
}

fn refit_cmd(a: RefitArgs) -> Result<(), Fail> {
    let dtype = a
        .dtype
        .parse::<Dtype>()
        .map_err(|e| bad(format!("--dtype: {e}")))?;
    let variant = Variant::parse(&a.model)
        .ok_or_else(|| bad(format!("--model: unknown model '{}'", a.model)))?;
    let rows: Vec<ConfigRow> = out::read_csv(&a.out.join(out::CONFIGS_CSV)).map_err(bad)?;
    let rows: Vec<ConfigRow> = rows
        .into_iter()
        .filter(|r| r.dtype == dtype.to_string())
        .collect();
    if rows.is_empty() {
        return Err(bad(format!(
            "{}: no {dtype} rows in configs.csv",
            a.out.display()
        )));
    }
    let mut sets: Vec<String> = Vec::new();
    for r in &rows {
        if !sets.contains(&r.set) {
            sets.push(r.set.clone());
        }
    }
    for s in &a.fit_sets {
        if !sets.contains(s) {
            return Err(bad(format!(
                "--fit-set {s}: not in configs.csv (sets: {})",
                sets.join(", ")
            )));
        }
    }
    let held: Vec<String> = sets
        .iter()
        .filter(|s| !a.fit_sets.contains(s))
        .cloned()
        .collect();
    let fit_shapes = measured_shapes(&rows, &a.fit_sets);
    let held_shapes = if held.is_empty() {
        Vec::new()
    } else {
        measured_shapes(&rows, &held)
    };
    let res = resolve_hw(None, Some(&a.gpu))?;
    let consts = constants_of(&res)?;
    let fam = family(&a.family).ok_or_else(|| {
        bad(format!(
            "--family: unknown family '{}' (known: {})",
            a.family,
            origami::model::family::FAMILY_NAMES.join(", ")
        ))
    })?;
    let start = FitState {
        params: res.params,
        constants: res
            .constants
            .iter()
            .map(|(k, (v, _))| (k.clone(), *v))
            .collect(),
    };
    let s0 = Selector::new(fam, &res.gpu, &res.params, &consts, variant, dtype)
        .map_err(|e| bad(e.to_string()))?;
    let before_fit = score(&s0, &fit_shapes);
    let before_held = score(&s0, &held_shapes);
    if !a.tau_weight.is_finite() || a.tau_weight < 0.0 {
        return Err(bad(format!(
            "--tau-weight: must be a finite non-negative number (got {})",
            a.tau_weight
        )));
    }
    let (mut state, _, steps) = fit(
        fam,
        &res.gpu,
        variant,
        dtype,
        start.clone(),
        &fit_shapes,
        a.rounds,
        a.tau_weight,
    );
    let constants_of_state =
        |st: &FitState| st.model_constants().map_err(|e| runtime(e.to_string()));
    let mut mc2 = constants_of_state(&state)?;
    if mc2.throughput_model == 1.0 {
        // The ranking does not depend on the scale: set it so that predictions are
        // microseconds on the fitting shapes (median measured / predicted = 1).
        let s = Selector::new(fam, &res.gpu, &state.params, &mc2, variant, dtype)
            .map_err(|e| runtime(e.to_string()))?;
        if let Some(r) = median_time_ratio(&s, &fit_shapes) {
            let scale = mc2.tp_time_scale * r;
            eprintln!("origami-bench: tp_time_scale {:.4} -> {scale:.4} (median measured/predicted {r:.4})", mc2.tp_time_scale);
            state.constants.insert("tp_time_scale".into(), scale);
            mc2 = constants_of_state(&state)?;
        }
    }
    let s1 = Selector::new(fam, &res.gpu, &state.params, &mc2, variant, dtype)
        .map_err(|e| runtime(e.to_string()))?;
    let after_fit = score(&s1, &fit_shapes);
    let after_held = score(&s1, &held_shapes);
    let line =
        |name: &str, s: &origami::gemm::fit::Score| {
            format!(
            "{name:<28} shapes {:>3}  A/BF median {:.1}% min {:.1}% mean {:.1}%  tau mean {:.3}",
            s.shapes,
            100.0 * s.abf_median,
            100.0 * if s.abf_min.is_finite() { s.abf_min } else { 0.0 },
            100.0 * s.abf_mean,
            s.tau_mean
        )
        };
    println!(
        "fit on: {}; held out: {}",
        a.fit_sets.join(", "),
        if held.is_empty() {
            "-".into()
        } else {
            held.join(", ")
        }
    );
    println!("{}", line("fit set, before", &before_fit));
    println!("{}", line("fit set, after", &after_fit));
    if !held_shapes.is_empty() {
        println!("{}", line("held out, before", &before_held));
        println!("{}", line("held out, after", &after_held));
    }
    let oracle = |name: &str, s: &origami::gemm::fit::Score| {
        format!(
            "{name:<28} tile-oracle A/BF (picked tile at its best launch) median {:.1}% mean {:.1}%",
            100.0 * s.abf_tile_oracle_median,
            100.0 * s.abf_tile_oracle_mean
        )
    };
    println!("{}", oracle("fit set, before", &before_fit));
    if !held_shapes.is_empty() {
        println!("{}", oracle("held out, before", &before_held));
    }
    // Launch choice learned from the fitting shapes (not expressible in the hardware
    // file: reported as evidence for the family's launch preference).
    let table = LaunchTable::fit(&fit_shapes);
    println!("launch preference learned on the fit set (fastest launch per tile, counted):");
    print!("{}", table.text());
    for (name, sel_, set) in [
        ("fit set, default + table", &s0, &fit_shapes),
        ("held out, default + table", &s0, &held_shapes),
        ("fit set, fitted + table", &s1, &fit_shapes),
        ("held out, fitted + table", &s1, &held_shapes),
    ] {
        if !set.is_empty() {
            println!("{}", line(name, &score_with(sel_, set, Some(&table))));
        }
    }
    println!("moves:");
    for s in &steps {
        println!(
            "  {:<22} {:>12.4} -> {:>12.4}   objective {:.4} (A/BF mean {:.1}%, tau {:.3})",
            s.knob,
            s.from,
            s.to,
            s.score.objective(),
            100.0 * s.score.abf_mean,
            s.score.tau_mean
        );
    }
    // The override holds every value that differs from the preset and the defaults (the
    // starting file's included), so that it alone reproduces the fitted model.
    let preset_params = origami::hw::presets::preset(&a.gpu)
        .map(|d| d.params)
        .unwrap_or(res.params);
    let ov = state.override_json(&FitState {
        params: preset_params,
        constants: BTreeMap::new(),
    });
    println!("override: {}", serde_json::to_string(&ov).map_err(runtime)?);
    if let Some(path) = &a.write {
        std::fs::write(
            path,
            serde_json::to_string_pretty(&ov).map_err(runtime)? + "\n",
        )
        .map_err(|e| runtime(format!("{}: {e}", path.display())))?;
        eprintln!("origami-bench: wrote {}", path.display());
    }
    Ok(())
}

/// `configs`: the origami family's config listing (`model::family::origami::config_list`).
fn configs_cmd(a: &ConfigsArgs) -> Result<(), Fail> {
    let dtype: Dtype = a.dtype.parse().map_err(bad)?;
    let text = origami::model::family::origami::config_list::config_list_csv(dtype, a.smem_limit)
        .map_err(bad)?;
    print!("{text}");
    Ok(())
}
