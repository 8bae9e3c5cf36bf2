//! The sweep driver of `origami-bench sweep`, on any [`GemmBench`]: read and check the
//! shape lists, take this shard's shapes (every N-th of the union of the lists), resume a
//! folder (skip the shapes already in `shapes.csv`, drop the rows of a shape cut off
//! mid-way), plan every pending shape and compile the union of the plans once, then run
//! shape after shape within the time budget, appending `configs.csv` and `shapes.csv`
//! as each finishes ([`super::sweep_files`]). Progress goes to a [`SweepObserver`]; the
//! caller writes `summary.json` ([`super::sweep_files::summarize_folder`]), the plots and
//! the tables.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Deserialize;

use crate::dtype::Dtype;
use crate::exit::{Failure, ToExit};
use crate::model::shapes::read_shapes;
use crate::model::{Config, Problem, Selector};
use crate::setup::Setup;

use super::bench::{clock_seed, CompileOutcome, GemmBench};
use super::kernel::{check_problem, error_bound, instance_key};
use super::measure::TimingPolicy;
use super::sweep::{
    plan, rows_by_shape, run_shape, shape_row, ConfigRow, DoneShapes, Planned, ShapeRow,
    SweepOptions,
};
use super::sweep_files as files;
use super::sweep_meta::{list_digest, ListMeta, RunRecord, Shard, SweepMeta, SweepPlan};

/// One shape of a list, with its `model/layer` label (empty when the list has none).
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeEntry {
    pub problem: Problem,
    pub label: String,
}

/// A shape list; its set name is the file's stem.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeList {
    pub set: String,
    pub shapes: Vec<ShapeEntry>,
}

impl ShapeList {
    /// The list as the meta records it.
    pub fn meta(&self) -> ListMeta {
        let dtypes: Vec<String> = self
            .shapes
            .iter()
            .map(|s| s.problem.dtype.to_string())
            .collect();
        ListMeta {
            set: self.set.clone(),
            shapes: self.shapes.len(),
            digest: list_digest(self.shapes.iter().zip(&dtypes).map(|(s, d)| {
                (
                    s.problem.m,
                    s.problem.n,
                    s.problem.k,
                    d.as_str(),
                    s.label.as_str(),
                )
            })),
        }
    }
}

/// Read every list and check every shape for the kernel (bad input names the file and the
/// shape) before anything else is done.
pub fn read_shape_lists(paths: &[PathBuf], dtype: Dtype) -> Result<Vec<ShapeList>, Failure> {
    let mut lists = Vec::new();
    for path in paths {
        let probs = read_shapes(path, dtype).map_err(|e| Failure::bad(format!("--shapes {e}")))?;
        for p in &probs {
            if p.dtype != dtype {
                return Err(Failure::bad(format!(
                    "--shapes {}: shape {}x{}x{} is {}, the sweep runs {} (--dtype)",
                    path.display(),
                    p.m,
                    p.n,
                    p.k,
                    p.dtype,
                    dtype
                )));
            }
            check_problem(p).map_err(|e| {
                Failure::bad(format!(
                    "--shapes {}: {}x{}x{}: {e}",
                    path.display(),
                    p.m,
                    p.n,
                    p.k
                ))
            })?;
        }
        let labels = labels(path, probs.len());
        lists.push(ShapeList {
            set: set_name(path),
            shapes: probs
                .into_iter()
                .zip(labels)
                .map(|(problem, label)| ShapeEntry { problem, label })
                .collect(),
        });
    }
    Ok(lists)
}

/// Set name of a shape list: its file stem.
fn set_name(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "shapes".into())
}

/// "model/layer" labels of a shape list (empty when it has no such columns).
fn labels(path: &Path, n: usize) -> Vec<String> {
    let mut v = vec![String::new(); n];
    let Ok(text) = crate::input::read_text(path) else {
        return v;
    };
    let mut r = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let Ok(h) = r.headers().cloned() else {
        return v;
    };
    let col = |name: &str| h.iter().position(|x| x.eq_ignore_ascii_case(name));
    let (cm, cl) = (col("model"), col("layer"));
    for (i, rec) in r.records().enumerate().take(n) {
        if let Ok(rec) = rec {
            let parts: Vec<&str> = [cm, cl]
                .iter()
                .flatten()
                .filter_map(|c| rec.get(*c))
                .filter(|s| !s.is_empty())
                .collect();
            v[i] = parts.join("/");
        }
    }
    v
}

/// Shape-specific seed (stable for a base seed: a shape gets the same inputs in any
/// shard).
pub fn shape_seed(base: u64, p: &Problem) -> u64 {
    let mut x = base ^ p.m.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= p.n.wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(17);
    x ^= p.k.wrapping_mul(0x94D0_49BB_1331_11EB).rotate_left(31);
    x
}

