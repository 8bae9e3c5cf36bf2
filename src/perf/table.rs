//! Runs the SOL or warp-specialized model over a CSV of GEMMs (the warp-specialized
//! persistent GEMM model's `predict_gemm.py`): one prediction row per input row with its
//! breakdown and, where a measured time is given, the ratio predicted / measured (that
//! model's RATIO: measured throughput over predicted throughput, above 1 when the model is
//! pessimistic) and its distribution (median, spread, share within 10 %).

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use super::gpu::GpuPerf;
use super::problem::{OutDtype, Pair, Problem};
use super::sol::sol;
use super::ws::{ws_predict, L2Mode, WsOptions};
use super::PerfError;
use crate::dtype::Dtype;
use crate::stats;

/// Which model to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    Sol,
    Ws(L2Mode),
}

impl Model {
    /// Short tag used in file names: sol, ws, ws_l2hit, ws_raster.
    pub fn tag(&self) -> &'static str {
        match self {
            Model::Sol => "sol",
            Model::Ws(L2Mode::None) => "ws",
            Model::Ws(L2Mode::HitRate(_)) => "ws_l2hit",
            Model::Ws(L2Mode::Raster { .. }) => "ws_raster",
        }
    }
    /// Name shown in plots and reports.
    pub fn title(&self) -> String {
        match self {
            Model::Sol => "SOL model".into(),
            Model::Ws(l2) => format!("WS persistent model (L2 {})", l2.name()),
        }
    }
}

/// One input row.
#[derive(Debug, Clone)]
pub struct InputRow {
    pub line: usize,
    pub problem: Problem,
    pub tile: Option<Pair>,
    pub cluster: Pair,
    pub two_cta: Option<bool>,
    pub measured_us: Option<f64>,
}

/// One output row.
#[derive(Debug, Clone, Serialize)]
pub struct OutputRow {
    #[serde(rename = "M")]
    pub m: u64,
    #[serde(rename = "N")]
    pub n: u64,
    #[serde(rename = "K")]
    pub k: u64,
    pub dtype: String,
    pub out_dtype: String,
    pub tile: String,
    pub cluster: String,
    pub model: String,
    pub predicted_us: f64,
    pub measured_us: Option<f64>,
    /// predicted / measured.
    pub ratio: Option<f64>,
    pub limiter: String,
    pub math_us: f64,
    pub dram_us: Option<f64>,
    pub overhead_us: Option<f64>,
    pub first_dma_us: Option<f64>,
    pub tiles: Option<u64>,
    pub waves: Option<u64>,
    pub dma_us: Option<f64>,
    pub epilogue_us: Option<f64>,
    pub last_dma_us: Option<f64>,
    pub last_math_us: Option<f64>,
    pub last_epilogue_us: Option<f64>,
    pub two_cta: Option<bool>,
    pub l2_hit_rate: Option<f64>,
    pub raster: Option<String>,
}

/// Distribution of predicted / measured.
#[derive(Debug, Clone, Serialize)]
pub struct RatioStats {
    pub model: String,
    pub gpu: String,
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    pub geomean: f64,
    pub min: f64,
    pub max: f64,
    pub p10: f64,
    pub p90: f64,
    /// p90 / p10 of the ratio.
    pub spread_p90_p10: f64,
    /// Share of rows with the ratio within [0.9, 1.1].
    pub within_10pct: f64,
    /// Share of rows with the ratio within [0.8, 1.25].
    pub within_25pct: f64,
    /// Kendall tau-b between predicted and measured times (ranking quality).
    pub kendall_tau_b: Option<f64>,
}

fn bad(path: &str, line: usize, msg: String) -> PerfError {
    PerfError::Input {
        path: path.to_string(),
        msg: format!("line {line}: {msg}"),
    }
}

