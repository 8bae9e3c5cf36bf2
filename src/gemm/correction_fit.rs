//! `origami-bench fit-correction`, whole: the learned correction of a family's model
//! (`model::correction`) fitted on a sweep folder's fitting sets and scored on every set
//! and input type of the folder, beside the model alone. The residual fitted is each timed
//! launch's log(measured / predicted) less its shape's median (a ranking within a shape
//! does not see a shape's scale), from the features of `model::correction::features`;
//! the model's prediction is its phase-1 score of the launch (what a selection corrects).
//! The ensemble's size (trees, leaves, launches per leaf) and the guard (how near the
//! model's best a launch must be predicted to be picked) are chosen among the values asked
//! by cross-validation over the fitting shapes alone (folds of whole shapes: a fold's
//! shapes are scored by an ensemble fitted on the others), maximising the folds' mean A/BF
//! plus a weight times their mean Kendall tau, as `refit` does; the held-out sets play no
//! part in any choice. Pure CPU work, spread over the machine's cores.
//!
//! The fitting shapes' rows are the timed launches of the space the selection ranks, or
//! (`--fit-space compiled`) of every config the family's compiler table holds
//! (`KernelFamily::compiled_configs`), each priced by the same model: more launches to
//! learn the residual from. Which shapes fit, their folds and every score stay within the
//! selection's space (a fold's shapes are scored as a held-out set is).

use std::path::PathBuf;
use std::sync::Arc;

use crate::dtype::Dtype;
use crate::exit::Failure;
use crate::hw::resolve::Tier;
use crate::model::correction::ensemble::Ensemble;
use crate::model::correction::features::{launch_features, FEATURES};
use crate::model::correction::fit::{fit, FitParams};
use crate::model::correction::{Correction, FitRecord};
use crate::model::Selector;
use crate::setup::{setup, SetupRequest};

use super::fit::{
    launch_key, measured_shapes, pick_abf, score, shape_scores_timed, MeasuredShape, Score,
};
use super::sweep::ConfigRow;
use super::sweep_files as files;

/// Which launches of the fitting shapes the residual is fitted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FitSpace {
    /// Those of the space the selection ranks.
    #[default]
    Selection,
    /// Those of every config the family's compiler table holds
    /// (`KernelFamily::compiled_configs`; the space for a family without one) that compile
    /// without spilling.
    Compiled,
}

impl FitSpace {
    /// What the report's first line says of it after the launches' count (nothing for the
    /// selection's space).
    fn note(self) -> &'static str {
        match self {
            FitSpace::Selection => "",
            FitSpace::Compiled => " (every config of the compiled table the sweep timed)",
        }
    }
}

/// What to fit.
#[derive(Debug, Clone)]
pub struct CorrectionRequest {
    /// The sweep folder (its `configs.csv`).
    pub dir: PathBuf,
    /// Sets (shape-list stems) to fit on; the others are held out.
    pub fit_sets: Vec<String>,
    /// The input type of the fitting rows (every type of the folder is scored).
    pub dtype: String,
    pub gpu: String,
    pub family: String,
    /// Which launches of the fitting shapes the residual is fitted on.
    pub fit_space: FitSpace,
    /// Candidate ensemble sizes (every combination is cross-validated).
    pub trees: Vec<usize>,
    pub leaves: Vec<usize>,
    pub min_leaf: Vec<usize>,
    pub learning_rate: f64,
    /// Guards to choose among (fractions).
    pub guards: Vec<f64>,
    /// Cross-validation folds over the fitting shapes (at least 2).
    pub folds: usize,
    /// Weight of the mean Kendall tau in the choice (mean A/BF + this x tau).
    pub tau_weight: f64,
    /// The command line, for the file's record.
    pub command: String,
}

/// One set and type's scores, the model alone and corrected.
#[derive(Debug, Clone)]
pub struct SetScore {
    pub set: String,
    pub dtype: String,
    /// "fit", "fit shapes, other type" (the fitting shapes' rows of another input type)
    /// or "held out".
    pub role: &'static str,
    pub model: Score,
    /// The corrected selection's score (the chosen ensemble and guard).
    pub corrected: Score,
    /// Shapes whose pick the correction moves at the chosen guard: (shape, the model's pick
    /// and its A/BF, the corrected pick and its A/BF).
    pub moved: Vec<MovedPick>,
}

