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

/// The exit codes of `origami-predict` (it needs no GPU: never 3 or 4).
const EXITS: [Exit; 3] = [Exit::Ok, Exit::Runtime, Exit::BadInput];

/// Worked examples of each subcommand, as `--help` prints them; `tests/predict_cli.rs`
/// runs every line (from the repository root's `data/`) and expects exit 0.
const ROOFLINE_EXAMPLES: &str = "  origami-predict roofline 8192 8192 8192 --dtype fp8 --gpu h200
  origami-predict roofline 1 4096 7168 --groups 80,176,128,72 --dtype nvfp4 --gpu b200 --format json";
const WS_EXAMPLES: &str =
    "  origami-predict ws 4096 7168 2048 --dtype fp8 --tile 128x256 --cluster 2x1 --gpu b200
  origami-predict ws 8192 8192 8192 --dtype bf16 --tile 128x128 --gpu h200 --l2 raster";
const MODEL_EXAMPLES: &str =
    "  origami-predict model --model sol --input data/predict_gemms.csv --out predict-sol
  origami-predict model --model ws --input data/predict_gemms.csv --out predict-ws --gpu b200";

/// The exit codes, then the examples, for an `after_help`.
fn after(examples: &[&str]) -> String {
    format!("{}\nExamples:\n{}", help_line(&EXITS), examples.join("\n"))
}

#[derive(Parser)]
#[command(
    name = "origami-predict",
    version,
    about = "Predict GEMM latency with the SOL, warp-specialized persistent and roofline models (no GPU needed)",
    after_help = after(&[ROOFLINE_EXAMPLES, WS_EXAMPLES, MODEL_EXAMPLES])
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Roofline trace of a GEMM or a grouped GEMM, laid out like the NVFP4 group-GEMM
    /// roofline trace.
    #[command(after_help = after(&[ROOFLINE_EXAMPLES]))]
    Roofline {
        /// Rows of A and C (a positive integer); with --groups, ignored.
        #[arg(value_parser = positive)]
        m: u64,
        /// Columns of B and C (a positive integer).
        #[arg(value_parser = positive)]
        n: u64,
        /// Reduction dimension (a positive integer).
        #[arg(value_parser = positive)]
        k: u64,
        /// Per-group M values (comma separated); they replace M.
        #[arg(long, value_delimiter = ',', value_parser = positive)]
        groups: Option<Vec<u64>>,
        /// Input element type: fp32, tf32, fp16, bf16, fp8 (e4m3), e5m2, int8, nvfp4, mxfp8,
        /// mxfp4 (the GPU must have a peak rate for it).
        #[arg(long, value_parser = dtype)]
        dtype: Dtype,
        /// Output element type: fp32, fp16, bf16, fp8, int32 [default: fp32 for fp32 and
        /// tf32, int32 for int8, bf16 for bf16, else fp16].
        #[arg(long, value_parser = out_dtype)]
        out_dtype: Option<OutDtype>,
        /// fp16 operands with fp16 accumulation (its own peak rate).
        #[arg(long)]
        acc16: bool,
        /// GPU description (embedded): rtx4090, h100-sxm, h200, a100, b200.
        #[arg(long, value_parser = known_gpu)]
        gpu: String,
        /// Override the GPU's DRAM bandwidth (GB/s).
        #[arg(long, value_parser = positive_f64)]
        dram_gbps: Option<f64>,
        /// Output format: text (the trace) or json.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Warp-specialized persistent model of one GEMM, printed like the warp-specialized
    /// persistent GEMM model.
    #[command(after_help = after(&[WS_EXAMPLES]))]
    Ws {
        /// Rows of A and C (a positive integer).
        #[arg(value_parser = positive)]
        m: u64,
        /// Columns of B and C (a positive integer).
        #[arg(value_parser = positive)]
        n: u64,
        /// Reduction dimension (a positive integer).
        #[arg(value_parser = positive)]
        k: u64,
        /// Input element type: fp32, tf32, fp16, bf16, fp8 (e4m3), e5m2, int8, nvfp4, mxfp8,
        /// mxfp4 (the GPU must have a peak rate for it).
        #[arg(long, value_parser = dtype)]
        dtype: Dtype,
        /// Output element type: fp32, fp16, bf16, fp8, int32 [default: fp32 for fp32 and
        /// tf32, int32 for int8, bf16 for bf16, else fp16].
        #[arg(long, value_parser = out_dtype)]
        out_dtype: Option<OutDtype>,
        /// fp16 operands with fp16 accumulation (its own peak rate).
        #[arg(long)]
        acc16: bool,
        /// CTA tile MxN, e.g. 128x64.
        #[arg(long, value_parser = pair)]
        tile: Pair,
        /// Cluster shape MxN, e.g. 2x1.
        #[arg(long, value_parser = pair, default_value = "1x1")]
        cluster: Pair,
        /// GPU description (embedded): rtx4090, h100-sxm, h200, a100, b200.
        #[arg(long, value_parser = known_gpu)]
        gpu: String,
        #[command(flatten)]
        l2: L2Args,
        /// Measured time, to print the ratio.
        #[arg(long, value_parser = positive_f64)]
        measured_us: Option<f64>,
        /// Output format: text (the breakdown) or json.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Run a model over a CSV of GEMMs; write predictions, ratio statistics and s-curve.
    #[command(after_help = after(&[MODEL_EXAMPLES]))]
    Model {
        /// The model: sol (speed of light) or ws (warp-specialized persistent; needs the
        /// tile column).
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

fn main() -> ExitCode {
    let cli = match origami::usage::parse_args::<Cli>("origami-predict") {
        Ok(c) => c,
        Err(exit) => return exit.into(),
    };
    match run(cli) {
        Ok(()) => Exit::Ok.into(),
        Err(e) => {
            origami::exit::eprint_error("origami-predict", &e.message());
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