const M_NAMES: [&str; 1] = ["m"];
const N_NAMES: [&str; 1] = ["n"];
const K_NAMES: [&str; 1] = ["k"];
const DTYPE_NAMES: [&str; 2] = ["dtype", "in_dtype"];
const TILE_NAMES: [&str; 3] = ["tile", "cta", "cta_tile"];
const CLUSTER_NAMES: [&str; 1] = ["cluster"];
const OUT_NAMES: [&str; 2] = ["out_dtype", "c_dtype"];
const TWO_CTA_NAMES: [&str; 1] = ["two_cta"];
const MEASURED_NAMES: [&str; 4] = ["measured_us", "measured", "actual_us", "time_us"];

/// Reads the model input CSV. Required columns: M, N, K, dtype (and tile for the ws
/// model); optional: cluster (default 1x1), out_dtype, two_cta, measured_us.
pub fn read_input(path: &Path, need_tile: bool) -> Result<Vec<InputRow>, PerfError> {
    let p = path.display().to_string();
    let text = crate::input::read_text(path).map_err(|e| PerfError::Input {
        path: p.clone(),
        msg: format!("cannot read: {e}"),
    })?;
    parse_input(&text, &p, need_tile)
}

/// Parses the model input CSV text; `origin` names it in errors.
pub fn parse_input(text: &str, origin: &str, need_tile: bool) -> Result<Vec<InputRow>, PerfError> {
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers = rdr
        .headers()
        .map_err(|e| bad(origin, 1, format!("malformed header: {e}")))?
        .clone();
    let index: HashMap<String, usize> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| (h.to_ascii_lowercase(), i))
        .collect();
    let find = |names: &[&str]| names.iter().find_map(|n| index.get(*n).copied());
    let require = |names: &[&str]| {
        find(names).ok_or_else(|| PerfError::Input {
            path: origin.to_string(),
            msg: format!(
                "missing column '{}' (header: {})",
                names[0],
                headers.iter().collect::<Vec<_>>().join(",")
            ),
        })
    };
    let (im, inn, ik, idt) = (
        require(&M_NAMES)?,
        require(&N_NAMES)?,
        require(&K_NAMES)?,
        require(&DTYPE_NAMES)?,
    );
    let itile = if need_tile {
        Some(require(&TILE_NAMES)?)
    } else {
        find(&TILE_NAMES)
    };
    let icl = find(&CLUSTER_NAMES);
    let iout = find(&OUT_NAMES);
    let i2 = find(&TWO_CTA_NAMES);
    let imeas = find(&MEASURED_NAMES);

    let mut rows = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| {
            bad(
                origin,
                line,
                format!("malformed row: {}", crate::input::csv_row_problem(&e)),
            )
        })?;
        crate::input::single_line_fields(&rec).map_err(|e| bad(origin, line, e))?;
        let field = |idx: usize| rec.get(idx).unwrap_or("").trim();
        let size = |idx: usize, name: &str| -> Result<u64, PerfError> {
            match field(idx).parse::<u64>() {
                Ok(v) if v > 0 => Ok(v),
                _ => Err(bad(
                    origin,
                    line,
                    format!("field '{name}': '{}' is not a positive integer", field(idx)),
                )),
            }
        };
        let (m, n, k) = (size(im, "M")?, size(inn, "N")?, size(ik, "K")?);
        let dtype: Dtype = field(idt)
            .parse()
            .map_err(|e| bad(origin, line, format!("field 'dtype': {e}")))?;
        let mut problem =
            Problem::new(m, n, k, dtype).map_err(|e| bad(origin, line, e.to_string()))?;
        if let Some(io) = iout {
            if !field(io).is_empty() {
                problem.out = field(io)
                    .parse::<OutDtype>()
                    .map_err(|e| bad(origin, line, format!("field 'out_dtype': {e}")))?;
            }
        }
        let pair = |idx: Option<usize>, name: &str| -> Result<Option<Pair>, PerfError> {
            match idx.map(field) {
                None | Some("") => Ok(None),
                Some(s) => s
                    .parse::<Pair>()
                    .map(Some)
                    .map_err(|e| bad(origin, line, format!("field '{name}': {e}"))),
            }
        };
        let tile = pair(itile, "tile")?;
        if need_tile && tile.is_none() {
            return Err(bad(origin, line, "field 'tile' is empty".into()));
        }
        let cluster = pair(icl, "cluster")?.unwrap_or(Pair { m: 1, n: 1 });
        let two_cta = match i2.map(field) {
            None | Some("") => None,
            Some(s) => match s.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" => Some(true),
                "0" | "false" | "no" => Some(false),
                _ => {
                    return Err(bad(
                        origin,
                        line,
                        format!("field 'two_cta': '{s}' is not true/false"),
                    ))
                }
            },
        };
        let measured_us = match imeas.map(field) {
            None | Some("") => None,
            Some(s) => match s.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 => Some(v),
                _ => {
                    return Err(bad(
                        origin,
                        line,
                        format!("field 'measured_us': '{s}' is not a positive number"),
                    ))
                }
            },
        };
        rows.push(InputRow {
            line,
            problem,
            tile,
            cluster,
            two_cta,
            measured_us,
        });
    }
    if rows.is_empty() {
        return Err(PerfError::Input {
            path: origin.to_string(),
            msg: "no data rows".into(),
        });
    }
    Ok(rows)
}

