//! The jobs of `origami-predict`: one roofline trace (the NVFP4 group-GEMM roofline
//! trace), one breakdown of the warp-specialized persistent GEMM model, and a model run
//! over a CSV of GEMMs that writes the predictions, the ratio statistics and the s-curve,
//! and prints the breakdowns of the most pessimistic and most optimistic rows.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use super::cli::Format;
use super::gpu::GpuPerf;
use super::problem::Problem;
use super::roofline::{roofline, RooflineOptions};
use super::table::{self, InputRow, Model, OutputRow};
use super::ws::{ws_predict, L2Mode, WsOptions};
use super::{plot, PerfError};
use crate::exit::{Exit, ToExit};

/// Why a prediction job failed.
#[derive(Debug)]
pub enum PredictError {
    /// A model's error (bad input, or a plot that could not be written).
    Perf(PerfError),
    /// Serializing a result.
    Json(serde_json::Error),
    /// A file or stream, with what was being done to it.
    Io { context: String, error: io::Error },
    /// The predictions CSV, with its path.
    Csv { context: String, error: csv::Error },
}

impl fmt::Display for PredictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PredictError::Perf(e) => e.fmt(f),
            PredictError::Json(e) => e.fmt(f),
            PredictError::Io { context, error } => write!(f, "{context}: {error}"),
            PredictError::Csv { context, error } => write!(f, "{context}: {error}"),
        }
    }
}

impl std::error::Error for PredictError {
    /// The causes beyond what the message already says.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PredictError::Perf(e) => e.source(),
            PredictError::Json(e) => e.source(),
            PredictError::Io { error, .. } => error.source(),
            PredictError::Csv { error, .. } => std::error::Error::source(error),
        }
    }
}

impl From<PerfError> for PredictError {
    fn from(e: PerfError) -> Self {
        PredictError::Perf(e)
    }
}

impl From<serde_json::Error> for PredictError {
    fn from(e: serde_json::Error) -> Self {
        PredictError::Json(e)
    }
}

impl ToExit for PredictError {
    /// A model's own code (bad input, or a failed write); every other failure is a
    /// run-time one.
    fn exit_code(&self) -> Exit {
        match self {
            PredictError::Perf(e) => e.exit_code(),
            _ => Exit::Runtime,
        }
    }
}

impl PredictError {
    /// The line `origami-predict` prints after `error: `: the message, then each cause,
    /// joined by ": ".
    pub fn message(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        text
    }
}

fn io_error(context: impl fmt::Display) -> impl FnOnce(io::Error) -> PredictError {
    let context = context.to_string();
    move |error| PredictError::Io { context, error }
}

fn stdout_error(error: io::Error) -> PredictError {
    io_error("writing stdout")(error)
}

fn write_json(out: &mut dyn Write, v: &impl serde::Serialize) -> Result<(), PredictError> {
    let text = serde_json::to_string_pretty(v)?;
    writeln!(out, "{text}").map_err(stdout_error)
}

/// The roofline trace of one GEMM or grouped GEMM, in `format`.
pub fn write_roofline(
    out: &mut dyn Write,
    gpu: &GpuPerf,
    o: &RooflineOptions,
    format: Format,
) -> Result<(), PredictError> {
    let r = roofline(gpu, o)?;
    match format {
        Format::Text => write!(out, "{}", r.text()).map_err(stdout_error),
        Format::Json => write_json(out, &r),
    }
}

/// The warp-specialized breakdown of one GEMM, in `format`; the text shows the ratio to
/// `measured_us` when given.
pub fn write_ws(
    out: &mut dyn Write,
    gpu: &GpuPerf,
    p: &Problem,
    o: &WsOptions,
    measured_us: Option<f64>,
    format: Format,
) -> Result<(), PredictError> {
    let b = ws_predict(p, gpu, o)?;
    match format {
        Format::Text => write!(out, "{}", b.seed_text(p, o, measured_us)).map_err(stdout_error),
        Format::Json => write_json(out, &b),
    }
}

/// The GPU of a model run: a description file, an embedded one by name, or b200 (the GPU
/// of the warp-specialized persistent GEMM model's measurements), said on `diag`.
pub fn model_gpu(
    name: Option<&str>,
    file: Option<&Path>,
    diag: &mut dyn Write,
) -> Result<GpuPerf, PerfError> {
    match (name, file) {
        (_, Some(f)) => GpuPerf::from_file(f),
        (Some(name), None) => GpuPerf::by_name(name),
        (None, None) => {
            let _ = writeln!(
                diag,
                "note: no --gpu given, using b200 (the GPU of the published perf models)"
            );
            GpuPerf::by_name("b200")
        }
    }
}

