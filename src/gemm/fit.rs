//! Refit of the model's empirical constants and parameters to a measured sweep (CPU only,
//! no device time): coordinate descent over a fixed list of knobs (the latency model's, or
//! the throughput model's `tp_*` when the starting file turns that model on), each tried at
//! a ladder of multiples of its current value; the objective is the mean A/BF of the picks
//! on the fitting shapes plus a weight (default a quarter) times their mean Kendall tau-b,
//! both read off the committed `configs.csv` (every config's measured time is there, so
//! any pick can be scored without running it). The throughput model's absolute scale is
//! then set to the median measured/predicted ratio. The fitted values are written as a
//! flat hardware override (`TRITONBLAS_HW_PARAMS`), never into code.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::constants::{refit_knobs, ConstantError, CONSTANT_NAMES};
use crate::dtype::Dtype;
use crate::hw::{GpuDesc, ModelParams};
use crate::model::{
    Config, KernelFamily, ModelConstants, NoFiniteScore, Problem, Scoring, Selection, Selector,
    Switches, Variant,
};
use crate::stats::{kendall_tau_b, mean};

use super::sweep::ConfigRow;

/// Parameters the fit moves (with the latency model only, before its constants). The
/// constants it moves, and their order, are the table's (`constants::refit_knobs`):
/// with the latency model the pipeline and launch knobs are among them (0 / 1 = off: start
/// the fit from a file that sets them to move them); with the throughput model
/// (`throughput_model` = 1 in the starting constants) the `tp_*` knobs and `wgmma_speedup`.
pub const FIT_PARAMS: [&str; 5] = [
    "mma_latency",
    "l2_perf_ratio",
    "dram_perf_ratio",
    "dram_bw_coeff",
    "hbm_latency_penalty",
];
/// Multiples tried per knob and round.
pub const LADDER: [f64; 12] = [
    0.0, 0.1, 0.25, 0.5, 0.8, 0.9, 1.1, 1.25, 2.0, 4.0, 10.0, 30.0,
];

/// Measured times of one shape: launch (the config at GROUP_SIZE_M 1, see [`launch_key`])
/// -> ms.
#[derive(Debug, Clone)]
pub struct MeasuredShape {
    pub problem: Problem,
    pub times: HashMap<Config, f64>,
    /// Every launch the sweep listed for the shape, timed or not (its rows, a failure's
    /// included); empty: no list (every launch of the space counts).
    pub listed: HashSet<Config>,
}

/// The key of a measured launch: the config with GROUP_SIZE_M 1 (a sweep's rows of one
/// launch at several group sizes share it; the last row read wins).
pub fn launch_key(c: &Config) -> Config {
    Config { group_m: 1, ..*c }
}

impl MeasuredShape {
    fn best(&self) -> Option<f64> {
        self.times.values().cloned().reduce(f64::min)
    }

    /// The decompositions (split-K runs, Stream-K) the sweep timed: a space grown after
    /// the sweep (split-K added to a family) is scored within what the sweep covered.
    fn decompositions(&self) -> HashSet<(u32, bool)> {
        self.times.keys().map(|k| (k.split_k, k.stream_k)).collect()
    }

    /// Whether the sweep's space held this launch: a launch the space gained after the
    /// sweep (an instance a later compiled table allows) is not scored as a failure.
    fn was_listed(&self, c: &Config) -> bool {
        self.listed.is_empty() || self.listed.contains(&launch_key(c))
    }
}

/// The model's selection for a measured shape within the decompositions its sweep timed.
fn measured_selection(s: &Selector<'_>, sh: &MeasuredShape) -> Result<Selection, NoFiniteScore> {
    let timed = sh.decompositions();
    s.select_where(&sh.problem, &|c: &Config| {
        timed.contains(&(c.split_k, c.stream_k)) && sh.was_listed(c)
    })
}

