//! `origami-select`: pick a GEMM tile configuration with the Origami analytical model, no
//! autotuning. Runs anywhere: with no GPU it uses an embedded preset.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use origami::dtype::Dtype;
use origami::hw::presets::{preset_names, DEFAULT_PRESET};
use origami::hw::{resolve, ResolveInput, Resolved, HW_PARAMS_ENV};
use origami::model::family::{family, FAMILY_NAMES};
use origami::model::problem::parse_dim;
use origami::model::shapes::read_shapes;
use origami::model::{ModelConstants, Problem, Selector, Variant};
use origami::report::selection as out;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
enum Format {
    Text,
    Json,
    Csv,
    Triton,
}

/// Pick the fastest GEMM tile configuration for C[M,N] = A[M,K] x B[K,N] with the Origami
/// analytical model: no kernel is compiled or run.
///
/// Hardware parameters come from three tiers (lowest to highest): derived from the GPU's
/// properties, the embedded calibration for this GPU model, and the file named by
/// TRITONBLAS_HW_PARAMS (a full calibration or a flat object with some of the five
/// parameters). With no GPU, an embedded preset is used (--gpu NAME).
#[derive(Parser, Debug)]
#[command(
    name = "origami-select",
    version,
    after_help = "Exit codes: 0 ok, 1 runtime failure, 2 bad input.\nExamples:\n  origami-select 4096 4096 4096\n  origami-select 8192 8192 8192 --gpu h100-sxm --explain\n  origami-select --shapes shapes.csv --format csv\n  TRITONBLAS_HW_PARAMS=h200.json origami-select 4096 4096 4096 --format triton"
)]
struct Args {
    /// Rows of A and C.
    #[arg(allow_hyphen_values = true)]
    m: Option<String>,
    /// Columns of B and C.
    #[arg(allow_hyphen_values = true)]
    n: Option<String>,
    /// Reduction dimension.
    #[arg(allow_hyphen_values = true)]
    k: Option<String>,
    /// Input element type: fp16, bf16, fp8, fp32.
    #[arg(long, default_value = "fp16")]
    dtype: String,
    /// Use this GPU's embedded preset instead of the GPU found (rtx4090, h100-sxm, h200, a100, b200).
    #[arg(long)]
    gpu: Option<String>,
    /// Kernel family whose configs are ranked: triton (Triton's tutorial matmul), origami
    /// (this project's mma.sync kernel, csrc/gemm.cu; fp16/bf16), seed (seed 000's space).
    #[arg(long, default_value = "triton")]
    family: String,
    /// Leave out the constants fitted for the family on this architecture (embedded from
    /// calibrations/fitted/; applied beneath the preset and TRITONBLAS_HW_PARAMS): the
    /// seed 000 latency model as published.
    #[arg(long = "no-fitted")]
    no_fitted: bool,
    /// Model variant: origami (the C++ source, corrected) or seed (seed 000 as published).
    #[arg(long, default_value = "origami")]
    model: String,
    /// How many ranked configs to print.
    #[arg(long, default_value_t = 5)]
    top: usize,
    /// List every candidate with its predicted latency, and rejected ones with the reason.
    #[arg(long)]
    all: bool,
    /// Print the model's walk-through: parameters with their tiers, every algorithm's numbers, phase 2.
    #[arg(long)]
    explain: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Batch mode: a CSV with columns M,N,K and an optional dtype; one output row per shape.
    #[arg(long, value_name = "FILE.csv")]
    shapes: Option<PathBuf>,
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

const SELECT_DTYPES: [Dtype; 4] = [Dtype::Fp16, Dtype::Bf16, Dtype::Fp8E4m3, Dtype::Fp32];

fn check_dtype(d: Dtype) -> Result<Dtype, Fail> {
    if SELECT_DTYPES.contains(&d) {
        Ok(d)
    } else {
        Err(bad(format!(
            "--dtype: {d} is not supported by origami-select (use fp16, bf16, fp8, fp32)"
        )))
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("origami-select: error: {}", f.msg);
            ExitCode::from(f.code)
        }
    }
}

fn problems(args: &Args, dtype: Dtype) -> Result<Vec<Problem>, Fail> {
    if let Some(path) = &args.shapes {
        if args.m.is_some() {
            return Err(bad("give either M N K or --shapes FILE, not both"));
        }
        let v = read_shapes(path, dtype).map_err(|e| bad(format!("--shapes {e}")))?;
        for p in &v {
            check_dtype(p.dtype)
                .map_err(|f| bad(format!("--shapes {}: {}", path.display(), f.msg)))?;
        }
        return Ok(v);
    }
    let (Some(m), Some(n), Some(k)) = (&args.m, &args.n, &args.k) else {
        return Err(bad(
            "expected three sizes M N K (or --shapes FILE.csv); see --help",
        ));
    };
    let m = parse_dim("M", m).map_err(bad)?;
    let n = parse_dim("N", n).map_err(bad)?;
    let k = parse_dim("K", k).map_err(bad)?;
    Ok(vec![Problem { m, n, k, dtype }])
}