/// A model run over a CSV of GEMMs.
#[derive(Debug, Clone, Copy)]
pub struct ModelRun<'a> {
    pub gpu: &'a GpuPerf,
    pub model: Model,
    pub input: &'a Path,
    /// The output folder (created).
    pub out_dir: &'a Path,
    /// How many of the most pessimistic and most optimistic rows to print in full
    /// (warp-specialized model only).
    pub print_cases: usize,
}

impl ModelRun<'_> {
    /// Predict every row; write `predictions_<tag>.csv` and, where rows have measured
    /// times, `stats_<tag>.json` and `scurve_<tag>.png`; print the paths, the statistics
    /// and the extreme cases on `out`, progress on `diag`.
    pub fn run(&self, out: &mut dyn Write, diag: &mut dyn Write) -> Result<(), PredictError> {
        let (g, model) = (self.gpu, self.model);
        let origin = self.input.display().to_string();
        let rows = table::read_input(self.input, matches!(model, Model::Ws(_)))?;
        let preds = table::predict_rows(&rows, g, model, &origin)?;
        std::fs::create_dir_all(self.out_dir).map_err(io_error(format_args!(
            "creating {}",
            self.out_dir.display()
        )))?;
        let tag = model.tag();
        let csv_path = self.out_dir.join(format!("predictions_{tag}.csv"));
        write_predictions(&csv_path, &preds)?;
        let _ = writeln!(
            diag,
            "{} rows predicted with the {} on {}",
            preds.len(),
            model.title(),
            g.name
        );
        writeln!(out, "predictions: {}", csv_path.display()).map_err(stdout_error)?;
        let Some(s) = table::ratio_stats(&preds, tag, &g.name) else {
            let _ = writeln!(
                diag,
                "no measured times in {origin}: no ratio statistics or s-curve"
            );
            return Ok(());
        };
        let stats_path = self.out_dir.join(format!("stats_{tag}.json"));
        std::fs::write(&stats_path, serde_json::to_string_pretty(&s)? + "\n")
            .map_err(io_error(format_args!("writing {}", stats_path.display())))?;
        let png = self.out_dir.join(format!("scurve_{tag}.png"));
        let title = format!(
            "{} on {}: predicted / measured, sorted (n={})",
            model.title(),
            g.name,
            s.n
        );
        plot::scurve_png(&preds, &title, &png)?;
        write!(
            out,
            "stats: {}\ns-curve: {}\n{}",
            stats_path.display(),
            png.display(),
            s.text()
        )
        .map_err(stdout_error)?;
        if let (Model::Ws(l2), true) = (model, self.print_cases > 0) {
            write_extreme_cases(out, g, &rows, &preds, l2, self.print_cases)?;
        }
        Ok(())
    }
}

fn write_predictions(path: &Path, preds: &[OutputRow]) -> Result<(), PredictError> {
    let context = || format!("writing {}", path.display());
    let csv_error = |error| PredictError::Csv {
        context: context(),
        error,
    };
    let mut w = csv::Writer::from_path(path).map_err(csv_error)?;
    for r in preds {
        w.serialize(r).map_err(csv_error)?;
    }
    w.flush().map_err(io_error(context()))
}

/// The breakdowns of the `n` most pessimistic rows (highest ratio predicted / measured),
/// then of the `n` most optimistic, each under a `# label (dtype out)` heading.
pub fn write_extreme_cases(
    out: &mut dyn Write,
    g: &GpuPerf,
    rows: &[InputRow],
    preds: &[OutputRow],
    l2: L2Mode,
    n: usize,
) -> Result<(), PredictError> {
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
        write!(
            out,
            "\n# {label} ({} {})\n{}",
            r.problem.dtype,
            r.problem.out,
            b.seed_text(&r.problem, &o, r.measured_us)
        )
        .map_err(stdout_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_list_every_cause_once_per_level() {
        let e = PredictError::Io {
            context: "creating out".into(),
            error: io::Error::other("denied"),
        };
        assert_eq!(e.message(), "creating out: denied");
        assert_eq!(e.exit_code(), Exit::Runtime);
        let e = PredictError::from(PerfError::Invalid("M must be positive".into()));
        assert_eq!(e.message(), "M must be positive");
        assert_eq!(e.exit_code(), Exit::BadInput);
    }

    #[test]
    fn roofline_text_and_json() {
        let g = GpuPerf::by_name("b200").unwrap();
        let o = RooflineOptions {
            m_list: vec![4096],
            n: 4096,
            k: 4096,
            dtype: crate::dtype::Dtype::Fp16,
            out: super::super::OutDtype::default_for(crate::dtype::Dtype::Fp16),
            acc16: false,
            dram_gbps: None,
        };
        let mut text = Vec::new();
        write_roofline(&mut text, &g, &o, Format::Text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            roofline(&g, &o).unwrap().text()
        );
        let mut json = Vec::new();
        write_roofline(&mut json, &g, &o, Format::Json).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert!(v.get("sol_us").is_some());
    }
}
