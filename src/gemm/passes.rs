//! `origami-bench passes`: join repeated passes of one sweep (the same plan run again,
//! another `--seed`: fresh inputs, another moment of the GPU) into the files of one
//! sweep whose measured time is each launch's median over the passes. One pass ranks
//! near-tied launches partly by its own timing noise (two passes of the hopper family's
//! held-out sweep agree at a Kendall tau near 0.94, docs/correction.md); the median of
//! several is the steadier reference to score a model's ranking against.
//!
//! Passes must share the sweep's plan (lists, device, options) and shard, and its model
//! too unless the plan times every config (then the launches are the same whatever the
//! model; the joined folder keeps the first pass's predictions and picks); the shape
//! at position i of every pass is the same shape (a pass cut by its time budget holds a
//! prefix of the plan's shapes). Per launch (shape and config): a row that did not pass
//! (not compiled, not run, verification failed) in any pass makes the joined row that
//! row; otherwise the time is the median of the passes' times (the mean of the middle two
//! for an even count; a screened time counts as the pass's time, as the pass's own
//! summary takes it), with the largest CoV and error, the samples summed and the
//! energies' medians. Per shape: cuBLAS's median time, its largest CoV, the median SM
//! clock, the seconds summed. `passes.csv` beside them keeps every pass's time of every
//! launch and its spread (slowest over fastest, less 1).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::exit::Failure;
use crate::model::Problem;
use crate::stats::{kendall_tau_b, median};

use super::kernel::tflops;
use super::sweep::{ConfigRow, ShapeRow};
use super::sweep_files::{self as files, check_fresh_dest, read_rows, read_sources, FolderRows};
use super::sweep_meta::{RunRecord, SweepMeta, SweepPlan};

/// The per-launch record of the passes, beside the joined folder's files.
pub const PASSES_CSV: &str = "passes.csv";

/// What to join.
#[derive(Debug, Clone)]
pub struct PassesRequest {
    /// The passes' folders (at least two).
    pub dirs: Vec<PathBuf>,
    /// The joined folder (created; must not hold a sweep).
    pub dest: PathBuf,
    /// Join the shapes every pass has when a pass is cut short.
    pub allow_partial: bool,
    /// The command line (recorded in the meta).
    pub command: String,
}

/// What a join did.
#[derive(Debug, Clone)]
pub struct PassesOutcome {
    /// The joined folder's meta (for `summary.json`).
    pub meta: SweepMeta,
    pub passes: usize,
    pub shapes: usize,
    /// Shapes some pass has and another lacks (partial joins only).
    pub shapes_left: usize,
    /// Launches timed in every pass.
    pub launches: usize,
    /// Median over those launches of the spread (slowest pass over fastest, less 1).
    pub median_spread: Option<f64>,
    /// Share of those launches whose spread exceeds 10 %.
    pub spread_over_10pct: Option<f64>,
    /// Median over shapes of the Kendall tau-b between the first two passes' times.
    pub pass_tau_median: Option<f64>,
    /// The passes' models differ (the predictions and picks are the first pass's).
    pub models_differ: bool,
}

/// One launch of `passes.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassRow {
    pub set: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub dtype: String,
    pub config: String,
    /// Passes that timed it.
    pub passes: usize,
    /// The joined (median) time, ms.
    pub measured_ms: Option<f64>,
    pub min_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// max / min - 1.
    pub spread: Option<f64>,
    /// Every pass's time in pass order, '|'-separated (empty: not timed in that pass).
    pub pass_ms: String,
}

/// One pass folder, read.
type PassFolder = FolderRows;

/// The first plan key on which two passes' launches may differ. The model's keys (its
/// name, parameters and constants) are free when the plan times every config of the
/// family on every shape: its picks and predictions differ then, its launches do not.
fn launch_difference(a: &SweepPlan, b: &SweepPlan) -> Option<&'static str> {
    let every_config =
        |p: &SweepPlan| p.max_configs.is_none() && p.spread.is_none() && !p.only_pick;
    if !(every_config(a) && every_config(b)) {
        return a.first_difference(b);
    }
    let mut same_model = b.clone();
    same_model.model.clone_from(&a.model);
    same_model.params = a.params;
    same_model
        .constants_overridden
        .clone_from(&a.constants_overridden);
    a.first_difference(&same_model)
}