/// Properties of GPU 0 when a driver and a GPU are present (tier 1 and preset matching).
/// Skipped when ORIGAMI_NO_GPU is set.
fn detect_device() -> Option<origami::hw::DeviceProps> {
    if std::env::var_os("ORIGAMI_NO_GPU").is_some() {
        return None;
    }
    use origami::gpu::probe;
    if !probe::is_present(probe::Library::Driver) {
        return None;
    }
    match probe::device_count() {
        Ok(n) if n > 0 => probe::device_props(0).ok(),
        _ => None,
    }
}

fn resolve_hw(args: &Args) -> Result<Resolved, Fail> {
    let override_file = std::env::var_os(HW_PARAMS_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let device = if args.gpu.is_none() {
        detect_device()
    } else {
        None
    };
    let res = resolve(&ResolveInput {
        device,
        gpu_name: args.gpu.clone(),
        override_file,
    })
    .map_err(|e| match e {
        origami::hw::resolve::ResolveError::File(e) => bad(format!("{HW_PARAMS_ENV}: {e}")),
        other => bad(format!("--gpu: {other}")),
    })?;
    if res.used_default_preset {
        eprintln!(
            "origami-select: no GPU found; using the embedded preset '{DEFAULT_PRESET}' (choose with --gpu NAME: {})",
            preset_names()
        );
    }
    Ok(res)
}

fn run(args: Args) -> Result<(), Fail> {
    let dtype = check_dtype(
        args.dtype
            .parse::<Dtype>()
            .map_err(|e| bad(format!("--dtype: {e}")))?,
    )?;
    let fam = family(&args.family).ok_or_else(|| {
        bad(format!(
            "--family: unknown family '{}' (known: {})",
            args.family,
            FAMILY_NAMES.join(", ")
        ))
    })?;
    let variant = Variant::parse(&args.model).ok_or_else(|| {
        bad(format!(
            "--model: unknown model '{}' (known: origami, seed)",
            args.model
        ))
    })?;
    if args.top == 0 {
        return Err(bad("--top: must be at least 1"));
    }
    let probs = problems(&args, dtype)?;
    let mut res = resolve_hw(&args)?;
    if !args.no_fitted {
        origami::hw::fitted::apply_fitted(&mut res, fam.name());
    }
    let constants =
        ModelConstants::with_overrides(res.constants.iter().map(|(k, (v, _))| (k.as_str(), *v)))
            .map_err(|e| bad(format!("hardware parameters: {e}")))?;

    let mut selectors: HashMap<Dtype, Selector<'_>> = HashMap::new();
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let batch = args.shapes.is_some();
    let mut batch_json = Vec::new();
    if batch {
        match args.format {
            Format::Csv => writeln!(w, "{}", out::BATCH_CSV_HEADER).map_err(io_fail)?,
            Format::Text => writeln!(
                w,
                "{:>8} {:>8} {:>8} {:>5}  {:<22} {:>12}",
                "M", "N", "K", "dtype", "pick", "predicted_us"
            )
            .map_err(io_fail)?,
            _ => {}
        }
    }
    for p in &probs {
        let s: &Selector<'_> = match selectors.entry(p.dtype) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(
                Selector::new(fam, &res.gpu, &res.params, &constants, variant, p.dtype)
                    .map_err(|e| bad(format!("--family {}: {e}", fam.name())))?,
            ),
        };
        let sel = s.select(p, args.all && !batch);
        let pick = &sel.pick;
        let text = if batch {
            match args.format {
                Format::Csv => out::batch_csv_row(&sel),
                Format::Triton => out::triton_launch(&pick.config).to_string(),
                Format::Json => {
                    batch_json.push(out::batch_json(&sel));
                    continue;
                }
                Format::Text => format!(
                    "{:>8} {:>8} {:>8} {:>5}  {:<22} {:>12.2}",
                    p.m,
                    p.n,
                    p.k,
                    p.dtype,
                    pick.config.to_string(),
                    pick.latency_us
                ),
            }
        } else {
            match args.format {
                Format::Csv => out::selection_csv(&sel, s, args.top, args.all)
                    .trim_end()
                    .to_string(),
                Format::Triton => out::triton_launch(&pick.config).to_string(),
                Format::Json => serde_json::to_string_pretty(&out::selection_json(
                    &sel, s, &res, args.top, args.all,
                ))
                .map_err(|e| Fail {
                    code: 1,
                    msg: e.to_string(),
                })?,
                Format::Text => {
                    let mut t = String::new();
                    if args.explain {
                        t.push_str(&out::explain_text(&sel, s, &res));
                        t.push('\n');
                    }
                    t.push_str(&out::selection_text(&sel, s, &res, args.top, args.all));
                    t.trim_end().to_string()
                }
            }
        };
        if args.explain && args.format != Format::Text && !batch {
            eprint!("{}", out::explain_text(&sel, s, &res));
        }
        writeln!(w, "{text}").map_err(io_fail)?;
    }
    if batch && args.format == Format::Json {
        let v = serde_json::Value::Array(batch_json);
        writeln!(
            w,
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| Fail {
                code: 1,
                msg: e.to_string()
            })?
        )
        .map_err(io_fail)?;
    }
    w.flush().map_err(io_fail)
}

fn io_fail(e: std::io::Error) -> Fail {
    Fail {
        code: 1,
        msg: format!("writing output: {e}"),
    }
}
