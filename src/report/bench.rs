//! Writers and readers of `origami-bench sweep` outputs: `configs.csv` (every shape ×
//! config with predicted and measured time, TFLOP/s, registers, spills), `shapes.csv`
//! (per-shape A/BF, A/cuBLAS, rank of the pick, Kendall tau-b), `summary.json`, and the
//! text tables of `origami-bench run` and `sweep`. CSVs are appended one shape at a time
//! (resume) and read back for the summary, the plots and the refit.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::exit::Failure;
use crate::gemm::shape_metrics::{shape_rows, ShapeFacts};
use crate::gemm::sweep::{summarize, ConfigRow, SetSummary, ShapeRow};

/// File names inside a sweep's output folder.
pub const CONFIGS_CSV: &str = "configs.csv";
pub const SHAPES_CSV: &str = "shapes.csv";
pub const SUMMARY_JSON: &str = "summary.json";
pub const PLOT_PRED_VS_MEAS: &str = "predicted_vs_measured.png";
pub const PLOT_ABF: &str = "abf_per_shape.png";

/// Append rows to a CSV, writing the header when the file is new or empty.
pub fn append_csv<T: Serialize>(path: &Path, rows: &[T]) -> std::io::Result<()> {
    let fresh = std::fs::metadata(path)
        .map(|m| m.len() == 0)
        .unwrap_or(true);
    let f = OpenOptions::new().create(true).append(true).open(path)?;
    let mut w = csv::WriterBuilder::new().has_headers(fresh).from_writer(f);
    for r in rows {
        w.serialize(r).map_err(std::io::Error::other)?;
    }
    w.flush()
}

/// Rewrite a CSV with exactly these rows.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> std::io::Result<()> {
    let _ = std::fs::remove_file(path);
    if rows.is_empty() {
        return std::fs::write(path, b"");
    }
    append_csv(path, rows)
}

/// Read a CSV of rows (an absent or empty file is no rows).
pub fn read_csv<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut r = csv::Reader::from_reader(text.as_bytes());
    r.deserialize()
        .enumerate()
        .map(|(i, x)| x.map_err(|e| format!("{} line {}: {e}", path.display(), i + 2)))
        .collect()
}

/// `summary.json`: the issue's keys over all shapes at the top level, then per set.
pub fn summary_json(shapes: &[ShapeRow], meta: Value) -> Value {
    let all: Vec<&ShapeRow> = shapes.iter().collect();
    let top = summarize(&all);
    let mut sets: Vec<String> = shapes.iter().map(|s| s.set.clone()).collect();
    sets.dedup();
    let mut seen = std::collections::BTreeSet::new();
    sets.retain(|s| seen.insert(s.clone()));
    let per: serde_json::Map<String, Value> = sets
        .iter()
        .map(|name| {
            let rows: Vec<&ShapeRow> = shapes.iter().filter(|s| &s.set == name).collect();
            (name.clone(), set_json(&summarize(&rows)))
        })
        .collect();
    let mut v = set_json(&top);
    let o = v.as_object_mut().expect("an object");
    o.insert("sets".into(), Value::Object(per));
    o.insert("meta".into(), meta);
    v
}

/// The part of an existing `summary.json` a re-report keeps.
#[derive(serde::Deserialize)]
struct KeptMeta {
    #[serde(default = "empty_object")]
    meta: Value,
}

fn empty_object() -> Value {
    json!({})
}

/// Write `summary.json` and the plots of a sweep folder from its CSVs. `meta` is the
/// sweep's (or the merge's); `None` keeps the meta already in the folder's
/// `summary.json` (`{}` without one), and a folder without shapes is bad input then. A
/// sweep without shapes (a shard with none, a budget spent before the first) still
/// writes its summary, without plots. Returns the shape rows, for the text tables.
pub fn write_report(
    dir: &Path,
    no_plots: bool,
    meta: Option<Value>,
) -> Result<Vec<ShapeRow>, Failure> {
    let facts: Vec<ShapeFacts> = read_csv(&dir.join(SHAPES_CSV)).map_err(Failure::bad)?;
    if facts.is_empty() && meta.is_none() {
        return Err(Failure::bad(format!(
            "{}: no shapes.csv rows (run `origami-bench sweep --out {}` first)",
            dir.display(),
            dir.display()
        )));
    }
    let configs: Vec<ConfigRow> = read_csv(&dir.join(CONFIGS_CSV)).map_err(Failure::bad)?;
    // Every metric is derived from configs.csv, whichever runner wrote the folder.
    let shapes = shape_rows(&facts, &configs).map_err(Failure::bad)?;
    let shapes_path = dir.join(SHAPES_CSV);
    write_csv(&shapes_path, &shapes)
        .map_err(|e| Failure::runtime(format!("{}: {e}", shapes_path.display())))?;
    let path = dir.join(SUMMARY_JSON);
    let meta = meta.unwrap_or_else(|| {
        std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<KeptMeta>(&t).ok())
            .map_or_else(empty_object, |k| k.meta)
    });
    let j = summary_json(&shapes, meta);
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&j).map_err(Failure::runtime)? + "\n",
    )
    .map_err(|e| Failure::runtime(format!("{}: {e}", path.display())))?;
    if !no_plots && !shapes.is_empty() {
        super::plots::predicted_vs_measured_png(&shapes, &configs, &dir.join(PLOT_PRED_VS_MEAS))
            .map_err(Failure::runtime)?;
        super::plots::abf_png(&shapes, &dir.join(PLOT_ABF)).map_err(Failure::runtime)?;
    }
    Ok(shapes)
}