/// A shape whose pick the correction moves.
#[derive(Debug, Clone)]
pub struct MovedPick {
    pub problem: crate::model::Problem,
    pub model: (crate::model::Config, f64),
    pub corrected: (crate::model::Config, f64),
}

/// Everything the fit found.
#[derive(Debug, Clone)]
pub struct CorrectionReport {
    pub correction: Correction,
    pub scores: Vec<SetScore>,
    /// Every candidate's cross-validation score (the fitting shapes only).
    pub cv: Vec<CvScore>,
    /// The candidate chosen.
    pub chosen: CvScore,
    /// The training fit: R^2 of the residual on the fitting rows.
    pub train_r2: f64,
    /// The launches the fitting rows came from.
    pub fit_space: FitSpace,
}

/// One fitting shape's rows: the features and residual of each timed launch.
#[derive(Debug, Clone, Default)]
struct ShapeRows {
    x: Vec<Vec<f64>>,
    y: Vec<f64>,
}

/// The rows of one measured shape (`None` with fewer than three timed launches the family
/// ranks: no median to take).
fn shape_rows(s: &Selector<'_>, sh: &MeasuredShape) -> Result<Option<ShapeRows>, Failure> {
    let sel = s.select(&sh.problem, false).map_err(Failure::bad)?;
    let mut rows = ShapeRows::default();
    for r in s.ranked(&sel, usize::MAX) {
        let Some(ms) = sh.times.get(&launch_key(&r.config)) else {
            continue;
        };
        if !(r.latency_us.is_finite() && r.latency_us > 0.0 && *ms > 0.0) {
            continue;
        }
        let f = launch_features(&sh.problem, &r.config, &s.gpu, r.latency_us);
        rows.x.push(f.to_vec());
        rows.y.push((ms * 1e3 / r.latency_us).ln());
    }
    if rows.y.len() < 3 {
        return Ok(None);
    }
    let mid = crate::stats::median(&rows.y);
    rows.y.iter_mut().for_each(|v| *v -= mid);
    Ok(Some(rows))
}

/// The rows of several shapes, joined.
fn joined<'r>(rows: impl Iterator<Item = &'r ShapeRows>) -> (Vec<Vec<f64>>, Vec<f64>) {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for r in rows {
        x.extend(r.x.iter().cloned());
        y.extend(r.y.iter().copied());
    }
    (x, y)
}

fn r2(e: &Ensemble, x: &[Vec<f64>], y: &[f64]) -> f64 {
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let tot: f64 = y.iter().map(|v| (v - mean).powi(2)).sum();
    let res: f64 = x
        .iter()
        .zip(y)
        .map(|(f, v)| (v - e.predict(f)).powi(2))
        .sum();
    if tot > 0.0 {
        1.0 - res / tot
    } else {
        0.0
    }
}

/// The first `trees` trees of an ensemble: boosting adds trees in turn, so this is the
/// ensemble a fit of `trees` rounds makes.
fn truncated(e: &Ensemble, trees: usize) -> Ensemble {
    Ensemble {
        trees: e.trees[..trees.min(e.trees.len())].to_vec(),
        ..e.clone()
    }
}

/// One candidate of the cross-validation and its score over the folds.
#[derive(Debug, Clone, PartialEq)]
pub struct CvScore {
    pub trees: usize,
    pub leaves: usize,
    pub min_leaf: usize,
    pub guard: f64,
    /// Mean over the fitting shapes (each scored by the fold that left it out).
    pub abf_mean: f64,
    pub abf_min: f64,
    pub tau_mean: f64,
    pub objective: f64,
    /// The standard error of the objective over the folds (their spread / sqrt(folds)).
    pub objective_se: f64,
}

/// Accumulates one candidate's fold scores (means weighted by the fold's shapes).
#[derive(Debug, Clone, Default)]
struct CvSum {
    shapes: usize,
    abf: f64,
    tau: f64,
    abf_min: f64,
    /// Each fold's objective (its A/BF mean + tau weight x its tau mean).
    fold_objectives: Vec<f64>,
}

impl CvSum {
    fn add(&mut self, s: &Score, tau_weight: f64) {
        if self.shapes == 0 {
            self.abf_min = f64::INFINITY;
        }
        self.shapes += s.shapes;
        self.abf += s.abf_mean * s.shapes as f64;
        self.tau += s.tau_mean * s.shapes as f64;
        self.abf_min = self.abf_min.min(s.abf_min);
        self.fold_objectives.push(s.objective_with(tau_weight));
    }