/// What a sweep tells about itself as it goes (every method does nothing by default).
pub trait SweepObserver: Sync {
    /// An earlier run's shapes are kept.
    fn resumed(&self, _dir: &Path, _shapes_done: usize) {}
    /// Compiling this many planned configs.
    fn compiling(&self, _configs: usize) {}
    /// One config compiled (from the compile threads).
    fn compiled_one(&self) {}
    /// Compiling done: distinct kernel instances, planned configs, seconds, the outcome.
    fn compiled(&self, _instances: usize, _configs: usize, _seconds: f64, _o: &CompileOutcome) {}
    /// Measuring this many configs over all shapes.
    fn measuring(&self, _configs: u64) {}
    fn shape_started(&self, _set: &str, _p: &Problem) {}
    fn config_done(&self) {}
    /// Shape `done` of `of` finished with this row.
    fn shape_done(&self, _done: usize, _of: usize, _row: &ShapeRow) {}
    /// The time budget stops the sweep before `p`, with `shapes_left` shapes not run.
    fn budget_stop(&self, _p: &Problem, _shapes_left: usize) {}
    fn finished(&self) {}
}

/// An observer that says nothing.
pub struct Quiet;
impl SweepObserver for Quiet {}

/// A sweep's output folder, ready to be appended to.
#[derive(Debug)]
pub struct SweepFolder {
    pub dir: PathBuf,
    done: DoneShapes,
}

#[derive(Deserialize)]
struct ShardOfFolder {
    #[serde(default)]
    meta: MetaShard,
}

#[derive(Deserialize, Default)]
struct MetaShard {
    #[serde(default)]
    shard: Option<Shard>,
}

impl SweepFolder {
    /// Create the folder, or resume the run in it: the shapes in its `shapes.csv` are
    /// done, config rows after the last complete shape are dropped. A folder that holds
    /// another shard (or an unsharded sweep when a shard is asked for) is refused.
    pub fn open(
        dir: &Path,
        shard: Option<Shard>,
        observer: &dyn SweepObserver,
    ) -> Result<SweepFolder, Failure> {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::runtime(format!("--out {}: {e}", dir.display())))?;
        let cfg_path = dir.join(files::CONFIGS_CSV);
        let shp_path = dir.join(files::SHAPES_CSV);
        let done_rows: Vec<ShapeRow> = files::read_csv(&shp_path).map_err(Failure::runtime)?;
        let done = DoneShapes::of(&done_rows);
        if !done.is_empty() {
            let had = folder_shard(dir);
            if let Some(had) = had.filter(|h| *h != shard) {
                let name = |s: Option<Shard>| {
                    s.map_or("an unsharded sweep".into(), |s| format!("shard {s}"))
                };
                return Err(Failure::bad(format!(
                    "--out {} holds {} of a sweep, not {} (use another folder)",
                    dir.display(),
                    name(had),
                    name(shard)
                )));
            }
            let rows: Vec<ConfigRow> = files::read_csv(&cfg_path).map_err(Failure::runtime)?;
            let (groups, trailing) = rows_by_shape(rows, &done_rows)
                .map_err(|e| Failure::runtime(format!("{}: {e}", dir.display())))?;
            if trailing > 0 {
                let kept: Vec<ConfigRow> = groups.into_iter().flatten().collect();
                files::write_csv(&cfg_path, &kept).map_err(Failure::runtime)?;
            }
            observer.resumed(dir, done.len());
        } else if std::fs::metadata(&cfg_path).is_ok() {
            files::write_csv::<ConfigRow>(&cfg_path, &[]).map_err(Failure::runtime)?;
        }
        Ok(SweepFolder {
            dir: dir.to_path_buf(),
            done,
        })
    }
}

/// The shard recorded in a folder's `summary.json` (outer `None`: no readable summary).
fn folder_shard(dir: &Path) -> Option<Option<Shard>> {
    let text = crate::input::read_text(&dir.join(files::SUMMARY_JSON)).ok()?;
    serde_json::from_str::<ShardOfFolder>(&text)
        .ok()
        .map(|f| f.meta.shard)
}

/// What to sweep and how.
#[derive(Debug, Clone)]
pub struct SweepRequest {
    pub lists: Vec<ShapeList>,
    pub dtype: Dtype,
    /// The model variant as given (recorded in the meta).
    pub model: String,
    pub max_configs: Option<usize>,
    /// `--spread N`: N configs spread over the model's order (`sweep::Keep::Spread`).
    pub spread: Option<usize>,
    pub only_pick: bool,
    pub time_budget_s: Option<f64>,
    /// Energy under sustained load per timed config (`--energy-s`), seconds of window.
    pub energy_s: Option<f64>,
    /// Base seed of the inputs (default: the clock).
    pub seed: Option<u64>,
    pub shard: Option<Shard>,
    pub policy: TimingPolicy,
    /// The command line (recorded in the meta).
    pub command: String,
}

/// A shape to run.
struct Job<'a> {
    set: &'a str,
    label: &'a str,
    p: Problem,
    planned: Vec<Planned>,
}

