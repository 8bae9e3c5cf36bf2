//! The energy model against a sweep's measurements (issue 15, section 3's report): every
//! config of a sweep folder whose energy was measured (`sweep --energy-s`) priced by the
//! model (`model::objective`, the costs of `hw::energy`), and per shape the Kendall tau of
//! predicted against measured energy, the measured energy of the config the model rates
//! lowest over the least measured (the energy pick as a lookup among the configs timed),
//! the same for the sustained time, and the measured and predicted time/energy fronts.
//! The pure comparison is [`compare`]; [`check_folder`] reads the folder and sets up the
//! model the sweep used.

use std::path::Path;

use serde::Serialize;

use crate::exit::Failure;
use crate::model::energy::EnergyPrediction;
use crate::model::objective::{
    front_of, objective_pick, price_all, price_of, same_launch, EnergyPlan, Objective,
};
use crate::model::problem::{parse_config, Config};
use crate::model::Problem;
use crate::stats::{kendall_tau_b, median};

use super::sweep::{ConfigRow, ShapeKey};
use super::sweep_files::{read_csv, CONFIGS_CSV, SUMMARY_JSON};

/// One measured config with its prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnergyRow {
    pub set: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub dtype: String,
    pub config: String,
    pub measured_mj: f64,
    pub predicted_mj: f64,
    /// predicted / measured energy.
    pub ratio: f64,
    pub measured_w: f64,
    pub predicted_w: f64,
    /// Measured sustained time per GEMM, microseconds.
    pub measured_sustained_us: f64,
    pub predicted_sustained_us: f64,
    /// The model's time at full clock (through the family's time map), microseconds.
    pub predicted_time_us: f64,
    pub predicted_capped: bool,
    /// In the time pick's pool (the learned correction's guard; `objective::Priced`): the
    /// sustained-time pick is taken among these first.
    pub predicted_in_guard: bool,
    /// The model's time pick (the same launch, any GROUP_SIZE_M): each objective's pick
    /// leaves it only for a predicted saving beyond `objective::DEPARTURE_MARGIN`.
    pub predicted_time_pick: bool,
    /// Whether the config is on the measured / the predicted front of its shape.
    pub measured_front: bool,
    pub predicted_front: bool,
}

/// One shape's comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeEnergy {
    pub set: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub dtype: String,
    pub configs: usize,
    pub median_ratio: f64,
    /// Kendall tau-b of predicted against measured energy (None: fewer than 3 configs).
    pub tau_energy: Option<f64>,
    pub tau_sustained: Option<f64>,
    /// Least measured energy over the measured energy of the config predicted least.
    pub energy_pick: f64,
    /// Least measured sustained time over that of the config predicted fastest sustained.
    pub sustained_pick: f64,
    pub energy_pick_config: String,
    pub least_energy_config: String,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnergyCheck {
    pub rows: Vec<EnergyRow>,
    pub shapes: Vec<ShapeEnergy>,
    pub median_ratio: Option<f64>,
    /// Median |predicted / measured - 1|.
    pub median_abs_error: Option<f64>,
    pub tau_energy_median: Option<f64>,
    pub tau_sustained_median: Option<f64>,
    pub energy_pick_median: Option<f64>,
    pub energy_pick_min: Option<f64>,
    pub sustained_pick_median: Option<f64>,
    pub sustained_pick_min: Option<f64>,
    /// Measured rows the model could not price (not a feasible config of its family).
    pub unpriced: usize,
}