    /// The folds' standard error of the objective (0 with fewer than two folds).
    fn objective_se(&self) -> f64 {
        let v = &self.fold_objectives;
        if v.len() < 2 {
            return 0.0;
        }
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (var / n).sqrt()
    }
}

/// The candidate the folds choose by the one-standard-error rule (Breiman et al.,
/// *Classification and Regression Trees*, 1984; Hastie, Tibshirani and Friedman, *The
/// Elements of Statistical Learning*, section 7.10): among the candidates whose objective
/// is within one standard error of the best one's, the most conservative: the smallest
/// guard (the correction may move a pick the least far from the model's), then the fewest
/// trees and leaves and the most launches a leaf. Folds of a few shapes each score
/// candidates a few thousandths apart with errors of about one hundredth, so the best
/// objective alone picks by chance.
fn one_se_choice(cv: &[CvScore]) -> Option<&CvScore> {
    let best = cv
        .iter()
        .max_by(|a, b| a.objective.total_cmp(&b.objective))?;
    let floor = best.objective - best.objective_se;
    cv.iter()
        .filter(|c| c.objective >= floor - 1e-12)
        .min_by(|a, b| {
            (a.guard.total_cmp(&b.guard))
                .then(a.trees.cmp(&b.trees))
                .then(a.leaves.cmp(&b.leaves))
                .then(b.min_leaf.cmp(&a.min_leaf))
                .then(b.objective.total_cmp(&a.objective))
        })
}

/// The fold of each fitting shape: shapes in order of their size (M x N x K), dealt round.
fn folds_of(shapes: &[MeasuredShape], folds: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..shapes.len()).collect();
    let size = |i: usize| {
        let p = &shapes[i].problem;
        (p.m as f64) * (p.n as f64) * (p.k as f64)
    };
    order.sort_by(|&a, &b| size(a).total_cmp(&size(b)).then(a.cmp(&b)));
    let mut fold = vec![0; shapes.len()];
    for (rank, &i) in order.iter().enumerate() {
        fold[i] = rank % folds;
    }
    fold
}

fn check_request(req: &CorrectionRequest) -> Result<Dtype, Failure> {
    let dtype = req
        .dtype
        .parse::<Dtype>()
        .map_err(|e| Failure::bad(format!("--dtype: {e}")))?;
    if req.guards.is_empty()
        || req
            .guards
            .iter()
            .any(|g| !(g.is_finite() && (0.0..=10.0).contains(g)))
    {
        return Err(Failure::bad(
            "--guard: give fractions between 0 and 10 (e.g. 0,0.05)",
        ));
    }
    let bad = |flag: &str, v: &[usize], least: usize| -> Result<(), Failure> {
        if v.is_empty() || v.iter().any(|&x| x < least || x > 100_000) {
            return Err(Failure::bad(format!(
                "{flag}: give whole numbers from {least} to 100000 (got {v:?})"
            )));
        }
        Ok(())
    };
    bad("--trees", &req.trees, 1)?;
    bad("--leaves", &req.leaves, 2)?;
    bad("--min-leaf", &req.min_leaf, 1)?;
    if !(req.learning_rate > 0.0 && req.learning_rate <= 1.0) {
        return Err(Failure::bad(format!(
            "--learning-rate: must lie in (0, 1] (got {})",
            req.learning_rate
        )));
    }
    if !(2..=50).contains(&req.folds) {
        return Err(Failure::bad(format!(
            "--folds: from 2 to 50 (got {})",
            req.folds
        )));
    }
    if !req.tau_weight.is_finite() || req.tau_weight < 0.0 {
        return Err(Failure::bad(format!(
            "--tau-weight: must be a finite non-negative number (got {})",
            req.tau_weight
        )));
    }
    Ok(dtype)
}

/// The fitted constants file every constant of a setup comes from, if there is one.
fn constants_file_of(set: &crate::setup::Setup) -> Option<String> {
    let res = &set.resolved;
    let mut files = res.constants.values().map(|(_, t)| match t {
        Tier::Fitted(p) => Some(p.clone()),
        _ => None,
    });
    let first = files.next()??;
    files.all(|f| f.as_ref() == Some(&first)).then_some(first)
}

