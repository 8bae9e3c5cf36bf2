//! The files of a sweep folder, the data format that `origami-bench sweep`, `merge`,
//! `report` and `refit` share (and `scripts/triton/bench_layout.py` writes):
//! `configs.csv` (one row per shape × config: predicted and measured time, TFLOP/s,
//! registers, spills), `shapes.csv` (one row per finished shape: A/BF, A/cuBLAS, rank of
//! the pick, Kendall tau-b, cuBLAS, clocks), `summary.json` (the summary over all shapes,
//! per set, and the sweep's meta) and the names of the plots drawn beside them. CSVs are
//! appended one shape at a time (resume) and read back for the summary, the merge and the
//! refit; [`summarize_folder`] derives `shapes.csv` again from `configs.csv` through
//! [`super::shape_metrics`] and writes `summary.json`; [`read_rows`] reads a finished
//! folder back whole (what `merge` and `passes` join). The text tables of a folder are
//! written in `report::bench`, its plots in `report::plots`.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::exit::Failure;

use super::shape_metrics::{shape_rows, ShapeFacts};
use super::sweep::{rows_by_shape, summarize, ConfigRow, SetSummary, ShapeRow};
use super::sweep_meta::SweepMeta;

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
    let text = match crate::input::read_text(path) {
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

/// Check the timings of `configs.csv`'s rows (read from `path`, row i on line i + 2):
/// a measured time must be finite and positive; a prediction finite and non-negative (0 is
/// "no prediction", as the Triton runner writes). With `dims`, M, N and K must be positive
/// too. The first offence is a one-line bad-input failure naming file, line and column.
pub fn check_config_rows(path: &Path, rows: &[ConfigRow], dims: bool) -> Result<(), Failure> {
    let bad = |i: usize, col: &str, what: &str, v: &dyn std::fmt::Display| {
        Err(Failure::bad(format!(
            "{} line {}, column {col}: must be {what} (got {v})",
            path.display(),
            i + 2
        )))
    };
    for (i, r) in rows.iter().enumerate() {
        if let Some(ms) = r.measured_ms {
            if !(ms.is_finite() && ms > 0.0) {
                return bad(i, "measured_ms", "a finite positive time", &ms);
            }
        }
        for (col, v) in [
            ("predicted_us", r.predicted_us),
            ("predicted_cycles", r.predicted_cycles),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(i, col, "a finite non-negative time (0: none)", &v);
            }
        }
        if dims {
            for (col, v) in [("m", r.m), ("n", r.n), ("k", r.k)] {
                if v == 0 {
                    return bad(i, col, "a positive size", &v);
                }
            }
        }
    }
    Ok(())
}

/// `summary.json`: the summary over all shapes at the top level (A/BF median, min and
/// mean, mean Kendall tau, infeasible picks, A/cuBLAS median, ...), then per set
/// (`sets`), then the meta.
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

fn set_json(s: &SetSummary) -> Value {
    serde_json::to_value(s).unwrap_or_else(|_| json!({}))
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

/// A sweep folder's rows once summarized: what its plots and text tables show.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRows {
    /// Every row of `configs.csv`, in file order.
    pub configs: Vec<ConfigRow>,
    /// The per-shape rows, derived from `configs.csv`, as `shapes.csv` now holds them.
    pub shapes: Vec<ShapeRow>,
}

