//! origami-predict: speed-of-light, warp-specialized persistent and roofline models of
//! GEMM latency (seeds 001 and 002) from the command line. Needs no GPU.
//!
//! Exit codes: 0 ok, 1 runtime failure (writing outputs), 2 bad input or usage.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use origami::exit::{Exit, ToExit};

use origami::dtype::Dtype;
use origami::perf::l2::Raster;
use origami::perf::table::{self, Model};
use origami::perf::{
    plot, roofline, ws_predict, GpuPerf, L2Mode, OutDtype, Pair, PerfError, Problem,
    RooflineOptions, WsOptions,
};

#[derive(Parser)]
#[command(
    name = "origami-predict",
    version,
    about = "Predict GEMM latency with the SOL, warp-specialized persistent and roofline models (no GPU needed)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Seed-002-style roofline trace of a GEMM or a grouped GEMM.
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
        #[arg(long, value_parser = parse_dtype)]
        dtype: Dtype,
        #[arg(long, value_parser = parse_out)]
        out_dtype: Option<OutDtype>,
        /// fp16 operands with fp16 accumulation (its own peak rate).
        #[arg(long)]
        acc16: bool,
        #[arg(long, value_parser = parse_gpu)]
        gpu: String,
        /// Override the GPU's DRAM bandwidth (GB/s).
        #[arg(long, value_parser = positive_f64)]
        dram_gbps: Option<f64>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Warp-specialized persistent model of one GEMM, printed like seed 001.
    Ws {
        #[arg(value_parser = positive)]
        m: u64,
        #[arg(value_parser = positive)]
        n: u64,
        #[arg(value_parser = positive)]
        k: u64,
        #[arg(long, value_parser = parse_dtype)]
        dtype: Dtype,
        #[arg(long, value_parser = parse_out)]
        out_dtype: Option<OutDtype>,
        #[arg(long)]
        acc16: bool,
        /// CTA tile MxN, e.g. 128x64.
        #[arg(long, value_parser = parse_pair)]
        tile: Pair,
        /// Cluster shape MxN, e.g. 2x1.
        #[arg(long, value_parser = parse_pair, default_value = "1x1")]
        cluster: Pair,
        #[arg(long, value_parser = parse_gpu)]
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
        /// GPU description (default b200, the seeds' GPU).
        #[arg(long, value_parser = parse_gpu)]
        gpu: Option<String>,
        /// A perf description JSON file instead of an embedded one.
        #[arg(long, conflicts_with = "gpu")]
        gpu_file: Option<PathBuf>,
        #[command(flatten)]
        l2: L2Args,
        /// Print the seed-001 breakdown of the N most pessimistic and N most optimistic rows.
        #[arg(long, default_value_t = 0)]
        print_cases: usize,
    },
}

#[derive(clap::Args)]
struct L2Args {
    /// L2 treatment of the ws model: none (seed 001 as printed), hit-rate (seed 001's
    /// global knob), raster (reuse from rasterization and resident tiles).
    #[arg(long, value_enum, default_value_t = L2Arg::None)]
    l2: L2Arg,
    /// Hit rate for --l2 hit-rate (default: the GPU description's knob).
    #[arg(long, value_parser = parse_hit_rate)]
    l2_hit_rate: Option<f64>,
    /// Raster order for --l2 raster.
    #[arg(long, value_enum, default_value_t = RasterArg::Auto)]
    raster: RasterArg,
    /// Swizzle band width (clusters) for --l2 raster.
    #[arg(long, default_value_t = 1, value_parser = positive)]
    swizzle: u64,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModelArg {
    Sol,
    Ws,
}

#[derive(Clone, Copy, ValueEnum)]
enum L2Arg {
    None,
    HitRate,
    Raster,
}

#[derive(Clone, Copy, ValueEnum)]
enum RasterArg {
    Auto,
    M,
    N,
}

fn positive(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if v > 0 => Ok(v),
        _ => Err("must be a positive integer".into()),
    }
}

fn positive_f64(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("must be a positive number".into()),
    }
}

fn parse_hit_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..1.0).contains(&v) => Ok(v),
        _ => Err("must be a number in [0, 1)".into()),
    }
}

fn parse_dtype(s: &str) -> Result<Dtype, String> {
    s.parse::<Dtype>().map_err(|e| e.to_string())
}

fn parse_out(s: &str) -> Result<OutDtype, String> {
    s.parse::<OutDtype>().map_err(|e| e.to_string())
}

fn parse_pair(s: &str) -> Result<Pair, String> {
    s.parse::<Pair>()
}

fn parse_gpu(s: &str) -> Result<String, String> {
    GpuPerf::by_name(s)
        .map(|g| g.name)
        .map_err(|e| e.to_string())
}