/// Run the fit (see the module header).
pub fn fit_correction(req: &CorrectionRequest) -> Result<CorrectionReport, Failure> {
    let dtype = check_request(req)?;
    let path = req.dir.join(files::CONFIGS_CSV);
    let rows: Vec<ConfigRow> = files::read_csv(&path).map_err(Failure::bad)?;
    files::check_config_rows(&path, &rows, true)?;
    let mut sets: Vec<(String, String)> = Vec::new();
    for r in &rows {
        let key = (r.set.clone(), r.dtype.clone());
        if !sets.contains(&key) {
            sets.push(key);
        }
    }
    for s in &req.fit_sets {
        if !sets.contains(&(s.clone(), dtype.to_string())) {
            return Err(Failure::bad(format!(
                "--fit-set {s}: no {dtype} rows of it in {}",
                path.display()
            )));
        }
    }
    let set = setup(&SetupRequest::on_preset(&req.gpu, &req.family))?;
    let constants_file = constants_file_of(&set).ok_or_else(|| {
        Failure::bad(format!(
            "family '{}' on '{}' has no fitted constants file of its own: a correction is \
             fitted on top of one (calibrations/fitted/)",
            req.family, req.gpu
        ))
    })?;
    let major = set.resolved.gpu.compute_capability[0];
    let rows_of = |sets: &[String], dt: &str| -> Vec<MeasuredShape> {
        let rows: Vec<ConfigRow> = rows.iter().filter(|r| r.dtype == dt).cloned().collect();
        measured_shapes(&rows, sets)
    };
    // the model alone: an embedded correction (the default where one applies) is what this
    // fit replaces, never its baseline
    let s0 = set.selector(dtype)?.with_correction(None);
    if !s0.throughput_model() {
        return Err(Failure::bad(format!(
            "family '{}': the correction is of the throughput model, which its constants \
             do not turn on",
            req.family
        )));
    }
    // the selector whose launches the rows are of (the shapes fitted are those with rows in
    // the selection's space either way)
    let wide = match req.fit_space {
        FitSpace::Selection => None,
        FitSpace::Compiled => Some(
            set.selector_over(dtype, set.family.compiled_configs())?
                .with_correction(None),
        ),
    };
    let mut fit_shapes = Vec::new();
    let mut fit_rows = Vec::new();
    for sh in rows_of(&req.fit_sets, &dtype.to_string()) {
        let Some(r) = shape_rows(&s0, &sh)? else {
            continue;
        };
        let r = match &wide {
            Some(w) => shape_rows(w, &sh)?.unwrap_or(r),
            None => r,
        };
        fit_shapes.push(sh);
        fit_rows.push(r);
    }
    if fit_shapes.len() < req.folds {
        return Err(Failure::bad(format!(
            "--folds {}: the fitting sets have {} shapes with timed launches the family ranks",
            req.folds,
            fit_shapes.len()
        )));
    }
    let names: Vec<String> = FEATURES.iter().map(|s| s.to_string()).collect();
    let max_trees = req.trees.iter().copied().max().unwrap_or(1);
    let params = |leaves: usize, min_leaf: usize| FitParams {
        trees: max_trees,
        learning_rate: req.learning_rate,
        max_leaves: leaves,
        min_samples_leaf: min_leaf,
        ..FitParams::default()
    };

    // Cross-validation: one job per (leaves, min_leaf, fold), spread over the cores.
    let fold = folds_of(&fit_shapes, req.folds);
    let jobs: Vec<(usize, usize, usize)> = req
        .leaves
        .iter()
        .flat_map(|&l| req.min_leaf.iter().map(move |&m| (l, m)))
        .flat_map(|(l, m)| (0..req.folds).map(move |f| (l, m, f)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len());
    // (job, trees, guard) -> fold score
    type FoldScores = Vec<((usize, usize, usize), usize, f64, Score)>;
    let results: Vec<Result<FoldScores, Failure>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| -> Result<FoldScores, Failure> {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(leaves, min_leaf, f)) = jobs.get(i) else {
                            break;
                        };
                        let (x, y) = joined(
                            fit_rows
                                .iter()
                                .enumerate()
                                .filter(|(i, _)| fold[*i] != f)
                                .map(|(_, r)| r),
                        );
                        let held: Vec<MeasuredShape> = fit_shapes
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| fold[*i] == f)
                            .map(|(_, s)| s.clone())
                            .collect();
                        let e = fit(names.clone(), &x, &y, &params(leaves, min_leaf))
                            .map_err(Failure::bad)?;
                        for &t in &req.trees {
                            let et = truncated(&e, t);
                            for &g in &req.guards {
                                let c = Correction::new(
                                    &req.family,
                                    major,
                                    &constants_file,
                                    g,
                                    FitRecord::default(),
                                    et.clone(),
                                );
                                let s = set.selector(dtype)?.with_correction(Some(Arc::new(c)));
                                let sc = score(&s, &held).map_err(Failure::bad)?;
                                out.push(((leaves, min_leaf, f), t, g, sc));
                            }
                        }
                        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        eprintln!(
                            "origami-bench: cross-validation {n}/{}: {leaves} leaves, at least \
                             {min_leaf} launches a leaf, fold {}",
                            jobs.len(),
                            f + 1
                        );
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Failure::runtime("a cross-validation worker failed")))
            })
            .collect()
    });
    let mut sums: std::collections::BTreeMap<(usize, usize, usize, u64), CvSum> =
        Default::default();
    for r in results {
        for ((l, m, _), t, g, sc) in r? {
            sums.entry((t, l, m, g.to_bits()))
                .or_default()
                .add(&sc, req.tau_weight);
        }
    }
    let mut cv: Vec<CvScore> = sums
        .into_iter()
        .map(|((trees, leaves, min_leaf, g), s)| {
            let n = s.shapes.max(1) as f64;
            let (abf_mean, tau_mean) = (s.abf / n, s.tau / n);
            CvScore {
                trees,
                leaves,
                min_leaf,
                guard: f64::from_bits(g),
                abf_mean,
                abf_min: s.abf_min,
                tau_mean,
                objective: abf_mean + req.tau_weight * tau_mean,
                objective_se: s.objective_se(),
            }
        })
        .collect();
    // listed in the order of the candidates' size and guard
    cv.sort_by(|a, b| {
        (a.trees, a.leaves, b.min_leaf, a.guard.to_bits()).cmp(&(
            b.trees,
            b.leaves,
            a.min_leaf,
            b.guard.to_bits(),
        ))
    });
    let chosen = one_se_choice(&cv)
        .cloned()
        .ok_or_else(|| Failure::runtime("no cross-validation score"))?;

    // The chosen ensemble fitted on every fitting shape.
    let (x, y) = joined(fit_rows.iter());
    let ensemble = fit(
        names,
        &x,
        &y,
        &FitParams {
            trees: chosen.trees,
            ..params(chosen.leaves, chosen.min_leaf)
        },
    )
    .map_err(Failure::bad)?;
    let train_r2 = r2(&ensemble, &x, &y);
    let record = FitRecord {
        sweep: path.display().to_string(),
        fit_sets: req.fit_sets.clone(),
        dtype: dtype.to_string(),
        gpu: req.gpu.clone(),
        rows: y.len(),
        shapes: fit_shapes.len(),
        trees: chosen.trees,
        learning_rate: req.learning_rate,
        max_leaves: chosen.leaves,
        min_samples_leaf: chosen.min_leaf,
        folds: req.folds,
        command: req.command.clone(),
    };
    let correction = Correction::new(
        &req.family,
        major,
        &constants_file,
        chosen.guard,
        record,
        ensemble,
    );
    let shared = Arc::new(correction.clone());
    let mut scores = Vec::new();
    for (set_name, dt) in &sets {
        let Ok(dtype) = dt.parse::<Dtype>() else {
            continue;
        };
        let shapes = rows_of(std::slice::from_ref(set_name), dt);
        if shapes.is_empty() {
            continue;
        }
        let plain = set.selector(dtype)?.with_correction(None);
        let corrected = set.selector(dtype)?.with_correction(Some(shared.clone()));
        let mut moved = Vec::new();
        for sh in &shapes {
            let a = pick_abf(&plain, sh).map_err(Failure::bad)?;
            let b = pick_abf(&corrected, sh).map_err(Failure::bad)?;
            if a.0 != b.0 {
                moved.push(MovedPick {
                    problem: sh.problem,
                    model: a,
                    corrected: b,
                });
            }
        }
        scores.push(SetScore {
            set: set_name.clone(),
            dtype: dt.clone(),
            role: match (
                req.fit_sets.contains(set_name),
                Some(dtype) == dtype_of(&req.dtype),
            ) {
                (true, true) => "fit",
                (true, false) => "fit shapes, other type",
                _ => "held out",
            },
            model: score(&plain, &shapes).map_err(Failure::bad)?,
            corrected: score(&corrected, &shapes).map_err(Failure::bad)?,
            moved,
        });
    }
    Ok(CorrectionReport {
        correction,
        scores,
        cv,
        chosen,
        train_r2,
        fit_space: req.fit_space,
    })
}