/// What `report`, `sweep` and `merge` print on stdout: the per-shape table, a blank
/// line, the summary lines.
pub fn report_text(shapes: &[ShapeRow]) -> String {
    format!("{}\n{}", shapes_table(shapes), summary_text(shapes))
}

fn set_json(s: &SetSummary) -> Value {
    serde_json::to_value(s).unwrap_or_else(|_| json!({}))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:.1}%", 100.0 * x))
}

fn num(v: Option<f64>, d: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.d$}"))
}

/// The per-shape table (text, for people), as in the NVIDIA port report (section 7.2).
pub fn shapes_table(shapes: &[ShapeRow]) -> String {
    let mut t = format!(
        "{:<24} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8} {:>6} {:>6}  {:<20} {:<20}\n",
        "shape",
        "pick TF",
        "BF TF",
        "cuBLAS",
        "A/BF",
        "A/cuB",
        "rank",
        "tau",
        "regs",
        "pick",
        "best"
    );
    for s in shapes {
        t.push_str(&format!(
            "{:<24} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8} {:>6} {:>6}  {:<20} {:<20}\n",
            format!("{}x{}x{}", s.m, s.n, s.k),
            num(s.pick_tflops, 1),
            num(s.bf_tflops, 1),
            num(s.cublas_tflops, 1),
            pct(s.a_bf),
            pct(s.a_cublas),
            s.pick_rank
                .map_or("-".into(), |r| format!("#{r}/{}", s.n_timed)),
            num(s.kendall_tau, 3),
            s.pick_registers.map_or("-".into(), |r| r.to_string()),
            s.pick,
            s.bf_config
        ));
    }
    t
}

/// The summary lines (text).
pub fn summary_text(shapes: &[ShapeRow]) -> String {
    let mut sets: Vec<String> = Vec::new();
    for s in shapes {
        if !sets.contains(&s.set) {
            sets.push(s.set.clone());
        }
    }
    let mut t = String::new();
    let mut line = |name: &str, rows: Vec<&ShapeRow>| {
        let s = summarize(&rows);
        t.push_str(&format!(
            "{name:<14} shapes {:>3}  A/BF median {} min {} mean {}  tau {}  infeasible picks {}  A/cuBLAS median {}  BF/cuBLAS median {}\n",
            s.n_shapes,
            pct(s.abf_median),
            pct(s.abf_min),
            pct(s.abf_mean),
            num(s.kendall_tau_mean, 3),
            s.infeasible_picks,
            pct(s.a_cublas_median),
            pct(s.bf_cublas_median)
        ));
    };
    for name in &sets {
        line(name, shapes.iter().filter(|s| &s.set == name).collect());
    }
    if sets.len() > 1 {
        line("all", shapes.iter().collect());
    }
    t
}

/// Append one line to a log file (the exact commands of a results folder).
pub fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    writeln!(f, "{line}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::gemm::sweep::{shape_row, ConfigRow, Planned};
    use crate::model::problem::parse_config;
    use crate::model::Problem;

    fn rows() -> (Problem, Vec<ConfigRow>) {
        let p = Problem::new(512, 512, 512, Dtype::Fp16).unwrap();
        let mk = |s: &str, pick: bool, ms: f64| {
            let mut r = ConfigRow::planned(
                "seed_shapes",
                &p,
                &Planned {
                    config: parse_config(s).unwrap(),
                    model_rank: 1,
                    predicted_cycles: ms * 1000.0,
                    predicted_us: ms,
                    is_pick: pick,
                },
            );
            r.measured_ms = Some(ms);
            r.passed = 1;
            r.registers = Some(128);
            r.spills = Some(0);
            r
        };
        (
            p,
            vec![
                mk("64x64x32,g8,w4,s3", true, 0.01),
                mk("128x64x32,g8,w4,s3", false, 0.012),
            ],
        )
    }

    #[test]
    fn csv_round_trip_and_append() {
        let dir = std::env::temp_dir().join(format!("origami-bench-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(CONFIGS_CSV);
        let _ = std::fs::remove_file(&path);
        let (p, r) = rows();
        append_csv(&path, &r[..1]).unwrap();
        append_csv(&path, &r[1..]).unwrap();
        let back: Vec<ConfigRow> = read_csv(&path).unwrap();
        assert_eq!(back, r);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().filter(|l| l.starts_with("set,")).count(), 1);
        let s = shape_row("seed_shapes", "", &p, &r, Some((0.005, 0.01)));
        let sp = dir.join(SHAPES_CSV);
        write_csv(&sp, std::slice::from_ref(&s)).unwrap();
        let sb: Vec<ShapeRow> = read_csv(&sp).unwrap();
        assert_eq!(sb.len(), 1);
        assert_eq!(sb[0].pick, s.pick);
        assert!(read_csv::<ShapeRow>(&dir.join("absent.csv"))
            .unwrap()
            .is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn summary_has_the_issue_keys() {
        let (p, r) = rows();
        let s = shape_row("seed_shapes", "", &p, &r, Some((0.005, 0.01)));
        let j = summary_json(std::slice::from_ref(&s), json!({"gpu": "test"}));
        for k in [
            "abf_median",
            "abf_min",
            "abf_mean",
            "kendall_tau_mean",
            "infeasible_picks",
            "a_cublas_median",
        ] {
            assert!(j.get(k).is_some(), "missing {k}");
        }
        assert_eq!(j["abf_median"], json!(1.0));
        assert_eq!(j["a_cublas_median"], json!(0.5));
        assert!(j["sets"]["seed_shapes"].is_object());
        let t = shapes_table(std::slice::from_ref(&s));
        assert!(t.contains("512x512x512") && t.contains("100.0%"));
        assert!(summary_text(&[s]).contains("A/BF median 100.0%"));
    }
}