/// Predicts every row.
pub fn predict_rows(
    rows: &[InputRow],
    gpu: &GpuPerf,
    model: Model,
    origin: &str,
) -> Result<Vec<OutputRow>, PerfError> {
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let p = &r.problem;
        let wrap = |e: PerfError| bad(origin, r.line, e.to_string());
        let mut row = OutputRow {
            m: p.m,
            n: p.n,
            k: p.k,
            dtype: p.dtype.name().into(),
            out_dtype: p.out.name().into(),
            tile: r.tile.map(|t| t.to_string()).unwrap_or_default(),
            cluster: r.cluster.to_string(),
            model: model.tag().into(),
            predicted_us: 0.0,
            measured_us: r.measured_us,
            ratio: None,
            limiter: String::new(),
            math_us: 0.0,
            dram_us: None,
            overhead_us: None,
            first_dma_us: None,
            tiles: None,
            waves: None,
            dma_us: None,
            epilogue_us: None,
            last_dma_us: None,
            last_math_us: None,
            last_epilogue_us: None,
            two_cta: None,
            l2_hit_rate: None,
            raster: None,
        };
        match model {
            Model::Sol => {
                let s = sol(p, gpu).map_err(wrap)?;
                row.predicted_us = s.sol_us;
                row.limiter = s.bound.to_uppercase();
                row.math_us = s.math_us;
                row.dram_us = Some(s.dram_us);
            }
            Model::Ws(l2) => {
                let o = WsOptions {
                    tile: r.tile.ok_or_else(|| {
                        bad(
                            origin,
                            r.line,
                            "the ws model needs a tile (column 'tile')".into(),
                        )
                    })?,
                    cluster: r.cluster,
                    two_cta: r.two_cta,
                    l2,
                };
                let b = ws_predict(p, gpu, &o).map_err(wrap)?;
                row.predicted_us = b.predicted_us;
                row.limiter = b.mainloop.limiter().into();
                row.math_us = b.mainloop.math_us;
                row.overhead_us = Some(b.overhead_us);
                row.first_dma_us = Some(b.first_dma_us);
                row.tiles = Some(b.tiles);
                row.waves = Some(b.waves);
                row.dma_us = Some(b.mainloop.dma_us);
                row.epilogue_us = Some(b.mainloop.epilogue_us);
                row.last_dma_us = Some(b.last_wave.dma_us);
                row.last_math_us = Some(b.last_wave.math_us);
                row.last_epilogue_us = Some(b.last_wave.epilogue_us);
                row.two_cta = Some(b.two_cta);
                row.l2_hit_rate = Some(b.l2_hit_rate);
                row.raster = b.raster.map(String::from);
            }
        }
        row.ratio = r.measured_us.map(|m| row.predicted_us / m);
        out.push(row);
    }
    Ok(out)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Ratio statistics over the rows that have a measurement; `None` when none has.