fn dtype_of(name: &str) -> Option<Dtype> {
    name.parse().ok()
}

/// A score as the report writes it: A/BF median / min / mean, then tau.
fn score_line(sc: &Score) -> String {
    format!(
        "{:.1} / {:.1} / {:.1} %, tau {:.3}",
        sc.abf_median * 100.0,
        sc.abf_min * 100.0,
        sc.abf_mean * 100.0,
        sc.tau_mean
    )
}

/// The report as text: the cross-validation table, then one line per set and type for the
/// model alone and corrected, and the shapes whose pick moved.
pub fn report_text(r: &CorrectionReport) -> String {
    let f = &r.correction.fit;
    let mut out = format!(
        "learned correction of family '{}' (constants {}), fitted on {} launches{} of {} {} \
         shapes of {} ({})\n",
        r.correction.family,
        r.correction.constants_file,
        f.rows,
        r.fit_space.note(),
        f.shapes,
        f.dtype,
        f.fit_sets.join(", "),
        f.sweep,
    );
    out += &format!(
        "cross-validation over the fitting shapes ({} folds of whole shapes): trees, leaves, \
         launches a leaf, guard: A/BF mean / min, tau mean, objective +- its standard error \
         (the choice: the most conservative within one standard error of the best)\n",
        f.folds
    );
    for c in &r.cv {
        let mark = if *c == r.chosen { "  <- chosen" } else { "" };
        out += &format!(
            "  {} x {} x {}, guard {}: {:.2} / {:.1} %, tau {:.3}, {:.4} +- {:.4}{mark}\n",
            c.trees,
            c.leaves,
            c.min_leaf,
            c.guard,
            c.abf_mean * 100.0,
            c.abf_min * 100.0,
            c.tau_mean,
            c.objective,
            c.objective_se
        );
    }
    out += &format!(
        "chosen: {} trees x {} leaves (learning rate {}, at least {} launches a leaf), guard \
         {}; R^2 of the residual on the fitting launches {:.3}\n",
        f.trees, f.max_leaves, f.learning_rate, f.min_samples_leaf, r.correction.guard, r.train_r2
    );
    out += "set, dtype, role: A/BF median / min / mean (lookups), Kendall tau mean\n";
    let line = score_line;
    for s in &r.scores {
        let role = s.role;
        out += &format!(
            "{} {} ({role}, {} shapes): model alone {}; corrected {}\n",
            s.set,
            s.dtype,
            s.model.shapes,
            line(&s.model),
            line(&s.corrected)
        );
        for m in &s.moved {
            out += &format!(
                "    {}x{}x{}: {} {:.1} % -> {} {:.1} %\n",
                m.problem.m,
                m.problem.n,
                m.problem.k,
                m.model.0,
                m.model.1 * 100.0,
                m.corrected.0,
                m.corrected.1 * 100.0
            );
        }
    }
    out
}

