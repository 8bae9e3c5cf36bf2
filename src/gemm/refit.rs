//! `origami-bench refit`, whole: read a sweep folder's `configs.csv`, split its sets into
//! the fitting and the held-out shapes, set up the model from a preset and
//! `TRITONBLAS_HW_PARAMS` (without the embedded fitted tier: the fit starts from the
//! file), score it, run the coordinate descent of [`super::fit`], set the throughput
//! model's absolute scale (a ranking does not depend on it: it is set so that predictions
//! read as microseconds on the fitting shapes), learn the launch preference, and build
//! the flat override that alone reproduces the fitted model. Pure CPU work; the text is
//! `report::refit`'s.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::dtype::Dtype;
use crate::exit::Failure;
use crate::hw::presets::preset;
use crate::model::{KernelFamily, Selector, Variant};
use crate::setup::{setup, SetupRequest};

use super::fit::{
    fit, measured_shapes, median_time_ratio, prediction_rows, score, score_with, FitState, FitStep,
    LaunchTable, MeasuredShape, PredictionRow, Score, FIT_PARAMS,
};
use super::sweep::ConfigRow;
use super::sweep_files as files;

/// What to fit.
#[derive(Debug, Clone)]
pub struct RefitRequest {
    /// The sweep folder (its `configs.csv`).
    pub dir: PathBuf,
    /// Sets (shape-list stems) to fit on; the others are held out.
    pub fit_sets: Vec<String>,
    pub rounds: usize,
    pub tau_weight: f64,
    /// The preset the fit starts from.
    pub gpu: String,
    pub model: String,
    pub dtype: String,
    pub family: String,
    /// `TRITONBLAS_HW_PARAMS`, applied on top of the preset.
    pub override_file: Option<PathBuf>,
    /// Start from the calibration-only tier (`hw::calibrated`) of the measured document in
    /// `override_file` (with no rounds: score that tier).
    pub calibration_only: bool,
    /// Knobs the descent leaves at their starting value (`--hold`).
    pub held: Vec<String>,
}

/// The absolute-scale step: `tp_time_scale` from `from` to `to`, the median measured over
/// predicted time being `ratio`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaleStep {
    pub from: f64,
    pub to: f64,
    pub ratio: f64,
}