pub fn ratio_stats(rows: &[OutputRow], model: &str, gpu: &str) -> Option<RatioStats> {
    let with: Vec<&OutputRow> = rows.iter().filter(|r| r.ratio.is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let mut ratios: Vec<f64> = with.iter().filter_map(|r| r.ratio).collect();
    ratios.sort_by(|a, b| a.total_cmp(b));
    let n = ratios.len();
    let share = |lo: f64, hi: f64| {
        ratios.iter().filter(|&&r| (lo..=hi).contains(&r)).count() as f64 / n as f64
    };
    let pred: Vec<f64> = with.iter().map(|r| r.predicted_us).collect();
    let meas: Vec<f64> = with.iter().filter_map(|r| r.measured_us).collect();
    let p10 = quantile(&ratios, 0.1);
    let p90 = quantile(&ratios, 0.9);
    Some(RatioStats {
        model: model.to_string(),
        gpu: gpu.to_string(),
        n,
        median: stats::median(&ratios),
        mean: stats::mean(&ratios),
        geomean: (ratios.iter().map(|r| r.ln()).sum::<f64>() / n as f64).exp(),
        min: ratios[0],
        max: ratios[n - 1],
        p10,
        p90,
        spread_p90_p10: p90 / p10,
        within_10pct: share(0.9, 1.1),
        within_25pct: share(0.8, 1.25),
        kendall_tau_b: stats::kendall_tau_b(&pred, &meas),
    })
}

impl RatioStats {
    pub fn text(&self) -> String {
        format!(
            "{} on {}: predicted/measured over {} rows: median {:.3}, geomean {:.3}, p10 {:.3}, p90 {:.3} (spread {:.2}x), min {:.3}, max {:.3}; within 10%: {:.1}%, within 25%: {:.1}%; Kendall tau-b {}\n",
            self.model,
            self.gpu,
            self.n,
            self.median,
            self.geomean,
            self.p10,
            self.p90,
            self.spread_p90_p10,
            self.min,
            self.max,
            self.within_10pct * 100.0,
            self.within_25pct * 100.0,
            self.kendall_tau_b
                .map(|t| format!("{t:.3}"))
                .unwrap_or_else(|| "n/a".into())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "M,N,K,dtype,tile,cluster,measured_us\n\
                       4096,4096,16384,nvfp4,128x64,2x1,225.28\n\
                       4096,7168,257,fp8,64x256,2x1,35.6352\n";

    #[test]
    fn reads_and_predicts() {
        let rows = parse_input(CSV, "t.csv", true).unwrap();
        assert_eq!(rows.len(), 2);
        let g = GpuPerf::by_name("b200").unwrap();
        let out = predict_rows(&rows, &g, Model::Ws(L2Mode::None), "t.csv").unwrap();
        assert_eq!(out[0].limiter, "DMA");
        assert_eq!(out[1].limiter, "EPILOG");
        let s = ratio_stats(&out, "ws", "b200").unwrap();
        assert_eq!(s.n, 2);
        let sol_out = predict_rows(&rows, &g, Model::Sol, "t.csv").unwrap();
        // nothing beats the speed of light
        assert!(sol_out.iter().all(|r| r.ratio.unwrap() < 1.0));
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = parse_input("M,N,K,dtype,tile\n1,2,x,fp16,64x64\n", "f.csv", true)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("f.csv") && e.contains("line 2") && e.contains("'K'"),
            "{e}"
        );
        let e = parse_input("M,N,dtype\n1,2,fp16\n", "f.csv", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing column 'k'"), "{e}");
        let e = parse_input("M,N,K,dtype\n1,2,3,fp64\n", "f.csv", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dtype") && e.contains("fp64"), "{e}");
        let e = parse_input("M,N,K,dtype\n1,2,3\n", "f.csv", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("malformed"), "{e}");
        let e = parse_input("M,N,K,dtype\n", "f.csv", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no data rows"), "{e}");
        let e = parse_input("M,N,K,dtype\n1,2,3,fp16\n", "f.csv", true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing column 'tile'"), "{e}");
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert!((quantile(&v, 0.1) - 1.4).abs() < 1e-12);
    }
}
