//! `origami-select`: pick a GEMM tile configuration with the Origami analytical model, no
//! autotuning. Runs anywhere: with no GPU it uses an embedded preset.

use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use origami::device::detect_device;
use origami::exit::{finish, help_line, Exit, Failure};
use origami::pick::{EnergyRequest, PickError, PickRequest};
use origami::report::selection::{
    CsvWriter, JsonWriter, SelectionWriter, TextWriter, TritonWriter,
};
use origami::setup::override_file_from_env;

const EXAMPLES: &str = "Examples:
  origami-select 4096 4096 4096
  origami-select 8192 8192 8192 --gpu h100-sxm --explain
  origami-select --shapes data/seed_shapes.csv --format csv
  origami-select --shapes data/llm_shapes.csv --top 3 --format json
  origami-select 4096 4096 4095 --family triton-auto --gpu h100-sxm --format triton
  TRITONBLAS_HW_PARAMS=h200.json origami-select 4096 4096 4096 --format triton
  origami-select --describe --gpu h200 --family origami --format json
  origami-select 4096 4096 4096 --family hopper --gpu h100-sxm --objective energy
  origami-select 8192 8192 8192 --family hopper --gpu h100-sxm --pareto --power-limit 400";

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
/// parameters). With no GPU, an embedded preset is used (--gpu NAME). A full calibration
/// in TRITONBLAS_HW_PARAMS supplies the GPU and every parameter: it wins over --gpu and the
/// GPU found, and stderr says so; stderr also names the preset a flat file changes, and how
/// many constants the family's embedded fitted file supplies beneath it (a flat file that
/// leaves a constant out gets the fitted value, not the default; --no-fitted leaves them out).
#[derive(Parser, Debug)]
#[command(
    name = "origami-select",
    version,
    after_help = format!("{}\n{EXAMPLES}", help_line(&[Exit::Ok, Exit::Runtime, Exit::BadInput]))
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
    /// Input element type: fp16, bf16, fp8, fp32, or tf32 (fp32 data on TF32 tensor cores:
    /// the origami family's fp32 path).
    #[arg(long, default_value = "fp16")]
    dtype: String,
    /// Use this GPU's embedded preset instead of the GPU found (rtx4090, h100-sxm, h200, a100,
    /// b200); ignored, with a line on stderr, when TRITONBLAS_HW_PARAMS is a full calibration.
    #[arg(long)]
    gpu: Option<String>,
    /// Kernel family whose configs are ranked: triton (Triton's tutorial matmul),
    /// triton-tma (Triton's persistent tensor-descriptor matmul; Hopper, fp16/bf16, N and K
    /// multiples of 8), origami (this project's mma.sync kernel, csrc/gemm.cu; fp16/bf16),
    /// hopper (this project's TMA + wgmma kernel, csrc/hopper_gemm.cu; Hopper, fp16/bf16, K
    /// a multiple of 8), seed (the NVIDIA port report's config space); or triton-auto: per
    /// shape, whichever of triton and triton-tma can run it with the lower predicted time;
    /// or auto: the same
    /// between hopper and origami, the project's kernels (the output names the family;
    /// --all is refused: name one family).
    #[arg(long, default_value = "triton")]
    family: String,
    /// Leave out the constants fitted for the family on this architecture (embedded from
    /// calibrations/fitted/; applied beneath the preset and TRITONBLAS_HW_PARAMS): the
    /// latency model as the NVIDIA port report published it.
    #[arg(long = "no-fitted")]
    no_fitted: bool,
    /// Leave out the learned correction of the family's model, where one was fitted
    /// (calibrations/fitted/*-correction.json, on the fitted constants; --no-fitted leaves
    /// it out too): the analytical model's ranking alone (docs/correction.md).
    #[arg(long = "no-correction")]
    no_correction: bool,
    /// The calibration-only tier: the throughput model's constants from the measurements
    /// of the calibration named by TRITONBLAS_HW_PARAMS (origami-calibrate's output), none
    /// fitted on GEMM times (docs/calibration-only.md).
    #[arg(long = "calibration-only", conflicts_with = "no_fitted")]
    calibration_only: bool,
    /// Model variant: origami (the C++ source, corrected) or seed (the NVIDIA port report's
    /// model as published).
    #[arg(long, default_value = "origami")]
    model: String,
    /// How many ranked configs to print [default: 5]. With --shapes: N ranked rows per
    /// shape (text, csv or json, with a rank column) instead of the pick alone.
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// List every candidate with its predicted latency, and rejected ones with the reason.
    /// One shape only: refused with --shapes (use --top N there).
    #[arg(long)]
    all: bool,
    /// Print the model's walk-through: parameters with their tiers, every algorithm's
    /// numbers, phase 2. One shape only: refused with --shapes.
    #[arg(long)]
    explain: bool,
    /// Output format: text for people, json or csv for programs, triton (the pick's
    /// launch, one line per shape: the keyword arguments of the tutorial kernel; with
    /// triton-tma or triton-auto, {"kernel", "family", "grid", "kwargs"}, for
    /// kernel[grid](..., **kwargs)). triton-tma's configs carry WARP_SPECIALIZE, FLATTEN
    /// and EPILOGUE_SUBTILE in every format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Batch mode: a CSV with columns M,N,K and an optional dtype; one output row per shape
    /// (the pick), or N ranked rows with --top N; each row is written as its shape is
    /// selected.
    #[arg(long, value_name = "FILE.csv")]
    shapes: Option<PathBuf>,
    /// Print what the model would use, with no shape: the GPU description, the hardware
    /// parameters and every model constant (group, unit, default, range, value in force and
    /// its tier). Text or json. With triton-auto, each member family in turn (json: an
    /// object with the set's name and a "members" array).
    #[arg(long, conflicts_with_all = ["m", "shapes", "all", "explain"])]
    describe: bool,
    /// What the pick minimizes: time (one launch at full clock, the model's own ranking;
    /// under --power-limit when given), sustained (the time per GEMM under the power limit,
    /// back to back), energy (millijoules per GEMM under the limit) or edp (energy x
    /// sustained time). All but time price every feasible config with the energy model
    /// (measured costs: --energy-costs, or those committed for the GPU); the output adds
    /// sustained_us, energy_mj and power_w.
    #[arg(long, value_name = "OBJECTIVE")]
    objective: Option<String>,
    /// A power limit in watts for planning (the GPU's own is read when calibrated, never
    /// set): the energy model slows a config that would draw more to what the limit
    /// allows.
    #[arg(long = "power-limit", value_name = "W", allow_hyphen_values = true)]
    power_limit: Option<String>,
    /// A calibration with the energy costs (origami-calibrate --only clock,energy); else
    /// those of TRITONBLAS_HW_PARAMS when it has them, else the ones committed for the GPU
    /// (calibrations/energy/). Given alone (objective time), the model's own pick and
    /// ranking are priced.
    #[arg(long = "energy-costs", value_name = "FILE.json")]
    energy_costs: Option<PathBuf>,
    /// Print each shape's predicted time/energy Pareto front (the configs no other config
    /// beats in both sustained time and energy) instead of a pick: text, csv or json.
    #[arg(long, conflicts_with_all = ["all", "explain", "top"])]
    pareto: bool,
    /// With --pareto: also draw the fronts into this PNG (one panel per shape, up to 36).
    #[arg(long, value_name = "FILE.png", requires = "pareto")]
    plot: Option<PathBuf>,
}