/// Derive `shapes.csv` again from the folder's CSVs and write it and `summary.json`.
/// `meta` is the sweep's (or the merge's); `None` keeps the meta already in the folder's
/// `summary.json` (`{}` without one), and a folder without shapes is bad input then. A
/// sweep without shapes (a shard with none, a budget spent before the first) still
/// writes its summary. Returns the rows, for the plots and the text tables.
pub fn summarize_folder(dir: &Path, meta: Option<Value>) -> Result<SweepRows, Failure> {
    let facts: Vec<ShapeFacts> = read_csv(&dir.join(SHAPES_CSV)).map_err(Failure::bad)?;
    if facts.is_empty() && meta.is_none() {
        return Err(Failure::bad(format!(
            "{}: no shapes.csv rows (run `origami-bench sweep --out {}` first)",
            dir.display(),
            dir.display()
        )));
    }
    let configs_path = dir.join(CONFIGS_CSV);
    let configs: Vec<ConfigRow> = read_csv(&configs_path).map_err(Failure::bad)?;
    // Before anything is written: a plot or a summary of an impossible time is no use.
    check_config_rows(&configs_path, &configs, false)?;
    // Every metric is derived from configs.csv, whichever runner wrote the folder.
    let shapes = shape_rows(&facts, &configs).map_err(Failure::bad)?;
    let shapes_path = dir.join(SHAPES_CSV);
    write_csv(&shapes_path, &shapes)
        .map_err(|e| Failure::runtime(format!("{}: {e}", shapes_path.display())))?;
    let path = dir.join(SUMMARY_JSON);
    let meta = meta.unwrap_or_else(|| {
        crate::input::read_text(&path)
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
    Ok(SweepRows { configs, shapes })
}

// Reading finished folders back (`merge` of shards, `passes` of one sweep).

/// A finished sweep folder's meta (its `summary.json`).
pub fn read_meta(dir: &Path) -> Result<SweepMeta, Failure> {
    let path = dir.join(SUMMARY_JSON);
    let text = crate::input::read_text(&path).map_err(|e| {
        Failure::bad(format!(
            "{}: {e} (not a finished sweep folder: run or resume its `origami-bench sweep`)",
            path.display()
        ))
    })?;
    #[derive(serde::Deserialize)]
    struct Summary {
        meta: SweepMeta,
    }
    serde_json::from_str::<Summary>(&text)
        .map(|s| s.meta)
        .map_err(|e| {
            Failure::bad(format!(
                "{}: not the summary of a sweep: {e}",
                path.display()
            ))
        })
}

/// A finished sweep folder's meta, shape rows and config rows (grouped by shape).
pub struct FolderRows {
    pub dir: PathBuf,
    pub meta: SweepMeta,
    pub shapes: Vec<ShapeRow>,
    pub configs: Vec<Vec<ConfigRow>>,
}

/// Read a finished sweep folder (a shard's or a pass's).
pub fn read_rows(dir: &Path) -> Result<FolderRows, Failure> {
    let meta = read_meta(dir)?;
    let shapes: Vec<ShapeRow> = read_csv(&dir.join(SHAPES_CSV)).map_err(Failure::bad)?;
    let configs: Vec<ConfigRow> = read_csv(&dir.join(CONFIGS_CSV)).map_err(Failure::bad)?;
    let (configs, _trailing) = rows_by_shape(configs, &shapes)
        .map_err(|e| Failure::bad(format!("{}: {e}", dir.display())))?;
    Ok(FolderRows {
        dir: dir.to_path_buf(),
        meta,
        shapes,
        configs,
    })
}

/// The source folders of a merge or a join, each read by `read`; a destination that is
/// one of them is refused (`what`: the folders' kind, `verb`: what is done to them).
pub fn read_sources<T>(
    dirs: &[PathBuf],
    dest: &Path,
    what: &str,
    verb: &str,
    read: impl Fn(&Path) -> Result<T, Failure>,
) -> Result<Vec<T>, Failure> {
    let dest_id = std::fs::canonicalize(dest).ok();
    let mut read_dirs = Vec::new();
    for d in dirs {
        if dest_id.is_some() && std::fs::canonicalize(d).ok() == dest_id {
            return Err(Failure::bad(format!(
                "--out {}: is one of the {what} folders ({verb} into a new folder)",
                dest.display()
            )));
        }
        read_dirs.push(read(d)?);
    }
    Ok(read_dirs)
}

/// A merge's or a join's destination must not hold a sweep already.
pub fn check_fresh_dest(dest: &Path, verb: &str) -> Result<(), Failure> {
    if std::fs::metadata(dest.join(SHAPES_CSV)).is_ok_and(|m| m.len() > 0) {
        return Err(Failure::bad(format!(
            "--out {}: already holds a sweep ({verb} into a new folder)",
            dest.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::gemm::sweep::{measured_row, shape_row};
    use crate::model::Problem;

    fn rows() -> (Problem, Vec<ConfigRow>) {
        let p = Problem::new(512, 512, 512, Dtype::Fp16).unwrap();
        let mk = |s: &str, pick: bool, ms: f64| measured_row("seed_shapes", &p, s, pick, ms);
        (
            p,
            vec![
                mk("64x64x32,g8,w4,s3", true, 0.01),
                mk("128x64x32,g8,w4,s3", false, 0.012),
            ],
        )
    }

    fn tmpdir(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("origami-sweep-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn csv_round_trip_and_append() {
        let dir = tmpdir("csv");
        let path = dir.join(CONFIGS_CSV);
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
    fn summary_has_every_summary_key() {
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
    }

    #[test]
    fn a_folder_is_summarized_and_keeps_its_meta() {
        let dir = tmpdir("summarize");
        assert!(summarize_folder(&dir, None).is_err());
        let (p, r) = rows();
        let s = shape_row("seed_shapes", "", &p, &r, Some((0.005, 0.01)));
        write_csv(&dir.join(CONFIGS_CSV), &r).unwrap();
        write_csv(&dir.join(SHAPES_CSV), std::slice::from_ref(&s)).unwrap();
        let rows = summarize_folder(&dir, Some(json!({"gpu": "test"}))).unwrap();
        assert_eq!(rows.configs, r);
        assert_eq!(rows.shapes.len(), 1);
        let again = summarize_folder(&dir, None).unwrap();
        assert_eq!(again, rows);
        let j: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(SUMMARY_JSON)).unwrap())
                .unwrap();
        assert_eq!(j["meta"]["gpu"], json!("test"));
        assert!(!dir.join(PLOT_ABF).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