/// Everything the refit found.
#[derive(Debug, Clone)]
pub struct RefitReport {
    pub fit_sets: Vec<String>,
    pub held_sets: Vec<String>,
    pub before_fit: Score,
    pub after_fit: Score,
    /// Before and after on the held-out shapes, when there are any.
    pub held: Option<(Score, Score)>,
    /// The launch preference learned on the fitting shapes.
    pub launch_table: LaunchTable,
    /// Scores with the learned launch preference: (what, score), for the non-empty sets.
    pub with_table: Vec<(&'static str, Score)>,
    pub steps: Vec<FitStep>,
    pub scale_step: Option<ScaleStep>,
    /// The flat `TRITONBLAS_HW_PARAMS` override of the fitted model.
    pub override_json: serde_json::Value,
    /// The fitted model's prediction for every timed launch: (set kind, row), the fitting
    /// shapes first ("fit", then "held").
    pub predictions: Vec<(&'static str, PredictionRow)>,
}

/// The rows of `dtype`, and the sets they hold in order of appearance.
fn rows_of(req: &RefitRequest, dtype: Dtype) -> Result<(Vec<ConfigRow>, Vec<String>), Failure> {
    let path = req.dir.join(files::CONFIGS_CSV);
    let rows: Vec<ConfigRow> = files::read_csv(&path).map_err(Failure::bad)?;
    files::check_config_rows(&path, &rows, true)?;
    let rows: Vec<ConfigRow> = rows
        .into_iter()
        .filter(|r| r.dtype == dtype.to_string())
        .collect();
    if rows.is_empty() {
        return Err(Failure::bad(format!(
            "{}: no {dtype} rows in configs.csv",
            req.dir.display()
        )));
    }
    let mut sets: Vec<String> = Vec::new();
    for r in &rows {
        if !sets.contains(&r.set) {
            sets.push(r.set.clone());
        }
    }
    Ok((rows, sets))
}

/// Set `tp_time_scale` so that the fitted throughput model's predictions are
/// microseconds on the fitting shapes (median measured / predicted = 1). Nothing for the
/// latency model, or without timed configs.
fn absolute_scale(
    family: &dyn KernelFamily,
    gpu: &crate::hw::GpuDesc,
    variant: Variant,
    dtype: Dtype,
    state: &mut FitState,
    shapes: &[MeasuredShape],
) -> Result<Option<ScaleStep>, Failure> {
    let constants = state.model_constants().map_err(Failure::runtime)?;
    if constants.scoring() != crate::model::Scoring::Throughput {
        return Ok(None);
    }
    let s = Selector::new(family, gpu, &state.params, &constants, variant, dtype)
        .map_err(Failure::runtime)?;
    let Some(ratio) = median_time_ratio(&s, shapes) else {
        return Ok(None);
    };
    let step = ScaleStep {
        from: constants.tp_time_scale,
        to: constants.tp_time_scale * ratio,
        ratio,
    };
    state.constants.insert("tp_time_scale".into(), step.to);
    Ok(Some(step))
}

/// Run the refit (see the module header).
pub fn refit(req: &RefitRequest) -> Result<RefitReport, Failure> {
    let dtype = req
        .dtype
        .parse::<Dtype>()
        .map_err(|e| Failure::bad(format!("--dtype: {e}")))?;
    crate::setup::variant_named(&req.model)?;
    if !req.tau_weight.is_finite() || req.tau_weight < 0.0 {
        return Err(Failure::bad(format!(
            "--tau-weight: must be a finite non-negative number (got {})",
            req.tau_weight
        )));
    }
    let knobs: Vec<&str> = FIT_PARAMS
        .iter()
        .chain(crate::constants::refit_knobs(crate::constants::Scoring::Latency).iter())
        .chain(crate::constants::refit_knobs(crate::constants::Scoring::Throughput).iter())
        .copied()
        .collect();
    if let Some(h) = req.held.iter().find(|h| !knobs.contains(&h.as_str())) {
        return Err(Failure::bad(format!(
            "--hold {h}: not a knob of the refit (knobs: {})",
            knobs.join(", ")
        )));
    }
    let (rows, sets) = rows_of(req, dtype)?;
    for s in &req.fit_sets {
        if !sets.contains(s) {
            return Err(Failure::bad(format!(
                "--fit-set {s}: not in configs.csv (sets: {})",
                sets.join(", ")
            )));
        }
    }
    let held_sets: Vec<String> = sets
        .iter()
        .filter(|s| !req.fit_sets.contains(s))
        .cloned()
        .collect();
    let fit_shapes = measured_shapes(&rows, &req.fit_sets);
    let held_shapes = if held_sets.is_empty() {
        Vec::new()
    } else {
        measured_shapes(&rows, &held_sets)
    };
    let set = setup(&SetupRequest {
        device: None,
        gpu_name: Some(req.gpu.clone()),
        override_file: req.override_file.clone(),
        family: req.family.clone(),
        model: req.model.clone(),
        no_fitted: true,
        calibration_only: req.calibration_only,
    })?;
    let res = &set.resolved;
    let start = FitState {
        params: res.params,
        constants: res
            .constants
            .iter()
            .map(|(k, (v, _))| (k.clone(), *v))
            .collect(),
    };
    // the constants' own model: the refit moves constants, which a learned correction
    // (fitted on top of one file of them) does not follow
    let s0 = set.selector(dtype)?.with_correction(None);
    let before_fit = score(&s0, &fit_shapes).map_err(Failure::bad)?;
    let before_held = score(&s0, &held_shapes).map_err(Failure::bad)?;
    let (mut state, _, steps) = fit(
        set.family,
        &res.gpu,
        set.variant,
        dtype,
        start,
        &fit_shapes,
        req.rounds,
        req.tau_weight,
        &req.held,
    );
    let scale_step = absolute_scale(
        set.family,
        &res.gpu,
        set.variant,
        dtype,
        &mut state,
        &fit_shapes,
    )?;
    let fitted = state.model_constants().map_err(Failure::runtime)?;
    let s1 = Selector::new(
        set.family,
        &res.gpu,
        &state.params,
        &fitted,
        set.variant,
        dtype,
    )
    .map_err(Failure::runtime)?;
    let after_fit = score(&s1, &fit_shapes).map_err(Failure::bad)?;
    let after_held = score(&s1, &held_shapes).map_err(Failure::bad)?;
    // Launch choice learned from the fitting shapes (not expressible in the hardware
    // file: reported as evidence for the family's launch preference).
    let launch_table = LaunchTable::fit(&fit_shapes);
    let with_table = [
        ("fit set, default + table", &s0, &fit_shapes),
        ("held out, default + table", &s0, &held_shapes),
        ("fit set, fitted + table", &s1, &fit_shapes),
        ("held out, fitted + table", &s1, &held_shapes),
    ]
    .into_iter()
    .filter(|(_, _, shapes)| !shapes.is_empty())
    .map(|(name, s, shapes)| {
        score_with(s, shapes, Some(&launch_table))
            .map(|sc| (name, sc))
            .map_err(Failure::bad)
    })
    .collect::<Result<_, _>>()?;
    // The override holds every value that differs from the preset and the defaults (the
    // starting file's included), so that it alone reproduces the fitted model.
    let preset_params = preset(&req.gpu).map(|d| d.params).unwrap_or(res.params);
    let override_json = state.override_json(&FitState {
        params: preset_params,
        constants: BTreeMap::new(),
    });
    let mut predictions = Vec::new();
    for (kind, shapes) in [("fit", &fit_shapes), ("held", &held_shapes)] {
        let rows = prediction_rows(&s1, shapes).map_err(Failure::bad)?;
        predictions.extend(rows.into_iter().map(|r| (kind, r)));
    }
    Ok(RefitReport {
        predictions,
        fit_sets: req.fit_sets.clone(),
        held_sets,
        before_fit,
        after_fit,
        held: (!held_shapes.is_empty()).then_some((before_held, after_held)),
        launch_table,
        with_table,
        steps,
        scale_step,
        override_json,
    })
}