/// Group config rows by shape (only verified, timed rows of `sets`; all sets when empty).
pub fn measured_shapes(rows: &[ConfigRow], sets: &[String]) -> Vec<MeasuredShape> {
    let mut order: Vec<(u64, u64, u64, String)> = Vec::new();
    let mut map: HashMap<(u64, u64, u64, String), MeasuredShape> = HashMap::new();
    for r in rows {
        if !sets.is_empty() && !sets.contains(&r.set) {
            continue;
        }
        let Ok(dtype) = r.dtype.parse::<Dtype>() else {
            continue;
        };
        let key = (r.m, r.n, r.k, r.dtype.clone());
        let e = map.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            MeasuredShape {
                problem: Problem {
                    m: r.m,
                    n: r.n,
                    k: r.k,
                    dtype,
                },
                times: HashMap::new(),
                listed: HashSet::new(),
            }
        });
        e.listed.insert(launch_key(&r.launch()));
        if let Some(ms) = r.timed() {
            e.times.insert(launch_key(&r.launch()), ms);
        }
    }
    // a shape with no timed launch is not a measured shape
    order
        .into_iter()
        .filter_map(|k| map.remove(&k))
        .filter(|sh| !sh.times.is_empty())
        .collect()
}

/// The score of a model on measured shapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    pub abf_mean: f64,
    pub abf_median: f64,
    pub abf_min: f64,
    pub tau_mean: f64,
    pub shapes: usize,
    /// A/BF mean if the picked tile ran with its best measured launch (warps, stages):
    /// what a perfect launch choice would add to the tile choice.
    pub abf_tile_oracle_mean: f64,
    /// Median of the same.
    pub abf_tile_oracle_median: f64,
}

/// (BLOCK_M, BLOCK_N, BLOCK_K).
type Tile = (u32, u32, u32);
/// (num_warps, num_stages, switches, split-K, Stream-K).
type Launch = (u32, u32, Switches, u32, bool);

/// The launch key of `launch` on `tile`.
fn tile_launch(tile: Tile, (w, s, sw, split_k, stream_k): Launch) -> Config {
    Config {
        block_m: tile.0,
        block_n: tile.1,
        block_k: tile.2,
        group_m: 1,
        num_warps: w,
        num_stages: s,
        switches: sw,
        split_k,
        stream_k,
    }
}

/// A launch preference learned from measurements: per tile area (BLOCK_M x BLOCK_N), the
/// (num_warps, num_stages) launches ordered by how often each was the fastest launch of a
/// tile of that area on the fitting shapes (ties: the model's order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchTable {
    pub by_area: BTreeMap<u32, Vec<Launch>>,
}

impl LaunchTable {
    /// Count, over every (shape, tile) of the fitting shapes, which launch was fastest.
    pub fn fit(shapes: &[MeasuredShape]) -> Self {
        let mut wins: BTreeMap<u32, BTreeMap<Launch, usize>> = BTreeMap::new();
        for sh in shapes {
            let mut best: HashMap<Tile, (Launch, f64)> = HashMap::new();
            for (c, &t) in &sh.times {
                let launch = (c.num_warps, c.num_stages, c.switches, c.split_k, c.stream_k);
                let e = best
                    .entry((c.block_m, c.block_n, c.block_k))
                    .or_insert((launch, t));
                if t < e.1 || (t == e.1 && launch < e.0) {
                    *e = (launch, t);
                }
            }
            for ((bm, bn, _), (launch, _)) in best {
                *wins.entry(bm * bn).or_default().entry(launch).or_default() += 1;
            }
        }
        let by_area = wins
            .into_iter()
            .map(|(area, m)| {
                let mut v: Vec<(Launch, usize)> = m.into_iter().collect();
                v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                (area, v.into_iter().map(|x| x.0).collect())
            })
            .collect();
        LaunchTable { by_area }
    }

    /// The preferred measured launch of a tile on a shape, if the table knows its area.
    fn launch_for(&self, sh: &MeasuredShape, tile: (u32, u32, u32)) -> Option<Launch> {
        self.by_area.get(&(tile.0 * tile.1)).and_then(|order| {
            order
                .iter()
                .find(|l| sh.times.contains_key(&tile_launch(tile, **l)))
                .copied()
        })
    }

    /// One line per area: "64x128-class (8192): w8 s4, w4 s4, ...".
    pub fn text(&self) -> String {
        let mut t = String::new();
        for (area, v) in &self.by_area {
            let l: Vec<String> = v
                .iter()
                .map(|&(w, s, sw, k, sk)| {
                    let mut t = format!("w{w}s{s}{sw}");
                    if k > 1 {
                        t.push_str(&format!(",k{k}"));
                    }
                    if sk {
                        t.push_str(",sk");
                    }
                    t
                })
                .collect();
            t.push_str(&format!("  BM*BN = {area:>6}: {}\n", l.join(" > ")));
        }
        t
    }
}