/// Compare the measured rows with `predict`'s energy of each, whether it lies in the time
/// pick's pool, and whether it is the time pick (`None`: not priced).
pub fn compare(
    rows: &[ConfigRow],
    mut predict: impl FnMut(&ConfigRow) -> Option<(EnergyPrediction, bool, bool)>,
) -> EnergyCheck {
    let mut groups: Vec<(ShapeKey, Vec<(EnergyRow, f64)>)> = Vec::new();
    let mut unpriced = 0;
    for r in rows {
        let (Some(mj), Some(w), Some(ms)) = (r.energy_mj, r.energy_w, r.sustained_ms) else {
            continue;
        };
        if r.passed != 1 || !(mj.is_finite() && mj > 0.0) {
            continue;
        }
        let Some((e, in_guard, time_pick)) = predict(r) else {
            unpriced += 1;
            continue;
        };
        let row = EnergyRow {
            set: r.set.clone(),
            m: r.m,
            n: r.n,
            k: r.k,
            dtype: r.dtype.clone(),
            config: r.config.clone(),
            measured_mj: mj,
            predicted_mj: e.energy_mj,
            ratio: e.energy_mj / mj,
            measured_w: w,
            predicted_w: e.power_w,
            measured_sustained_us: ms * 1e3,
            predicted_sustained_us: e.sustained_us,
            predicted_time_us: e.time_us,
            predicted_capped: e.capped,
            predicted_in_guard: in_guard,
            predicted_time_pick: time_pick,
            measured_front: false,
            predicted_front: false,
        };
        match groups.iter_mut().find(|(k, _)| *k == r.key()) {
            Some((_, v)) => v.push((row, 0.0)),
            None => groups.push((r.key(), vec![(row, 0.0)])),
        }
    }
    let mut out_rows = Vec::new();
    let mut shapes = Vec::new();
    for ((set, m, n, k, dtype), mut v) in groups {
        let measured: Vec<(f64, f64)> = v
            .iter()
            .map(|(r, _)| (r.measured_sustained_us, r.measured_mj))
            .collect();
        let predicted: Vec<(f64, f64)> = v
            .iter()
            .map(|(r, _)| (r.predicted_sustained_us, r.predicted_mj))
            .collect();
        for i in front_of(&measured) {
            v[i].0.measured_front = true;
        }
        for i in front_of(&predicted) {
            v[i].0.predicted_front = true;
        }
        let rows: Vec<EnergyRow> = v.into_iter().map(|(r, _)| r).collect();
        let col = |f: &dyn Fn(&EnergyRow) -> f64| rows.iter().map(f).collect::<Vec<f64>>();
        let tau = |a: Vec<f64>, b: Vec<f64>| {
            if a.len() >= 3 {
                kendall_tau_b(&a, &b)
            } else {
                None
            }
        };
        let argmin = |f: &dyn Fn(&EnergyRow) -> f64| {
            rows.iter()
                .min_by(|a, b| f(a).total_cmp(&f(b)))
                .expect("a group has a row")
        };
        let least = argmin(&|r| r.measured_mj);
        let least_t = argmin(&|r| r.measured_sustained_us);
        // the picks as `objective::rank` orders the configs: the objective's first rank
        // first (`Objective::first_rank`); a sweep that timed none of the time pick's pool
        // scores each pick by its key alone (the selection's pool always has a member)
        let any_in_guard = rows.iter().any(|r| r.predicted_in_guard);
        // and the time pick kept unless the best saves more than the margin
        // (`objective::leaves_time_pick`), where the sweep timed it
        let pick_by = |objective: Objective, key: &dyn Fn(&EnergyRow) -> f64| {
            let i = objective_pick(
                &rows,
                |r| !any_in_guard || objective.first_rank(r.predicted_in_guard, r.predicted_capped),
                key,
                |r| r.predicted_time_pick,
            )
            .expect("a group has a row");
            &rows[i]
        };
        let picked = pick_by(Objective::Energy, &|r| r.predicted_mj);
        let picked_t = pick_by(Objective::Sustained, &|r| r.predicted_sustained_us);
        shapes.push(ShapeEnergy {
            set,
            m,
            n,
            k,
            dtype,
            configs: rows.len(),
            median_ratio: median(&col(&|r| r.ratio)),
            tau_energy: tau(col(&|r| r.predicted_mj), col(&|r| r.measured_mj)),
            tau_sustained: tau(
                col(&|r| r.predicted_sustained_us),
                col(&|r| r.measured_sustained_us),
            ),
            energy_pick: least.measured_mj / picked.measured_mj,
            sustained_pick: least_t.measured_sustained_us / picked_t.measured_sustained_us,
            energy_pick_config: picked.config.clone(),
            least_energy_config: least.config.clone(),
        });
        out_rows.extend(rows);
    }
    let opt = |v: Vec<f64>, f: fn(&[f64]) -> f64| (!v.is_empty()).then(|| f(&v));
    let min = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
    EnergyCheck {
        median_ratio: opt(out_rows.iter().map(|r| r.ratio).collect(), median),
        median_abs_error: opt(
            out_rows.iter().map(|r| (r.ratio - 1.0).abs()).collect(),
            median,
        ),
        tau_energy_median: opt(shapes.iter().filter_map(|s| s.tau_energy).collect(), median),
        tau_sustained_median: opt(
            shapes.iter().filter_map(|s| s.tau_sustained).collect(),
            median,
        ),
        energy_pick_median: opt(shapes.iter().map(|s| s.energy_pick).collect(), median),
        energy_pick_min: opt(shapes.iter().map(|s| s.energy_pick).collect(), min),
        sustained_pick_median: opt(shapes.iter().map(|s| s.sustained_pick).collect(), median),
        sustained_pick_min: opt(shapes.iter().map(|s| s.sustained_pick).collect(), min),
        rows: out_rows,
        shapes,
        unpriced,
    }
}