/// The passes are of one plan and one shard, each folder given once, and agree shape by
/// shape on the positions they share.
fn check_passes(passes: &[PassFolder]) -> Result<(), Failure> {
    let first = &passes[0];
    for (i, p) in passes.iter().enumerate() {
        if let Some(key) = launch_difference(&p.meta.plan, &first.meta.plan) {
            return Err(Failure::bad(format!(
                "{}: its sweep differs from that of {} in meta.{key} (passes of one sweep share the lists, the model, the device and the options)",
                p.dir.display(),
                first.dir.display()
            )));
        }
        if p.meta.shard != first.meta.shard {
            return Err(Failure::bad(format!(
                "{} and {} are different shards (join the passes of one shard, then merge)",
                p.dir.display(),
                first.dir.display()
            )));
        }
        let id = std::fs::canonicalize(&p.dir).ok();
        if let Some(q) = passes[..i]
            .iter()
            .find(|q| id.is_some() && std::fs::canonicalize(&q.dir).ok() == id)
        {
            return Err(Failure::bad(format!(
                "{} is given twice (as {} too): give each pass once",
                p.dir.display(),
                q.dir.display()
            )));
        }
        for (j, (a, b)) in p.shapes.iter().zip(&first.shapes).enumerate() {
            if a.key() != b.key() || a.label != b.label {
                return Err(Failure::bad(format!(
                    "{}: shape {} is {}x{}x{} {} where {} has {}x{}x{} {} (not passes of one sweep)",
                    p.dir.display(),
                    j + 1,
                    a.m,
                    a.n,
                    a.k,
                    a.dtype,
                    first.dir.display(),
                    b.m,
                    b.n,
                    b.k,
                    b.dtype
                )));
            }
        }
    }
    Ok(())
}

fn median_of(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.into_iter().collect();
    (!v.is_empty()).then(|| median(&v))
}

fn max_of(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    v.into_iter().reduce(f64::max)
}

/// One launch's rows (one per pass that has it, pass order) joined, and its record.
fn join_launch(rows: &[Option<&ConfigRow>], p: &super::sweep::ShapeKey) -> (ConfigRow, PassRow) {
    let present: Vec<&ConfigRow> = rows.iter().flatten().copied().collect();
    let failed = present.iter().find(|r| r.passed == 0);
    let used: Vec<&ConfigRow> = present
        .iter()
        .filter(|r| r.timed().is_some())
        .copied()
        .collect();
    let mut row = match (failed, used.first()) {
        (Some(f), _) => (*f).clone(),
        (None, Some(u)) => (*u).clone(),
        (None, None) => present[0].clone(),
    };
    if failed.is_none() && !used.is_empty() {
        let ms = median_of(used.iter().filter_map(|r| r.timed()));
        row.measured_ms = ms;
        row.cov = max_of(used.iter().filter_map(|r| r.cov));
        row.rel_err = max_of(used.iter().filter_map(|r| r.rel_err));
        row.samples = used.iter().map(|r| r.samples).sum();
        row.screened = u8::from(used.iter().all(|r| r.screened != 0));
        row.tflops =
            p.4.parse()
                .ok()
                .and_then(|dtype| Problem::new(p.1, p.2, p.3, dtype).ok())
                .zip(ms)
                .map(|(problem, v)| tflops(&problem, v));
        row.energy_mj = median_of(used.iter().filter_map(|r| r.energy_mj));
        row.energy_w = median_of(used.iter().filter_map(|r| r.energy_w));
        row.sustained_ms = median_of(used.iter().filter_map(|r| r.sustained_ms));
        row.energy_busy = median_of(used.iter().filter_map(|r| r.energy_busy));
        row.energy_sm_mhz = median_of(used.iter().filter_map(|r| r.energy_sm_mhz));
    }
    let times: Vec<Option<f64>> = rows.iter().map(|r| r.and_then(ConfigRow::timed)).collect();
    let got: Vec<f64> = times.iter().flatten().copied().collect();
    let (lo, hi) = (
        got.iter().copied().reduce(f64::min),
        got.iter().copied().reduce(f64::max),
    );
    let rec = PassRow {
        set: row.set.clone(),
        m: row.m,
        n: row.n,
        k: row.k,
        dtype: row.dtype.clone(),
        config: row.config.clone(),
        passes: got.len(),
        measured_ms: row.timed(),
        min_ms: lo,
        max_ms: hi,
        spread: lo.zip(hi).map(|(l, h)| h / l - 1.0),
        pass_ms: times
            .iter()
            .map(|t| t.map_or_else(String::new, |v| format!("{v}")))
            .collect::<Vec<_>>()
            .join("|"),
    };
    (row, rec)
}