impl Score {
    /// The objective the fit maximizes at the default tau weight.
    pub fn objective(&self) -> f64 {
        self.objective_with(DEFAULT_TAU_WEIGHT)
    }
    /// Mean A/BF plus `tau_weight` x mean Kendall tau-b.
    pub fn objective_with(&self, tau_weight: f64) -> f64 {
        self.abf_mean + tau_weight * self.tau_mean
    }

    /// The aggregate of shapes' scores: A/BF mean, median and minimum, tau mean over the
    /// shapes where it is defined, the tile oracle's mean and median.
    pub fn of_shapes(per_shape: &[ShapeScore]) -> Score {
        let abf: Vec<f64> = per_shape.iter().map(|s| s.abf).collect();
        let oracle: Vec<f64> = per_shape.iter().map(|s| s.abf_tile_oracle).collect();
        let tau: Vec<f64> = per_shape.iter().filter_map(|s| s.tau).collect();
        let mean_or_0 = |v: &[f64]| if v.is_empty() { 0.0 } else { mean(v) };
        let median_or_0 = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                crate::stats::median(v)
            }
        };
        Score {
            abf_mean: mean_or_0(&abf),
            abf_median: median_or_0(&abf),
            abf_min: abf.iter().cloned().fold(f64::INFINITY, f64::min),
            tau_mean: mean_or_0(&tau),
            shapes: abf.len(),
            abf_tile_oracle_mean: mean_or_0(&oracle),
            abf_tile_oracle_median: median_or_0(&oracle),
        }
    }
}

/// Weight of the mean Kendall tau-b in the fit's objective unless told otherwise.
pub const DEFAULT_TAU_WEIGHT: f64 = 0.25;

/// Median over every timed config of the fitting shapes of measured / predicted time (the
/// prediction converted at the description's SM clock); `None` without timed configs.
pub fn median_time_ratio(s: &Selector<'_>, shapes: &[MeasuredShape]) -> Option<f64> {
    let mut ratios = Vec::new();
    for sh in shapes {
        for (launch, &ms) in &sh.times {
            let c = Config {
                group_m: crate::model::latency::default_group_m(s.gpu.sm_count),
                ..*launch
            };
            if let Some(cycles) = s.predict_config(&sh.problem, &c) {
                let us = s.cycles_to_us(cycles);
                if us > 0.0 {
                    ratios.push(ms * 1e3 / us);
                }
            }
        }
    }
    (!ratios.is_empty()).then(|| crate::stats::median(&ratios))
}

/// A selector's pick for a measured shape (within the decompositions its sweep timed) and
/// its A/BF by lookup (0 when the pick was not timed).
pub fn pick_abf(s: &Selector<'_>, sh: &MeasuredShape) -> Result<(Config, f64), NoFiniteScore> {
    let sel = measured_selection(s, sh)?;
    let c = sel.pick.config;
    let abf = match (sh.best(), sh.times.get(&launch_key(&c))) {
        (Some(best), Some(t)) => best / t,
        _ => 0.0,
    };
    Ok((c, abf))
}

/// Score a selector's picks and rankings on measured shapes (a pick that was not timed
/// scores A/BF 0; the selection is made within the decompositions the sweep timed,
/// [`measured_selection`]); a shape on which no prediction is finite is an error.
pub fn score(s: &Selector<'_>, shapes: &[MeasuredShape]) -> Result<Score, NoFiniteScore> {
    score_with(s, shapes, None)
}

/// [`score`], with the picked tile's launch taken from `launches` when given.
pub fn score_with(
    s: &Selector<'_>,
    shapes: &[MeasuredShape],
    launches: Option<&LaunchTable>,
) -> Result<Score, NoFiniteScore> {
    score_by(s, shapes, launches, measured_selection)
}