/// The sweep's own setting, from its summary.json.
#[derive(Debug, serde::Deserialize)]
struct SweptWith {
    gpu: String,
    family: String,
    model: String,
    dtype: String,
}

/// Check a sweep folder's measured energies against the model under `plan`'s limit (the
/// objective does not matter here), with the hardware and family the sweep used.
pub fn check_folder(
    dir: &Path,
    costs_file: Option<&Path>,
    power_limit_w: Option<f64>,
) -> Result<EnergyCheck, Failure> {
    let meta_text = crate::input::read_text(&dir.join(SUMMARY_JSON))
        .map_err(|e| Failure::bad(format!("{}: {e}", dir.join(SUMMARY_JSON).display())))?;
    let v: serde_json::Value = serde_json::from_str(&meta_text)
        .map_err(|e| Failure::bad(format!("{}: {e}", dir.join(SUMMARY_JSON).display())))?;
    let meta: SweptWith = serde_json::from_value(v.get("meta").cloned().unwrap_or_default())
        .map_err(|e| {
            Failure::bad(format!(
                "{}: no sweep meta ({e}): run `origami-bench report` on a sweep folder",
                dir.join(SUMMARY_JSON).display()
            ))
        })?;
    let rows: Vec<ConfigRow> = read_csv(&dir.join(CONFIGS_CSV)).map_err(Failure::bad)?;
    if !rows.iter().any(|r| r.energy_mj.is_some()) {
        return Err(Failure::bad(format!(
            "{}: no energy measured (sweep with --energy-s)",
            dir.join(CONFIGS_CSV).display()
        )));
    }
    let dtype: crate::dtype::Dtype = meta
        .dtype
        .parse()
        .map_err(|e| Failure::bad(format!("summary.json dtype: {e}")))?;
    let preset = crate::hw::presets::preset_for_device(&meta.gpu).map(str::to_string);
    let set = crate::setup::setup(&crate::setup::SetupRequest {
        device: None,
        gpu_name: Some(preset.unwrap_or_else(|| meta.gpu.clone())),
        override_file: None,
        family: meta.family.clone(),
        model: meta.model.clone(),
        no_fitted: false,
        calibration_only: false,
    })?;
    let costs = match costs_file {
        Some(p) => {
            let doc = crate::hw::energy::EnergyCosts::load_doc(p)
                .map_err(|msg| Failure::bad(format!("--energy-costs {}: {msg}", p.display())))?;
            crate::hw::energy::EnergyCosts::from_doc(&doc, &p.display().to_string())
        }
        None => crate::hw::energy::EnergyCosts::resolve(None, &meta.gpu),
    }
    .map_err(|e| Failure::bad(e.to_string()))?;
    if let Some(w) = power_limit_w.filter(|w| !costs.limit_reachable(*w)) {
        return Err(Failure::bad(format!(
            "--power-limit: {w} W is at or below the GPU's static power ({:.0} W, {}): no clock meets it",
            costs.static_w, costs.source
        )));
    }
    let plan = EnergyPlan {
        objective: Objective::Energy,
        power_limit_w,
        costs,
    };
    let sel = set.selector(dtype)?;
    // per shape: every feasible config priced, and the time pick
    type Shape = (
        ShapeKey,
        Vec<crate::model::objective::Priced>,
        Option<Config>,
    );
    let mut cache: Vec<Shape> = Vec::new();
    Ok(compare(&rows, |r| {
        let config = parse_config(&r.config).ok()?;
        let key = r.key();
        if !cache.iter().any(|(k, _, _)| *k == key) {
            let p = Problem::new(r.m, r.n, r.k, dtype).ok()?;
            let (priced, time_pick) = match sel.select(&p, false) {
                Ok(s) => (price_all(&sel, &s, &plan), Some(s.pick.config)),
                Err(_) => (Vec::new(), None),
            };
            cache.push((key.clone(), priced, time_pick));
        }
        let (_, priced, time_pick) = cache.iter().find(|(k, _, _)| *k == key)?;
        let is_time_pick = time_pick.as_ref().is_some_and(|t| same_launch(t, &config));
        price_of(priced, &config).map(|x| (x.energy, x.in_guard, is_time_pick))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(m: u64, config: &str, mj: f64, ms: f64) -> ConfigRow {
        let mut r: ConfigRow = serde_json::from_value(serde_json::json!({
            "set": "s", "m": m, "n": 64, "k": 64, "dtype": "fp16", "config": config,
            "block_m": 64, "block_n": 64, "block_k": 64, "group_m": 8, "num_warps": 4,
            "num_stages": 3, "is_pick": 0, "model_rank": 1, "predicted_cycles": 1.0,
            "predicted_us": 1.0, "measured_ms": ms, "cov": 0.01, "samples": 10, "reps": 1,
            "screened": 0, "tflops": 1.0, "registers": 100, "local_bytes": 0, "spills": 0,
            "smem_bytes": 0, "rel_err": 0.0, "passed": 1, "note": ""
        }))
        .unwrap();
        r.energy_mj = Some(mj);
        r.energy_w = Some(mj / ms);
        r.sustained_ms = Some(ms);
        r
    }

    /// One shape, three configs measured (1 ms, 10 mJ), (2 ms, 8 mJ), (3 ms, 9 mJ).
    fn three_rows() -> Vec<ConfigRow> {
        vec![
            row(64, "a", 10.0, 1.0),
            row(64, "b", 8.0, 2.0),
            row(64, "c", 9.0, 3.0),
        ]
    }

    fn pred(mj: f64, us: f64) -> (EnergyPrediction, bool, bool) {
        (pred_only(mj, us), true, false)
    }

    fn pred_only(mj: f64, us: f64) -> EnergyPrediction {
        EnergyPrediction {
            time_us: us,
            dynamic_mj: mj / 2.0,
            full_clock_w: mj / us * 1e3,
            power_limit_w: 700.0,
            capped: false,
            sustained_us: us,
            energy_mj: mj,
            power_w: mj / us * 1e3,
            clock_fraction: 1.0,
        }
    }

    #[test]
    fn ratios_taus_picks_and_fronts() {
        // the three configs predicted 11, 9, 10 mJ (same order: tau 1) at the measured
        // times x 1000; a fourth row on another shape the model does not price
        let mut rows = three_rows();
        rows.push(row(128, "x", 5.0, 1.0));
        let c = compare(&rows, |r| match r.config.as_str() {
            "a" => Some(pred(11.0, 1000.0)),
            "b" => Some(pred(9.0, 2000.0)),
            "c" => Some(pred(10.0, 3000.0)),
            _ => None,
        });
        assert_eq!(c.unpriced, 1);
        assert_eq!(c.shapes.len(), 1);
        let s = &c.shapes[0];
        assert_eq!(s.tau_energy, Some(1.0));
        assert_eq!(s.energy_pick, 1.0);
        assert_eq!(s.energy_pick_config, "b");
        assert_eq!(s.sustained_pick, 1.0);
        // front: a (fastest) and b (least energy); c is beaten by b in both
        let on: Vec<&str> = c
            .rows
            .iter()
            .filter(|r| r.measured_front)
            .map(|r| r.config.as_str())
            .collect();
        assert_eq!(on, vec!["a", "b"]);
        assert!((c.median_ratio.unwrap() - 10.0 / 9.0).abs() < 1e-9);
    }

    #[test]
    fn a_wrong_energy_order_scores_its_pick_below_one() {
        let rows = three_rows();
        // the model rates a least: its measured 10 mJ against the least 8
        let c = compare(&rows, |r| match r.config.as_str() {
            "a" => Some(pred(5.0, 1000.0)),
            "b" => Some(pred(9.0, 2000.0)),
            _ => Some(pred(7.0, 3000.0)),
        });
        assert!((c.shapes[0].energy_pick - 0.8).abs() < 1e-12);
        assert!(c.shapes[0].tau_energy.unwrap() < 0.0);
        assert_eq!(c.energy_pick_min, Some(0.8));
    }

    #[test]
    fn the_sustained_pick_is_taken_in_the_time_picks_pool_first() {
        let rows = three_rows();
        // c is predicted fastest but lies outside the correction's guard: the sustained
        // pick is a (the fastest inside), the energy pick still the least predicted energy
        // (c runs below the power limit)
        let c = compare(&rows, |r| match r.config.as_str() {
            "a" => Some((pred_only(11.0, 1500.0), true, false)),
            "b" => Some((pred_only(9.0, 2500.0), true, false)),
            _ => Some((pred_only(7.0, 500.0), false, false)),
        });
        let s = &c.shapes[0];
        assert_eq!(s.sustained_pick, 1.0);
        assert_eq!(s.energy_pick_config, "c");
        assert!(c.rows.iter().any(|r| !r.predicted_in_guard));
    }

    #[test]
    fn the_energy_pick_passes_over_capped_configs_outside_the_pool() {
        let rows = three_rows();
        let capped = |mj, us| EnergyPrediction {
            capped: true,
            ..pred_only(mj, us)
        };
        // c: least predicted energy, but capped and outside the guard: b, the least of the
        // rest (in the pool or below the limit), is the energy pick
        let c = compare(&rows, |r| match r.config.as_str() {
            "a" => Some((capped(11.0, 1500.0), true, false)),
            "b" => Some((pred_only(9.0, 2500.0), false, false)),
            _ => Some((capped(7.0, 500.0), false, false)),
        });
        assert_eq!(c.shapes[0].energy_pick_config, "b");
        assert_eq!(c.shapes[0].energy_pick, 1.0);
        // a sweep that timed none of the pool scores the pick by its energy alone
        let c = compare(&rows, |r| match r.config.as_str() {
            "a" => Some((capped(11.0, 1500.0), false, false)),
            "b" => Some((pred_only(9.0, 2500.0), false, false)),
            _ => Some((capped(7.0, 500.0), false, false)),
        });
        assert_eq!(c.shapes[0].energy_pick_config, "c");
    }

    #[test]
    fn the_time_pick_stays_unless_the_best_saves_more_than_the_margin() {
        // three_rows measures a 10 mJ, b 8 mJ, c 9 mJ; a is the time pick
        let rows = three_rows();
        let with = |b_mj: f64| {
            compare(&rows, move |r| match r.config.as_str() {
                "a" => Some((pred_only(10.0, 1000.0), true, true)),
                "b" => Some((pred_only(b_mj, 2000.0), true, false)),
                _ => Some((pred_only(11.0, 3000.0), true, false)),
            })
        };
        // b predicted 5 % below a: within the margin, the time pick stays (8 / 10 measured)
        let c = with(9.5);
        assert_eq!(c.shapes[0].energy_pick_config, "a");
        assert!((c.shapes[0].energy_pick - 0.8).abs() < 1e-12);
        assert!(c.rows.iter().any(|r| r.predicted_time_pick));
        // b predicted 10 % below: it leaves the time pick
        let c = with(9.0);
        assert_eq!(c.shapes[0].energy_pick_config, "b");
        assert_eq!(c.shapes[0].energy_pick, 1.0);
    }
}