/// One shape's config rows over the passes: pass 0's order, then launches only later
/// passes have.
fn join_shape(groups: &[&[ConfigRow]]) -> (Vec<ConfigRow>, Vec<PassRow>, Option<f64>) {
    let key = groups[0]
        .first()
        .or_else(|| groups.iter().find_map(|g| g.first()))
        .map(|r| r.key());
    let Some(key) = key else {
        return (Vec::new(), Vec::new(), None);
    };
    let by_config: Vec<HashMap<&str, &ConfigRow>> = groups
        .iter()
        .map(|g| g.iter().map(|r| (r.config.as_str(), r)).collect())
        .collect();
    let (mut order, mut seen): (Vec<&str>, HashSet<&str>) = (Vec::new(), HashSet::new());
    for g in groups {
        for r in g.iter() {
            if seen.insert(r.config.as_str()) {
                order.push(r.config.as_str());
            }
        }
    }
    let (mut rows, mut recs) = (Vec::new(), Vec::new());
    let (mut t0, mut t1) = (Vec::new(), Vec::new());
    for c in order {
        let per_pass: Vec<Option<&ConfigRow>> =
            by_config.iter().map(|m| m.get(c).copied()).collect();
        if let (Some(a), Some(b)) = (
            per_pass[0].and_then(ConfigRow::timed),
            per_pass
                .get(1)
                .copied()
                .flatten()
                .and_then(ConfigRow::timed),
        ) {
            t0.push(a);
            t1.push(b);
        }
        let (row, rec) = join_launch(&per_pass, &key);
        rows.push(row);
        recs.push(rec);
    }
    (rows, recs, kendall_tau_b(&t0, &t1))
}

/// The joined shape row: cuBLAS's median, its largest CoV, the median clock, the seconds
/// summed (the rest is derived again from `configs.csv`).
fn join_shape_row(rows: &[&ShapeRow], n_configs: usize) -> ShapeRow {
    let mut s = rows[0].clone();
    s.n_configs = n_configs;
    s.cublas_ms = median_of(rows.iter().filter_map(|r| r.cublas_ms));
    s.cublas_cov = max_of(rows.iter().filter_map(|r| r.cublas_cov));
    s.sm_mhz =
        median_of(rows.iter().filter_map(|r| r.sm_mhz.map(f64::from))).map(|v| v.round() as u32);
    s.seconds = rows.iter().map(|r| r.seconds).sum();
    s.cublas_energy_mj = median_of(rows.iter().filter_map(|r| r.cublas_energy_mj));
    s.cublas_energy_w = median_of(rows.iter().filter_map(|r| r.cublas_energy_w));
    s.cublas_sustained_ms = median_of(rows.iter().filter_map(|r| r.cublas_sustained_ms));
    s
}

/// The joined run record: the common driver, no seed (the passes' differ), the plan's
/// shapes not joined, the join's command line; the passes' own records go to `pass_runs`.
fn joined_run(passes: &[PassFolder], shapes_left: usize, command: String) -> RunRecord {
    let driver = passes[0].meta.run.driver.clone();
    let same_driver = passes.iter().all(|p| p.meta.run.driver == driver);
    RunRecord {
        base_seed: None,
        clocks_start: None,
        clocks_end: None,
        driver: driver.filter(|_| same_driver),
        shapes_left,
        command,
    }
}