/// Header of `fit-correction --score --per-shape`'s CSV.
pub const PER_SHAPE_HEADER: &str =
    "set,dtype,M,N,K,launches,abf_model,abf_corrected,tau_model,tau_corrected";

/// `fit-correction --score FILE`: the correction in FILE (or the embedded one, `embedded`)
/// against the model alone on every set and type of a sweep folder, each selection kept to
/// the launches the sweep timed: the report (one line per set and type) and every shape's
/// CSV row (`--per-shape`, [`PER_SHAPE_HEADER`]; a tau that is undefined is left empty).
pub fn score_file(
    dir: &std::path::Path,
    file: &str,
    gpu: &str,
    family: &str,
) -> Result<(String, Vec<String>), Failure> {
    let path = dir.join(files::CONFIGS_CSV);
    let rows: Vec<ConfigRow> = files::read_csv(&path).map_err(Failure::bad)?;
    files::check_config_rows(&path, &rows, true)?;
    let set = setup(&SetupRequest::on_preset(gpu, family))?;
    let correction = if file == "embedded" {
        set.correction.clone().ok_or_else(|| {
            Failure::bad(format!(
                "--score embedded: no correction applies to family '{family}' on '{gpu}'"
            ))
        })?
    } else {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::bad(format!("--score {file}: {e}")))?;
        Arc::new(Correction::from_text(file, &text).map_err(Failure::bad)?)
    };
    let mut sets: Vec<(String, String)> = Vec::new();
    for r in &rows {
        let key = (r.set.clone(), r.dtype.clone());
        if !sets.contains(&key) {
            sets.push(key);
        }
    }
    let mut csv = Vec::new();
    let mut out = format!(
        "correction {} on family '{family}', GPU '{gpu}', sweep {}: A/BF median / min / mean \
         (lookups, each selection within the launches timed), Kendall tau mean\n",
        correction.path,
        path.display()
    );
    for (name, dt) in sets {
        let Ok(dtype) = dt.parse::<Dtype>() else {
            continue;
        };
        let mine: Vec<ConfigRow> = rows
            .iter()
            .filter(|r| r.dtype == dt && r.set == name)
            .cloned()
            .collect();
        let shapes = measured_shapes(&mine, &[]);
        if shapes.is_empty() {
            continue;
        }
        let plain = set.selector(dtype)?.with_correction(None);
        let corrected = set
            .selector(dtype)?
            .with_correction(Some(correction.clone()));
        let (pa, pb) = (
            shape_scores_timed(&plain, &shapes)?,
            shape_scores_timed(&corrected, &shapes)?,
        );
        let (a, b) = (Score::of_shapes(&pa), Score::of_shapes(&pb));
        let tau = |t: Option<f64>| t.map_or(String::new(), |t| format!("{t:.4}"));
        for (x, y) in pa.iter().zip(&pb) {
            let p = x.problem;
            csv.push(format!(
                "{name},{dt},{},{},{},{},{:.4},{:.4},{},{}",
                p.m,
                p.n,
                p.k,
                x.launches,
                x.abf,
                y.abf,
                tau(x.tau),
                tau(y.tau)
            ));
        }
        let line = score_line;
        out += &format!(
            "{name} {dt} ({} shapes): model alone {}; corrected {}\n",
            a.shapes,
            line(&a),
            line(&b)
        );
    }
    Ok((out, csv))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(trees: usize, leaves: usize, guard: f64, objective: f64, se: f64) -> CvScore {
        CvScore {
            trees,
            leaves,
            min_leaf: 40,
            guard,
            abf_mean: 0.98,
            abf_min: 0.9,
            tau_mean: 0.85,
            objective,
            objective_se: se,
        }
    }

    #[test]
    fn the_folds_choose_the_most_conservative_candidate_within_one_standard_error() {
        let cv = [
            cand(600, 63, 0.1, 1.2043, 0.01),
            cand(300, 63, 0.0, 1.2029, 0.01),
            cand(300, 15, 0.0, 1.1900, 0.01),
            cand(600, 31, 0.0, 1.2036, 0.01),
        ];
        // within 1.2043 - 0.01: the first, second and fourth; guard 0 first, then fewer
        // trees: 300 x 63
        let c = one_se_choice(&cv).unwrap();
        assert_eq!((c.trees, c.leaves, c.guard), (300, 63, 0.0));
        // with no spread the best objective alone decides
        let exact: Vec<CvScore> = cv
            .iter()
            .map(|c| CvScore {
                objective_se: 0.0,
                ..*c
            })
            .collect();
        let c = one_se_choice(&exact).unwrap();
        assert_eq!((c.trees, c.leaves, c.guard), (600, 63, 0.1));
        assert!(one_se_choice(&[]).is_none());
        let mut s = CvSum::default();
        for (abf, tau) in [(0.98, 0.8), (0.99, 0.9), (0.97, 0.85)] {
            s.add(
                &Score {
                    abf_mean: abf,
                    abf_median: abf,
                    abf_min: abf,
                    tau_mean: tau,
                    shapes: 4,
                    abf_tile_oracle_mean: abf,
                    abf_tile_oracle_median: abf,
                },
                0.25,
            );
        }
        // fold objectives 1.18, 1.215, 1.1825: mean 1.1925, sample sd 0.01953, se 0.01128
        assert!(
            (s.objective_se() - 0.011277).abs() < 1e-5,
            "{}",
            s.objective_se()
        );
    }
}