impl L2Args {
    fn mode(&self, gpu: &GpuPerf) -> L2Mode {
        match self.l2 {
            L2Arg::None => L2Mode::None,
            L2Arg::HitRate => L2Mode::HitRate(self.l2_hit_rate.unwrap_or(gpu.ws.l2_hit_rate)),
            L2Arg::Raster => L2Mode::Raster {
                order: match self.raster {
                    RasterArg::Auto => None,
                    RasterArg::M => Some(Raster::AlongM),
                    RasterArg::N => Some(Raster::AlongN),
                },
                swizzle: self.swizzle,
            },
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                print!("{e}");
                return ExitCode::SUCCESS;
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                eprint!("{e}");
                return ExitCode::from(2);
            }
            // One line: clap's first line, plus its list of possible values if any.
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
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let exit = e
                .downcast_ref::<PerfError>()
                .map(|e| e.exit_code())
                .unwrap_or(Exit::Runtime);
            eprintln!("error: {e:#}");
            exit.into()
        }
    }
}

fn run(cli: Cli) -> Result<()> {
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
            let r = roofline(
                &g,
                &RooflineOptions {
                    m_list: groups.unwrap_or_else(|| vec![m]),
                    n,
                    k,
                    dtype,
                    out: out_dtype.unwrap_or(OutDtype::default_for(dtype)),
                    acc16,
                    dram_gbps,
                },
            )?;
            match format {
                Format::Text => print!("{}", r.text()),
                Format::Json => println!("{}", serde_json::to_string_pretty(&r)?),
            }
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
            let b = ws_predict(&p, &g, &o)?;
            match format {
                Format::Text => print!("{}", b.seed_text(&p, &o, measured_us)),
                Format::Json => println!("{}", serde_json::to_string_pretty(&b)?),
            }
        }
        Cmd::Model {
            model,
            input,
            out,
            gpu,
            gpu_file,
            l2,
            print_cases,
        } => {
            let g = match (&gpu, &gpu_file) {
                (_, Some(f)) => GpuPerf::from_file(f)?,
                (Some(name), None) => GpuPerf::by_name(name)?,
                (None, None) => {
                    eprintln!("note: no --gpu given, using b200 (the seeds' GPU)");
                    GpuPerf::by_name("b200")?
                }
            };
            let model = match model {
                ModelArg::Sol => Model::Sol,
                ModelArg::Ws => Model::Ws(l2.mode(&g)),
            };
            run_model(&g, model, &input, &out, print_cases)?;
        }
    }
    Ok(())
}

fn run_model(
    g: &GpuPerf,
    model: Model,
    input: &Path,
    out: &Path,
    print_cases: usize,
) -> Result<()> {
    let origin = input.display().to_string();
    let rows = table::read_input(input, matches!(model, Model::Ws(_)))?;
    let preds = table::predict_rows(&rows, g, model, &origin)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let tag = model.tag();
    let csv_path = out.join(format!("predictions_{tag}.csv"));
    let mut w = csv::Writer::from_path(&csv_path)
        .with_context(|| format!("writing {}", csv_path.display()))?;
    for r in &preds {
        w.serialize(r)
            .with_context(|| format!("writing {}", csv_path.display()))?;
    }
    w.flush()
        .with_context(|| format!("writing {}", csv_path.display()))?;
    eprintln!(
        "{} rows predicted with the {} on {}",
        preds.len(),
        model.title(),
        g.name
    );
    println!("predictions: {}", csv_path.display());
    if let Some(s) = table::ratio_stats(&preds, tag, &g.name) {
        let stats_path = out.join(format!("stats_{tag}.json"));
        std::fs::write(&stats_path, serde_json::to_string_pretty(&s)? + "\n")
            .with_context(|| format!("writing {}", stats_path.display()))?;
        let png = out.join(format!("scurve_{tag}.png"));
        let title = format!(
            "{} on {}: predicted / measured, sorted (n={})",
            model.title(),
            g.name,
            s.n
        );
        plot::scurve_png(&preds, &title, &png)?;
        println!("stats: {}", stats_path.display());
        println!("s-curve: {}", png.display());
        print!("{}", s.text());
        if print_cases > 0 {
            if let Model::Ws(l2) = model {
                print_extremes(g, &rows, &preds, l2, print_cases)?;
            }
        }
    } else {
        eprintln!("no measured times in {origin}: no ratio statistics or s-curve");
    }
    Ok(())
}

fn print_extremes(
    g: &GpuPerf,
    rows: &[table::InputRow],
    preds: &[table::OutputRow],
    l2: L2Mode,
    n: usize,
) -> Result<()> {
    let mut idx: Vec<usize> = (0..preds.len())
        .filter(|&i| preds[i].ratio.is_some())
        .collect();
    idx.sort_by(|&a, &b| preds[a].ratio.unwrap().total_cmp(&preds[b].ratio.unwrap()));
    let mut chosen: Vec<(&str, usize)> = idx
        .iter()
        .rev()
        .take(n)
        .map(|&i| ("most pessimistic", i))
        .collect();
    chosen.extend(idx.iter().take(n).map(|&i| ("most optimistic", i)));
    for (label, i) in chosen {
        let r = &rows[i];
        let o = WsOptions {
            tile: r.tile.expect("ws rows have a tile"),
            cluster: r.cluster,
            two_cta: r.two_cta,
            l2,
        };
        let b = ws_predict(&r.problem, g, &o)?;
        println!("\n# {label} ({} {})", r.problem.dtype, r.problem.out);
        print!("{}", b.seed_text(&r.problem, &o, r.measured_us));
    }
    Ok(())
}