/// Join pass folders into `req.dest` (`configs.csv`, `shapes.csv`, `passes.csv`; the
/// caller writes `summary.json` with the returned meta,
/// [`super::sweep_files::summarize_folder`], and draws the plots).
pub fn join_passes(req: &PassesRequest) -> Result<PassesOutcome, Failure> {
    if req.dirs.len() < 2 {
        return Err(Failure::bad(
            "give at least two pass folders of one sweep to join",
        ));
    }
    let passes = read_sources(&req.dirs, &req.dest, "pass", "join", read_rows)?;
    check_passes(&passes)?;
    let common = passes.iter().map(|p| p.shapes.len()).min().unwrap_or(0);
    let most = passes.iter().map(|p| p.shapes.len()).max().unwrap_or(0);
    if common < most && !req.allow_partial {
        let short: Vec<String> = passes
            .iter()
            .filter(|p| p.shapes.len() < most)
            .map(|p| format!("{} ({} of {most} shapes)", p.dir.display(), p.shapes.len()))
            .collect();
        return Err(Failure::bad(format!(
            "passes cut short: {}; resume them, or --allow-partial to join the shapes every pass has",
            short.join(", ")
        )));
    }
    check_fresh_dest(&req.dest, "join")?;
    let (mut configs, mut shapes, mut recs, mut taus) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..common {
        let groups: Vec<&[ConfigRow]> = passes.iter().map(|p| p.configs[i].as_slice()).collect();
        let (rows, r, tau) = join_shape(&groups);
        let facts: Vec<&ShapeRow> = passes.iter().map(|p| &p.shapes[i]).collect();
        shapes.push(join_shape_row(&facts, rows.len()));
        configs.extend(rows);
        recs.extend(r);
        taus.extend(tau);
    }
    std::fs::create_dir_all(&req.dest)
        .map_err(|e| Failure::runtime(format!("--out {}: {e}", req.dest.display())))?;
    let write_err =
        |p: PathBuf| move |e: std::io::Error| Failure::runtime(format!("{}: {e}", p.display()));
    for (name, result) in [
        (
            files::CONFIGS_CSV,
            files::write_csv(&req.dest.join(files::CONFIGS_CSV), &configs),
        ),
        (
            files::SHAPES_CSV,
            files::write_csv(&req.dest.join(files::SHAPES_CSV), &shapes),
        ),
        (
            PASSES_CSV,
            files::write_csv(&req.dest.join(PASSES_CSV), &recs),
        ),
    ] {
        result.map_err(write_err(req.dest.join(name)))?;
    }
    let every: Vec<&PassRow> = recs.iter().filter(|r| r.passes == passes.len()).collect();
    let spreads: Vec<f64> = every.iter().filter_map(|r| r.spread).collect();
    let plan = passes[0].meta.plan.clone();
    let total = plan.total_shapes();
    let planned = passes[0].meta.shard.map_or(total, |s| s.share_of(total));
    let plan_left = planned.saturating_sub(most);
    let meta = SweepMeta {
        plan,
        run: joined_run(&passes, plan_left + most - common, req.command.clone()),
        shard: passes[0].meta.shard,
        shard_runs: Vec::new(),
        pass_runs: passes.iter().map(|p| p.meta.run.clone()).collect(),
    };
    Ok(PassesOutcome {
        meta,
        passes: passes.len(),
        shapes: shapes.len(),
        shapes_left: most - common,
        launches: every.len(),
        median_spread: median_of(spreads.iter().copied()),
        spread_over_10pct: (!spreads.is_empty())
            .then(|| spreads.iter().filter(|s| **s > 0.1).count() as f64 / spreads.len() as f64),
        pass_tau_median: median_of(taus),
        models_differ: passes
            .iter()
            .any(|p| p.meta.plan.first_difference(&passes[0].meta.plan).is_some()),
    })
}
