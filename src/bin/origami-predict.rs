//! origami-predict: speed-of-light, warp-specialized persistent and roofline models of
//! GEMM latency (the warp-specialized persistent GEMM model; the NVFP4 group-GEMM roofline
//! trace) from the command line. Needs no GPU. All logic lives in `origami::perf::run`
//! and `origami::perf::cli`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use origami::dtype::Dtype;
use origami::exit::{help_line, Exit, ToExit};
use origami::perf::cli::{
    dtype, known_gpu, out_dtype, pair, positive, positive_f64, Format, L2Args,
};
use origami::perf::run::{model_gpu, write_roofline, write_ws, ModelRun, PredictError};
use origami::perf::table::Model;
use origami::perf::{GpuPerf, OutDtype, Pair, Problem, RooflineOptions, WsOptions};

#[derive(Parser)]
#[command(
    name = "origami-predict",
    version,
    about = "Predict GEMM latency with the SOL, warp-specialized persistent and roofline models (no GPU needed)",
    after_help = help_line(&[Exit::Ok, Exit::Runtime, Exit::BadInput])
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Roofline trace of a GEMM or a grouped GEMM, laid out like the NVFP4 group-GEMM
    /// roofline trace.
    Roofline {
        #[arg(value_parser = positive)]
        m: u64,
        #[arg(value_parser = positive)]
        n: u64,
        #[arg(value_parser = positive)]
        k: u64,
        /// Per-group M values (comma separated); they replace M.
        #[arg(long, value_delimiter = ',', value_parser = positive)]
        groups: Option<Vec<u64>>,
        #[arg(long, value_parser = dtype)]
        dtype: Dtype,
        #[arg(long, value_parser = out_dtype)]
        out_dtype: Option<OutDtype>,
        /// fp16 operands with fp16 accumulation (its own peak rate).
        #[arg(long)]
        acc16: bool,
        #[arg(long, value_parser = known_gpu)]
        gpu: String,
        /// Override the GPU's DRAM bandwidth (GB/s).
        #[arg(long, value_parser = positive_f64)]
        dram_gbps: Option<f64>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Warp-specialized persistent model of one GEMM, printed like the warp-specialized
    /// persistent GEMM model.
    Ws {
        #[arg(value_parser = positive)]
        m: u64,
        #[arg(value_parser = positive)]
        n: u64,
        #[arg(value_parser = positive)]
        k: u64,
        #[arg(long, value_parser = dtype)]
        dtype: Dtype,
        #[arg(long, value_parser = out_dtype)]
        out_dtype: Option<OutDtype>,
        #[arg(long)]
        acc16: bool,
        /// CTA tile MxN, e.g. 128x64.
        #[arg(long, value_parser = pair)]
        tile: Pair,
        /// Cluster shape MxN, e.g. 2x1.
        #[arg(long, value_parser = pair, default_value = "1x1")]
        cluster: Pair,
        #[arg(long, value_parser = known_gpu)]
        gpu: String,
        #[command(flatten)]
        l2: L2Args,
        /// Measured time, to print the ratio.
        #[arg(long, value_parser = positive_f64)]
        measured_us: Option<f64>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Run a model over a CSV of GEMMs; write predictions, ratio statistics and s-curve.
    Model {
        #[arg(long, value_enum)]
        model: ModelArg,
        /// CSV with columns M,N,K,dtype[,tile,cluster,out_dtype,two_cta,measured_us].
        #[arg(long)]
        input: PathBuf,
        /// Output directory (created).
        #[arg(long)]
        out: PathBuf,
        /// GPU description (default b200, the GPU of the published perf models).
        #[arg(long, value_parser = known_gpu)]
        gpu: Option<String>,
        /// A perf description JSON file instead of an embedded one.
        #[arg(long, conflicts_with = "gpu")]
        gpu_file: Option<PathBuf>,
        #[command(flatten)]
        l2: L2Args,
        /// Print the breakdown (the warp-specialized persistent GEMM model's layout) of the
        /// N most pessimistic and N most optimistic rows.
        #[arg(long, default_value_t = 0)]
        print_cases: usize,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ModelArg {
    Sol,
    Ws,
}

/// Parse the command line; a usage error is one line on stderr (clap's first line and its
/// list of possible values, if any) and exit 2.
fn parse() -> Result<Cli, ExitCode> {
    use clap::error::ErrorKind;
    let e = match Cli::try_parse() {
        Ok(c) => return Ok(c),
        Err(e) => e,
    };
    let e = match origami::output::clap_display("origami-predict", e) {
        Ok(exit) => return Err(exit.into()),
        Err(e) => e,
    };
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        eprint!("{e}");
        return Err(Exit::BadInput.into());
    }
    let text = e.to_string();
    let mut line = text
        .lines()
        .next()
        .unwrap_or("error: bad usage")
        .to_string();
    if let Some(pv) = text.lines().find(|l| l.contains("[possible values:")) {
        line.push(' ');
        line.push_str(pv.trim());
    }
    eprintln!("{line}");
    Err(Exit::BadInput.into())
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(c) => c,
        Err(code) => return code,
    };
    match run(cli) {
        Ok(()) => Exit::Ok.into(),
        Err(e) => {
            eprintln!("error: {}", e.message());
            e.exit_code().into()
        }
    }
}

fn run(cli: Cli) -> Result<(), PredictError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    predict(cli, &mut out)?;
    // A write the line buffer kept back fails here, not silently at exit.
    out.flush().map_err(|error| PredictError::Io {
        context: "writing stdout".into(),
        error,
    })
}

fn predict(cli: Cli, mut out: &mut dyn std::io::Write) -> Result<(), PredictError> {
    match cli.cmd {
        Cmd::Roofline {
            m,
            n,
            k,
            groups,
            dtype,
            out_dtype,
            acc16,
            gpu,
            dram_gbps,
            format,
        } => {
            let g = GpuPerf::by_name(&gpu)?;
            let o = RooflineOptions {
                m_list: groups.unwrap_or_else(|| vec![m]),
                n,
                k,
                dtype,
                out: out_dtype.unwrap_or(OutDtype::default_for(dtype)),
                acc16,
                dram_gbps,
            };
            write_roofline(&mut out, &g, &o, format)
        }
        Cmd::Ws {
            m,
            n,
            k,
            dtype,
            out_dtype,
            acc16,
            tile,
            cluster,
            gpu,
            l2,
            measured_us,
            format,
        } => {
            let g = GpuPerf::by_name(&gpu)?;
            let mut p = Problem::new(m, n, k, dtype)?
                .with_out(out_dtype.unwrap_or(OutDtype::default_for(dtype)));
            p.acc16 = acc16;
            let o = WsOptions {
                tile,
                cluster,
                two_cta: None,
                l2: l2.mode(&g),
            };
            write_ws(&mut out, &g, &p, &o, measured_us, format)
        }
        Cmd::Model {
            model,
            input,
            out: out_dir,
            gpu,
            gpu_file,
            l2,
            print_cases,
        } => {
            let mut diag = std::io::stderr();
            let g = model_gpu(gpu.as_deref(), gpu_file.as_deref(), &mut diag)?;
            let model = match model {
                ModelArg::Sol => Model::Sol,
                ModelArg::Ws => Model::Ws(l2.mode(&g)),
            };
            let job = ModelRun {
                gpu: &g,
                model,
                input: &input,
                out_dir: &out_dir,
                print_cases,
            };
            job.run(&mut out, &mut diag)
        }
    }
}