impl Format {
    /// The report writer of this format.
    fn writer(self) -> Box<dyn SelectionWriter> {
        match self {
            Format::Text => Box::new(TextWriter),
            Format::Json => Box::<JsonWriter>::default(),
            Format::Csv => Box::new(CsvWriter),
            Format::Triton => Box::new(TritonWriter),
        }
    }
}

fn main() -> ExitCode {
    match origami::usage::parse_args::<Args>("origami-select") {
        Ok(args) => finish("origami-select", run(args)),
        Err(exit) => exit.into(),
    }
}

fn run(args: Args) -> Result<(), Failure> {
    if args.describe {
        return describe(&args);
    }
    let request = PickRequest {
        sizes: [args.m, args.n, args.k],
        shapes: args.shapes,
        dtype: args.dtype,
        gpu: args.gpu,
        override_file: override_file_from_env(),
        family: args.family,
        model: args.model,
        no_fitted: args.no_fitted,
        no_correction: args.no_correction,
        calibration_only: args.calibration_only,
        top: args.top,
        all: args.all,
        explain: args.explain,
        energy: EnergyRequest {
            objective: args.objective,
            power_limit: args.power_limit,
            costs_file: args.energy_costs,
            pareto: args.pareto,
        },
    };
    if args.pareto && args.format == Format::Triton {
        return Err(PickError::ParetoFormat.into());
    }
    let job = request.prepare(detect_device, |notice| {
        eprintln!("origami-select: {notice}")
    })?;
    if job.pareto {
        return pareto(&job, args.format, args.plot.as_deref());
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    job.write(
        args.format.writer().as_mut(),
        &mut out,
        &mut std::io::stderr(),
    )?;
    Ok(())
}

/// `--pareto`: each shape's predicted front, in the format asked, and the PNG.
fn pareto(
    job: &origami::pick::PickJob,
    format: Format,
    plot: Option<&std::path::Path>,
) -> Result<(), Failure> {
    use origami::report::pareto_plot::{front, pareto_png, ParetoPanel};
    use origami::report::selection::pareto::{
        pareto_csv, pareto_json, pareto_text, PARETO_CSV_HEADER,
    };
    use std::io::Write;
    let shapes = job.pareto_fronts()?;
    let text = match format {
        Format::Text => shapes
            .iter()
            .map(pareto_text)
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Csv => {
            let mut t = format!("{PARETO_CSV_HEADER}\n");
            for s in &shapes {
                t.push_str(&pareto_csv(s));
            }
            t
        }
        Format::Json => {
            let v: Vec<_> = shapes.iter().map(pareto_json).collect();
            format!("{:#}\n", serde_json::Value::Array(v))
        }
        Format::Triton => return Err(PickError::ParetoFormat.into()),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failure::output)?;
    if let Some(path) = plot {
        let panels: Vec<ParetoPanel> = shapes
            .iter()
            .map(|s| {
                let pts: Vec<(f64, f64)> = s
                    .all
                    .iter()
                    .map(|x| (x.energy.sustained_us, x.energy.energy_mj))
                    .collect();
                ParetoPanel {
                    title: format!(
                        "{}x{}x{} {}",
                        s.problem.m, s.problem.n, s.problem.k, s.family
                    ),
                    predicted_front: front(&pts),
                    predicted: pts,
                    ..ParetoPanel::default()
                }
            })
            .collect();
        let limit = shapes.first().map_or(0.0, |s| s.power_limit_w);
        pareto_png(
            &panels,
            &format!("predicted sustained time (x) vs energy per GEMM (y) under {limit:.0} W; blue: front"),
            path,
        )
        .map_err(Failure::runtime)?;
    }
    Ok(())
}

/// `--describe`: the setup of the model, no shape; of each member of a family set.
fn describe(args: &Args) -> Result<(), Failure> {
    use origami::model::FamilySet;
    use origami::report::describe::{describe_json, describe_text, Description};
    use origami::setup::{setup_announcing, SetupRequest};
    use std::io::Write;
    let device = if args.gpu.is_none() {
        detect_device()
    } else {
        None
    };
    let Some(set) = FamilySet::named(&args.family) else {
        return Err(origami::pick::PickError::UnknownFamily(args.family.clone()).into());
    };
    let mut described = Vec::with_capacity(set.members.len());
    for (i, f) in set.members.iter().enumerate() {
        let req = SetupRequest {
            calibration_only: args.calibration_only,
            ..SetupRequest::from_env(
                device.clone(),
                args.gpu.clone(),
                f.name(),
                &args.model,
                args.no_fitted,
            )
        };
        let s = setup_announcing(&req, |notice| {
            if i == 0 {
                eprintln!("origami-select: {notice}")
            }
        })?;
        described.push(Description::of(&s));
    }
    let text = match (args.format, set.is_choice()) {
        (Format::Text, false) => describe_text(&described[0]),
        (Format::Json, false) => format!("{:#}\n", describe_json(&described[0])),
        (Format::Text, true) => described
            .iter()
            .map(describe_text)
            .collect::<Vec<_>>()
            .join("\n"),
        (Format::Json, true) => {
            let members: Vec<_> = described.iter().map(describe_json).collect();
            let v = serde_json::json!({"family": set.name, "members": members});
            format!("{v:#}\n")
        }
        (Format::Csv | Format::Triton, _) => {
            return Err(Failure::bad("--describe: prints text or json"))
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failure::output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_argument_is_described() {
        assert_eq!(
            origami::usage::undocumented(&Args::command()),
            Vec::<String>::new()
        );
    }
}