/// One measured shape's score: its pick's time over the fastest launch (A/BF, 0 when the
/// pick was not timed or failed), the picked tile at its best timed launch over the fastest,
/// and the Kendall tau-b of the model's ranking against the times over the launches both
/// hold (`None` when it is undefined).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapeScore {
    pub problem: Problem,
    pub abf: f64,
    pub abf_tile_oracle: f64,
    pub tau: Option<f64>,
    /// Launches the tau ranks.
    pub launches: usize,
}

/// [`ShapeScore`] of one shape under the selection `select` makes (`None`: no launch timed).
fn shape_score(
    s: &Selector<'_>,
    sh: &MeasuredShape,
    launches: Option<&LaunchTable>,
    select: &impl Fn(&Selector<'_>, &MeasuredShape) -> Result<Selection, NoFiniteScore>,
) -> Result<Option<ShapeScore>, NoFiniteScore> {
    let Some(best) = sh.best() else {
        return Ok(None);
    };
    let sel = select(s, sh)?;
    let c = sel.pick.config;
    let tile = (c.block_m, c.block_n, c.block_k);
    let launch = launches.and_then(|t| t.launch_for(sh, tile)).unwrap_or((
        c.num_warps,
        c.num_stages,
        c.switches,
        c.split_k,
        c.stream_k,
    ));
    let key = tile_launch(tile, launch);
    let tile_best = sh
        .times
        .iter()
        .filter(|(k, _)| (k.block_m, k.block_n, k.block_k) == tile)
        .map(|(_, t)| *t)
        .reduce(f64::min);
    let ranked = s.ranked(&sel, usize::MAX);
    let (xs, ys): (Vec<f64>, Vec<f64>) = ranked
        .iter()
        .filter_map(|r| {
            sh.times
                .get(&launch_key(&r.config))
                .map(|t| (r.latency_cycles, *t))
        })
        .unzip();
    Ok(Some(ShapeScore {
        problem: sh.problem,
        abf: sh.times.get(&key).map_or(0.0, |t| best / t),
        abf_tile_oracle: tile_best.map_or(0.0, |t| best / t),
        tau: kendall_tau_b(&xs, &ys),
        launches: xs.len(),
    }))
}

/// Every shape's [`ShapeScore`], each selection kept to the launches its sweep timed
/// (another GPU's sweep, an older space's: every pick can be looked up; [`Score::of_shapes`]
/// aggregates them).
pub fn shape_scores_timed(
    s: &Selector<'_>,
    shapes: &[MeasuredShape],
) -> Result<Vec<ShapeScore>, NoFiniteScore> {
    shape_scores_by(s, shapes, None, timed_selection)
}

/// The [`ShapeScore`] of every shape with a timed launch, under the selections `select`
/// makes.
fn shape_scores_by(
    s: &Selector<'_>,
    shapes: &[MeasuredShape],
    launches: Option<&LaunchTable>,
    select: impl Fn(&Selector<'_>, &MeasuredShape) -> Result<Selection, NoFiniteScore>,
) -> Result<Vec<ShapeScore>, NoFiniteScore> {
    let mut out = Vec::new();
    for sh in shapes {
        if let Some(sc) = shape_score(s, sh, launches, &select)? {
            out.push(sc);
        }
    }
    Ok(out)
}

/// A selection kept to the launches the shape's sweep timed.
fn timed_selection(s: &Selector<'_>, sh: &MeasuredShape) -> Result<Selection, NoFiniteScore> {
    s.select_where(&sh.problem, &|c| sh.times.contains_key(&launch_key(c)))
}

/// The scores of the selections `select` makes.
fn score_by(
    s: &Selector<'_>,
    shapes: &[MeasuredShape],
    launches: Option<&LaunchTable>,
    select: impl Fn(&Selector<'_>, &MeasuredShape) -> Result<Selection, NoFiniteScore>,
) -> Result<Score, NoFiniteScore> {
    Ok(Score::of_shapes(&shape_scores_by(
        s, shapes, launches, select,
    )?))
}

/// One timed launch of a measured shape beside the model's prediction for it (what
/// `refit --predictions` writes): the prediction is the one the Kendall tau of [`score`]
/// ranks, in microseconds at the description's SM clock.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionRow {
    pub problem: Problem,
    pub config: Config,
    pub predicted_us: f64,
    pub measured_us: f64,
    /// Whether this launch is the model's pick for the shape.
    pub picked: bool,
}

/// Every timed launch of `shapes` that the model ranks, with its prediction (shapes in
/// order, launches by predicted time); a shape on which no prediction is finite is an
/// error, as in [`score`].
pub fn prediction_rows(
    s: &Selector<'_>,
    shapes: &[MeasuredShape],
) -> Result<Vec<PredictionRow>, NoFiniteScore> {
    let mut out = Vec::new();
    for sh in shapes {
        let sel = measured_selection(s, sh)?;
        let pick = launch_key(&sel.pick.config);
        for r in s.ranked(&sel, usize::MAX) {
            let key = launch_key(&r.config);
            if let Some(ms) = sh.times.get(&key) {
                out.push(PredictionRow {
                    problem: sh.problem,
                    config: r.config,
                    predicted_us: s.cycles_to_us(r.latency_cycles),
                    measured_us: ms * 1e3,
                    picked: key == pick,
                });
            }
        }
    }
    Ok(out)
}

/// The model being fitted.
#[derive(Debug, Clone)]
pub struct FitState {
    pub params: ModelParams,
    /// Constant overrides by name (only those moved or given).
    pub constants: BTreeMap<String, f64>,
}

impl FitState {
    /// The model constants of this state (its overrides over the defaults).
    pub fn model_constants(&self) -> Result<ModelConstants, ConstantError> {
        ModelConstants::with_overrides(self.constants.iter().map(|(k, v)| (k.as_str(), *v)))
    }

    fn get(&self, knob: &str) -> f64 {
        if let Some(v) = self.params.get(knob) {
            return v;
        }
        self.constants.get(knob).cloned().unwrap_or_else(|| {
            ModelConstants::default()
                .get(knob)
                .expect("fit knobs are known constants")
        })
    }

    fn set(&mut self, knob: &str, v: f64) {
        if !self.params.set(knob, v) {
            self.constants.insert(knob.to_string(), v);
        }
    }

    /// The flat override JSON (`TRITONBLAS_HW_PARAMS`): the parameters that moved from
    /// `base`, and every model constant at this state's value, defaults included. The
    /// selection applies a family's embedded fitted constants beneath this file, so a
    /// constant left out would take the embedded file's value there (today's or a later
    /// one's), not the value the fit scored: a file that names them all reproduces its
    /// model whatever is embedded.
    pub fn override_json(&self, base: &FitState) -> serde_json::Value {
        let mut o = serde_json::Map::new();
        for p in FIT_PARAMS {
            let v = self.get(p);
            if (v - base.get(p)).abs() > 1e-12 * v.abs().max(1.0) {
                o.insert(p.to_string(), serde_json::json!(v));
            }
        }
        // every name the state holds is one of these (`model_constants` validates them)
        let c: serde_json::Map<String, serde_json::Value> = CONSTANT_NAMES
            .iter()
            .map(|k| (k.to_string(), serde_json::json!(self.get(k))))
            .collect();
        o.insert("constants".into(), serde_json::Value::Object(c));
        serde_json::Value::Object(o)
    }
}

/// One accepted move of the fit.
#[derive(Debug, Clone)]
pub struct FitStep {
    pub knob: String,
    pub from: f64,
    pub to: f64,
    pub score: Score,
}

/// Coordinate descent: `rounds` passes over the knobs (less those in `held`, which keep
/// their starting value: a measured constant), each knob tried at every ladder multiple of
/// its current value (0 only for constants that may vanish); a move is kept when it raises
/// the objective (`Score::objective_with(tau_weight)`) by more than 1e-4. Returns the state
/// and its steps.
#[allow(clippy::too_many_arguments)]
pub fn fit(
    family: &dyn KernelFamily,
    gpu: &GpuDesc,
    variant: Variant,
    dtype: Dtype,
    start: FitState,
    shapes: &[MeasuredShape],
    rounds: usize,
    tau_weight: f64,
    held: &[String],
) -> (FitState, Score, Vec<FitStep>) {
    let eval = |st: &FitState| -> Option<Score> {
        let mc = st.model_constants().ok()?;
        let s = Selector::new(family, gpu, &st.params, &mc, variant, dtype).ok()?;
        score(&s, shapes).ok()
    };
    let mut state = start;
    let mut best = eval(&state).expect("the starting model is valid");
    let mut steps = Vec::new();
    let scoring = state
        .model_constants()
        .expect("the starting model is valid")
        .scoring();
    let knobs: Vec<&str> = match scoring {
        Scoring::Throughput => refit_knobs(scoring),
        Scoring::Latency => FIT_PARAMS
            .iter()
            .copied()
            .chain(refit_knobs(scoring))
            .collect(),
    };
    let knobs: Vec<&str> = knobs
        .into_iter()
        .filter(|k| !held.iter().any(|h| h == k))
        .collect();
    for _ in 0..rounds {
        let mut moved = false;
        for knob in &knobs {
            let cur = state.get(knob);
            let base = if cur == 0.0 { 1.0 } else { cur };
            let mut local_best: Option<(f64, Score)> = None;
            for mult in LADDER {
                let v = base * mult;
                if v == cur || (mult == 0.0 && FIT_PARAMS.contains(knob)) {
                    continue;
                }
                // Values the constants reject (ModelConstants::with_overrides: shares and
                // scales of 0, hit rates above 1, speedups below 1) fail `eval` and are
                // skipped.
                let mut trial = state.clone();
                trial.set(knob, v);
                if let Some(sc) = eval(&trial) {
                    let bar = local_best.map_or(best.objective_with(tau_weight), |(_, s)| {
                        s.objective_with(tau_weight)
                    });
                    if sc.objective_with(tau_weight) > bar + 1e-4 {
                        local_best = Some((v, sc));
                    }
                }
            }
            if let Some((v, sc)) = local_best {
                steps.push(FitStep {
                    knob: knob.to_string(),
                    from: cur,
                    to: v,
                    score: sc,
                });
                state.set(knob, v);
                best = sc;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    (state, best, steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;
    use crate::model::family;

    #[test]
    fn shape_scores_aggregate_as_the_score_reports_them() {
        let p = Problem::new(64, 64, 64, Dtype::Fp16).unwrap();
        let sc = |abf: f64, oracle: f64, tau: Option<f64>| ShapeScore {
            problem: p,
            abf,
            abf_tile_oracle: oracle,
            tau,
            launches: 3,
        };
        let s = Score::of_shapes(&[
            sc(1.0, 1.0, Some(0.9)),
            sc(0.8, 0.9, None),
            sc(0.6, 1.0, Some(0.5)),
        ]);
        assert_eq!(s.shapes, 3);
        assert!((s.abf_mean - 0.8).abs() < 1e-12);
        assert_eq!(s.abf_median, 0.8);
        assert_eq!(s.abf_min, 0.6);
        // tau over the shapes where it is defined
        assert!((s.tau_mean - 0.7).abs() < 1e-12);
        assert_eq!(s.abf_tile_oracle_median, 1.0);
        let none = Score::of_shapes(&[]);
        assert_eq!((none.shapes, none.abf_mean, none.tau_mean), (0, 0.0, 0.0));
    }

    /// Synthetic "measurements" made by the model itself with a different mma_latency:
    /// the fit must recover a model whose picks score A/BF 1 on them.
    #[test]
    fn a_sweep_without_split_k_scores_the_pick_within_what_it_timed() {
        // the H200's fitted hopper model picks 3 split-K runs for 1x6144x4096; a sweep made
        // before split-K entered the space timed only unsplit launches
        let set =
            crate::setup::setup(&crate::setup::SetupRequest::on_preset("h200", "hopper")).unwrap();
        let s = set.selector(Dtype::Fp16).unwrap();
        let p = Problem::new(1, 6144, 4096, Dtype::Fp16).unwrap();
        let sel = s.select(&p, false).unwrap();
        assert!(sel.pick.config.split_k > 1, "{}", sel.pick.config);
        let mut times = HashMap::new();
        for (i, r) in s.ranked(&sel, usize::MAX).iter().enumerate() {
            if r.config.split_k == 1 {
                times.insert(launch_key(&r.config), 1.0 + i as f64);
            }
        }
        let sh = MeasuredShape {
            problem: p,
            times,
            listed: HashSet::new(),
        };
        let within = measured_selection(&s, &sh).unwrap();
        assert_eq!(within.pick.config.split_k, 1);
        assert!(within.scores.len() * 4 == sel.scores.len());
        assert!(score(&s, std::slice::from_ref(&sh)).unwrap().abf_median > 0.0);
    }

    #[test]
    fn a_launch_the_space_gained_after_the_sweep_is_not_picked_as_a_failure() {
        // a sweep that listed every launch but the model's pick (the space gained it
        // later, as a compiled table that stops spilling does): the pick is made among the
        // listed launches and scores by lookup; a listed launch that failed stays a
        // failure (A/BF 0)
        let set =
            crate::setup::setup(&crate::setup::SetupRequest::on_preset("h200", "hopper")).unwrap();
        let s = set.selector(Dtype::Fp16).unwrap();
        let p = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        let sel = s.select(&p, false).unwrap();
        let first = launch_key(&sel.pick.config);
        let mut sh = MeasuredShape {
            problem: p,
            times: HashMap::new(),
            listed: HashSet::new(),
        };
        for (i, r) in s.ranked(&sel, usize::MAX).iter().enumerate() {
            let k = launch_key(&r.config);
            if k != first {
                sh.times.insert(k, 1.0 + i as f64);
                sh.listed.insert(k);
            }
        }
        let (pick, abf) = pick_abf(&s, &sh).unwrap();
        assert_ne!(launch_key(&pick), first);
        assert!(abf > 0.0);
        // the same pick listed but not timed (it failed on the device): A/BF 0
        sh.listed.insert(first);
        let (pick, abf) = pick_abf(&s, &sh).unwrap();
        assert_eq!(launch_key(&pick), first);
        assert_eq!(abf, 0.0);
    }

    #[test]
    fn fit_recovers_a_model_that_made_the_data() {
        let doc = preset("h100-sxm").unwrap();
        let fam = family("origami").unwrap();
        let mut truth = doc.params;
        truth.mma_latency *= 4.0;
        let mc = ModelConstants::default();
        let s_true =
            Selector::new(fam, &doc.gpu, &truth, &mc, Variant::Origami, Dtype::Fp16).unwrap();
        let mut shapes = Vec::new();
        for (m, n, k) in [(4096, 4096, 4096), (128, 8192, 4096)] {
            let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
            let sel = s_true.select(&p, false).unwrap();
            let mut times = HashMap::new();
            for r in s_true.ranked(&sel, usize::MAX) {
                let c = r.config;
                // one time per config: the tile's prediction, launches of a tile tied
                times.entry(launch_key(&c)).or_insert(r.latency_cycles);
            }
            shapes.push(MeasuredShape {
                problem: p,
                times,
                listed: HashSet::new(),
            });
        }
        let start = FitState {
            params: doc.params,
            constants: BTreeMap::new(),
        };
        let s0 = Selector::new(
            fam,
            &doc.gpu,
            &doc.params,
            &mc,
            Variant::Origami,
            Dtype::Fp16,
        )
        .unwrap();
        let before = score(&s0, &shapes).unwrap();
        let (state, after, _) = fit(
            fam,
            &doc.gpu,
            Variant::Origami,
            Dtype::Fp16,
            start.clone(),
            &shapes,
            1,
            DEFAULT_TAU_WEIGHT,
            &[],
        );
        assert!(after.objective() >= before.objective());
        // every knob held: nothing moves
        let all: Vec<String> = FIT_PARAMS
            .iter()
            .chain(refit_knobs(Scoring::Latency).iter())
            .chain(refit_knobs(Scoring::Throughput).iter())
            .map(|k| k.to_string())
            .collect();
        let (_, same, steps) = fit(
            fam,
            &doc.gpu,
            Variant::Origami,
            Dtype::Fp16,
            start.clone(),
            &shapes,
            1,
            DEFAULT_TAU_WEIGHT,
            &all,
        );
        assert!(steps.is_empty(), "{steps:?}");
        assert_eq!(same.objective(), before.objective());
        // launches of a tile tie in the data, so the pick's launch may miss by a little
        assert!(after.abf_mean > 0.99, "{after:?}");
        let j = state.override_json(&start);
        assert!(j.is_object());
    }

    #[test]
    fn the_override_writes_knobs_fitted_to_their_default() {
        // A throughput-model fit that moved tp_wgmma_min_n to 0 (its default): the file
        // must still say 0, or the selection's embedded fitted value would fill it in.
        let mut state = FitState {
            params: preset("h100-sxm").unwrap().params,
            constants: BTreeMap::from([
                ("throughput_model".to_string(), 1.0),
                ("tp_wgmma_min_n".to_string(), 154.88),
            ]),
        };
        let start = FitState {
            params: state.params,
            constants: BTreeMap::new(),
        };
        state.set("tp_wgmma_min_n", 0.0);
        let j = state.override_json(&start);
        let c = &j["constants"];
        assert_eq!(c["tp_wgmma_min_n"], serde_json::json!(0.0));
        assert_eq!(c["throughput_model"], serde_json::json!(1.0));
        // every constant, moved, given or at its default
        for name in CONSTANT_NAMES {
            assert!(c.get(name).is_some(), "{name} missing from {c}");
        }
        assert_eq!(c["tp_l2_neighbour_share_a"], serde_json::json!(0.0));
        // parameters only where they moved
        assert!(j.get("l2_perf_ratio").is_none());
    }

    #[test]
    fn knob_order_is_pinned() {
        // The coordinate descent's output depends on this order (the refit golden cases).
        assert_eq!(
            refit_knobs(Scoring::Latency),
            [
                "loop_overhead_cycles",
                "prologue_factor",
                "epilogue_count",
                "occupancy_decay",
                "l2_hit_floor",
                "setup_cycles",
                "stage_latency_cycles",
                "wgmma_speedup",
                "launch_wide_tile_area",
                "stage_rank_2",
                "stage_rank_3",
                "stage_rank_4",
            ]
        );
        assert_eq!(
            refit_knobs(Scoring::Throughput),
            [
                "tp_mma_cycles",
                "tp_warp_mma_cycles",
                "tp_load_latency_cycles",
                "tp_iter_cycles",
                "tp_warp_iter_cycles",
                "tp_iter_latency_cycles",
                "tp_epilogue_cycles",
                "tp_block_setup_cycles",
                "tp_fragment_read_weight",
                "tp_l2_sm_share",
                "tp_stage_exponent",
                "tp_prologue_loads",
                "tp_prologue_transfer",
                "tp_dram_scale",
                "tp_smooth_exponent",
                "tp_wgmma_min_n",
                "wgmma_speedup",
                "tp_l2_active_exponent",
            ]
        );
    }

    #[test]
    fn launch_table_orders_by_wins() {
        let p = Problem::new(64, 64, 64, Dtype::Fp16).unwrap();
        let mut times = HashMap::new();
        let key = |t: &str| launch_key(&crate::model::problem::parse_config(t).unwrap());
        times.insert(key("64x128x32,w4,s3"), 2.0);
        times.insert(key("64x128x32,w8,s4"), 1.0);
        times.insert(key("128x64x64,w8,s4"), 1.5);
        times.insert(key("128x64x64,w4,s3"), 1.6);
        let sh = MeasuredShape {
            problem: p,
            times,
            listed: HashSet::new(),
        };
        let t = LaunchTable::fit(std::slice::from_ref(&sh));
        assert_eq!(t.by_area[&8192], vec![(8, 4, Switches::NONE, 1, false)]);
        assert_eq!(
            t.launch_for(&sh, (64, 128, 32)),
            Some((8, 4, Switches::NONE, 1, false))
        );
        assert_eq!(t.launch_for(&sh, (32, 32, 32)), None);
        assert!(t.text().contains("w8s4"));
    }

    #[test]
    fn rows_group_into_shapes() {
        let p = Problem::new(64, 64, 64, Dtype::Fp16).unwrap();
        let c = crate::model::problem::parse_config("64x64x32,g1,w4,s3").unwrap();
        let mut r = ConfigRow::planned(
            "seed",
            &p,
            &super::super::sweep::Planned {
                config: c,
                model_rank: 1,
                predicted_cycles: 1.0,
                predicted_us: 1.0,
                is_pick: true,
            },
        );
        r.measured_ms = Some(0.01);
        r.passed = 1;
        let v = measured_shapes(&[r.clone()], &[]);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].times.len(), 1);
        assert!(measured_shapes(&[r], &["llm".to_string()]).is_empty());
    }
}