/// Run the sweep into the folder; returns the meta for `summary.json` (its `shapes_left`
/// says how many shapes the time budget left out).
pub fn run_sweep<B: GemmBench>(
    bench: &mut B,
    setup: &Setup,
    sel: &Selector<'_>,
    req: &SweepRequest,
    mut folder: SweepFolder,
    observer: &dyn SweepObserver,
) -> Result<SweepMeta, Failure> {
    let mut jobs = Vec::new();
    let mut position = 0usize;
    for list in &req.lists {
        for e in &list.shapes {
            let mine = req.shard.map_or(true, |s| s.takes(position));
            position += 1;
            let key = (
                list.set.clone(),
                e.problem.m,
                e.problem.n,
                e.problem.k,
                e.problem.dtype.to_string(),
            );
            if !mine || folder.done.take(&key) {
                continue;
            }
            let keep = super::sweep::Keep::of(req.max_configs, req.spread, req.only_pick);
            let (_, planned) =
                plan(sel, &e.problem, keep).map_err(|e| Failure::new(e.exit_code(), e))?;
            jobs.push(Job {
                set: &list.set,
                label: &e.label,
                p: e.problem,
                planned,
            });
        }
    }
    let uniq: HashSet<Config> = jobs
        .iter()
        .flat_map(|j| j.planned.iter().map(|x| x.config))
        .collect();
    let mut all: Vec<Config> = uniq.into_iter().collect();
    all.sort();
    observer.compiling(all.len());
    let tc = Instant::now();
    let compiled = bench.compile(&all, &|| observer.compiled_one());
    let instances: HashSet<Config> = all.iter().map(instance_key).collect();
    observer.compiled(
        instances.len(),
        all.len(),
        tc.elapsed().as_secs_f64(),
        &compiled,
    );
    let base_seed = req.seed.unwrap_or_else(clock_seed);
    let clocks_start = bench.clocks();
    observer.measuring(jobs.iter().map(|j| j.planned.len() as u64).sum());
    let cfg_path = folder.dir.join(files::CONFIGS_CSV);
    let shp_path = folder.dir.join(files::SHAPES_CSV);
    let opts = SweepOptions {
        policy: req.policy,
        energy_s: req.energy_s,
    };
    let mut shapes_left = 0usize;
    for (i, j) in jobs.iter().enumerate() {
        if let Some(budget) = req.time_budget_s {
            // Rough cost: two launches per config at ~100 TFLOP/s plus ~5 ms of host work.
            let est = j.planned.len() as f64 * (2.0 * j.p.flops() / 100e12 + 0.005) + 0.5;
            if bench.elapsed_s() + est > budget {
                shapes_left = jobs.len() - i;
                observer.budget_stop(&j.p, shapes_left);
                break;
            }
        }
        observer.shape_started(j.set, &j.p);
        let started = bench.elapsed_s();
        let seed = shape_seed(base_seed, &j.p);
        let (rows, (cb, cb_energy)) =
            run_shape(bench, j.set, &j.p, &j.planned, &opts, seed, &|| {
                observer.config_done()
            })?;
        let mut srow = shape_row(j.set, j.label, &j.p, &rows, Some(cb));
        if let Some(e) = cb_energy {
            srow.cublas_energy_mj = Some(e.mj_per_launch);
            srow.cublas_energy_w = Some(e.avg_w);
            srow.cublas_sustained_ms = Some(e.ms_per_launch);
        }
        srow.sm_mhz = bench.clocks().and_then(|c| c.sm_mhz);
        srow.seconds = bench.elapsed_s() - started;
        files::append_csv(&cfg_path, &rows)
            .map_err(|e| Failure::runtime(format!("{}: {e}", cfg_path.display())))?;
        files::append_csv(&shp_path, std::slice::from_ref(&srow))
            .map_err(|e| Failure::runtime(format!("{}: {e}", shp_path.display())))?;
        observer.shape_done(i + 1, jobs.len(), &srow);
    }
    observer.finished();
    Ok(SweepMeta {
        plan: SweepPlan {
            gpu: bench.device_name(),
            gpu_source: setup.resolved.gpu_source.clone(),
            dtype: req.dtype.to_string(),
            family: setup.family.name().to_string(),
            model: req.model.clone(),
            params: setup.resolved.params,
            constants_overridden: setup
                .resolved
                .constants
                .iter()
                .map(|(k, (v, _))| (k.clone(), *v))
                .collect(),
            policy: (&req.policy).into(),
            error_bound: error_bound(req.dtype),
            shape_lists: req.lists.iter().map(ShapeList::meta).collect(),
            max_configs: req.max_configs,
            spread: req.spread,
            only_pick: req.only_pick,
            energy_s: req.energy_s,
        },
        run: RunRecord {
            base_seed: Some(base_seed),
            clocks_start,
            clocks_end: bench.clocks(),
            driver: bench.driver(),
            shapes_left,
            command: req.command.clone(),
        },
        shard: req.shard,
        shard_runs: Vec::new(),
        pass_runs: Vec::new(),
    })
}
