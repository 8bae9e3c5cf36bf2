//! The sweep of the NVIDIA port report (section 7.1) for the origami family: per shape, the model's pick,
//! the brute force over every feasible config of the family, and cuBLAS; the per-config
//! rows, the per-shape metrics (A/BF, A/cuBLAS, rank of the pick, Kendall tau-b), the
//! summary over shapes, and the resume bookkeeping. Everything but [`run_shape`] is pure;
//! it runs one shape on any [`GemmBench`] (the GPU, or the mock in tests).
//!
//! Every config of the brute force runs with the GROUP_SIZE_M that the model's phase 2
//! chooses for its tile, so the pick (the best tile's preferred launch at its phase-2
//! group size) is one of the brute-force configs and A/BF ≤ 1 up to noise.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::model::{Config, Problem, Selection, Selector};
use crate::stats::{kendall_tau_b, mean, median};

use super::bench::GemmBench;
use super::kernel::tflops;
use super::measure::TimingPolicy;
use super::GemmError;

/// One config to run on a shape, with the model's prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub config: Config,
    /// 1-based position in the model's order.
    pub model_rank: usize,
    pub predicted_cycles: f64,
    pub predicted_us: f64,
    pub is_pick: bool,
}

/// Which configs of the model's order a sweep times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Every feasible config (the brute force).
    All,
    /// The first N (`--max-configs`; the pick always).
    First(usize),
    /// N spread over the whole order (`--spread`): the pick, the last, and ranks at
    /// geometric steps between ([`spread_ranks`]); configs that differ a lot, for a model
    /// scored across the space (energy) at a cost of N per shape.
    Spread(usize),
    /// The pick alone (`--only-pick`).
    Pick,
}

impl Keep {
    pub fn of(max_configs: Option<usize>, spread: Option<usize>, only_pick: bool) -> Keep {
        match (only_pick, spread, max_configs) {
            (true, _, _) => Keep::Pick,
            (_, Some(n), _) => Keep::Spread(n.max(1)),
            (_, _, Some(n)) => Keep::First(n.max(1)),
            _ => Keep::All,
        }
    }
}

/// `n` positions (from 0) spread over an order of `total`: 0, total - 1, and
/// round(total^(i / (n - 1))) - 1 between, without repeats (all of them when n >= total).
pub fn spread_ranks(total: usize, n: usize) -> Vec<usize> {
    if n >= total {
        return (0..total).collect();
    }
    if n <= 1 {
        return vec![0];
    }
    let mut v: Vec<usize> = (0..n)
        .map(|i| {
            let r = (total as f64).powf(i as f64 / (n - 1) as f64).round() as usize;
            r.clamp(1, total) - 1
        })
        .collect();
    v.dedup();
    v
}

/// The model's order over the family for one shape: every feasible config with its tile's
/// prediction and its tile's phase-2 group size; the pick first; `keep` says which of them.
pub fn plan(
    s: &Selector<'_>,
    p: &Problem,
    keep: Keep,
) -> Result<(Selection, Vec<Planned>), crate::model::NoFiniteScore> {
    let sel = s.select(p, false)?;
    let ranked = s.ranked(&sel, usize::MAX);
    let mut group_of = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(ranked.len());
    for (i, r) in ranked.iter().enumerate() {
        let grid = (
            r.config.block_m,
            r.config.block_n,
            r.config.block_k,
            r.config.switches.swap,
        );
        let g = *group_of
            .entry(grid)
            .or_insert_with(|| s.group_size(p, &r.config));
        let config = Config {
            group_m: g,
            ..r.config
        };
        out.push(Planned {
            config,
            model_rank: i + 1,
            predicted_cycles: r.latency_cycles,
            predicted_us: r.latency_us,
            is_pick: config == sel.pick.config,
        });
    }
    if !out.iter().any(|x| x.is_pick) {
        // Cannot happen with a consistent selector; keep the pick measurable regardless.
        out.insert(
            0,
            Planned {
                config: sel.pick.config,
                model_rank: 0,
                predicted_cycles: sel.pick.latency_cycles,
                predicted_us: sel.pick.latency_us,
                is_pick: true,
            },
        );
    }
    // Pick first (it is timed in full and seeds the screen).
    out.sort_by_key(|x| !x.is_pick);
    match keep {
        Keep::All => {}
        Keep::Pick => out.truncate(1),
        Keep::First(n) => out.truncate(n.max(1)),
        Keep::Spread(n) => {
            let ranks = spread_ranks(out.len(), n);
            out = ranks.into_iter().map(|i| out[i].clone()).collect();
        }
    }
    Ok((sel, out))
}

/// One row of `configs.csv`: a (shape, config) with prediction and measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigRow {
    pub set: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub dtype: String,
    pub config: String,
    pub block_m: u32,
    pub block_n: u32,
    pub block_k: u32,
    pub group_m: u32,
    pub num_warps: u32,
    pub num_stages: u32,
    pub is_pick: u8,
    pub model_rank: usize,
    pub predicted_cycles: f64,
    pub predicted_us: f64,
    pub measured_ms: Option<f64>,
    pub cov: Option<f64>,
    pub samples: usize,
    pub reps: u32,
    pub screened: u8,
    pub tflops: Option<f64>,
    pub registers: Option<i32>,
    pub local_bytes: Option<i32>,
    pub spills: Option<u8>,
    pub smem_bytes: u64,
    pub rel_err: Option<f64>,
    pub passed: u8,
    pub note: String,
    /// Energy under sustained load (`sweep --energy-s`; `energy::sustained`): millijoules
    /// per launch, average watts, milliseconds per launch meanwhile. Empty otherwise, and
    /// in folders written before the columns existed.
    #[serde(default)]
    pub energy_mj: Option<f64>,
    #[serde(default)]
    pub energy_w: Option<f64>,
    #[serde(default)]
    pub sustained_ms: Option<f64>,
    /// The launches' GPU time over the energy window (`energy::Sustained::busy`, about 1).
    #[serde(default)]
    pub energy_busy: Option<f64>,
    /// NVML's SM clock over the energy window (median of readings every 50 ms), MHz.
    #[serde(default)]
    pub energy_sm_mhz: Option<f64>,
    /// The clock-event (throttle) reasons NVML reported in the window, '|'-separated.
    #[serde(default)]
    pub energy_throttle: Option<String>,
}

impl ConfigRow {
    /// A row with the plan filled in and nothing measured.
    pub fn planned(set: &str, p: &Problem, x: &Planned) -> Self {
        let c = x.config;
        ConfigRow {
            set: set.into(),
            m: p.m,
            n: p.n,
            k: p.k,
            dtype: p.dtype.to_string(),
            config: c.to_string(),
            block_m: c.block_m,
            block_n: c.block_n,
            block_k: c.block_k,
            group_m: c.group_m,
            num_warps: c.num_warps,
            num_stages: c.num_stages,
            is_pick: u8::from(x.is_pick),
            model_rank: x.model_rank,
            predicted_cycles: x.predicted_cycles,
            predicted_us: x.predicted_us,
            measured_ms: None,
            cov: None,
            samples: 0,
            reps: 0,
            screened: 0,
            tflops: None,
            registers: None,
            local_bytes: None,
            spills: None,
            smem_bytes: super::kernel::smem_bytes(&c, p.dtype),
            rel_err: None,
            passed: 0,
            note: String::new(),
            energy_mj: None,
            energy_w: None,
            sustained_ms: None,
            energy_busy: None,
            energy_sm_mhz: None,
            energy_throttle: None,
        }
    }

    /// The launched config: the numeric columns, with the switches of the `config` text
    /// (none when the text has none or does not parse).
    pub fn launch(&self) -> Config {
        let (switches, split_k, stream_k) = crate::model::problem::parse_config(&self.config)
            .map(|c| (c.switches, c.split_k, c.stream_k))
            .unwrap_or((Default::default(), 1, false));
        Config {
            block_m: self.block_m,
            block_n: self.block_n,
            block_k: self.block_k,
            group_m: self.group_m,
            num_warps: self.num_warps,
            num_stages: self.num_stages,
            switches,
            split_k,
            stream_k,
        }
    }

    /// Verified and timed.
    pub fn timed(&self) -> Option<f64> {
        self.measured_ms.filter(|_| self.passed == 1)
    }

    /// The shape key of this row.
    pub fn key(&self) -> ShapeKey {
        (self.set.clone(), self.m, self.n, self.k, self.dtype.clone())
    }
}

/// (set, M, N, K, dtype): identifies a shape in the outputs.
pub type ShapeKey = (String, u64, u64, u64, String);

/// One row of `shapes.csv`: the per-shape comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShapeRow {
    pub set: String,
    pub label: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub dtype: String,
    pub n_configs: usize,
    pub n_timed: usize,
    pub pick: String,
    pub pick_predicted_us: f64,
    pub pick_ms: Option<f64>,
    pub pick_cov: Option<f64>,
    pub pick_tflops: Option<f64>,
    pub pick_registers: Option<i32>,
    /// The pick failed to compile or verify, or spills (local memory > 0).
    pub pick_infeasible: u8,
    pub bf_config: String,
    pub bf_ms: Option<f64>,
    pub bf_tflops: Option<f64>,
    pub cublas_ms: Option<f64>,
    pub cublas_cov: Option<f64>,
    pub cublas_tflops: Option<f64>,
    /// Brute-force best time over the pick's time (0 when the pick did not run).
    pub a_bf: Option<f64>,
    pub a_cublas: Option<f64>,
    pub bf_cublas: Option<f64>,
    /// 1-based position of the pick among the timed configs, fastest first.
    pub pick_rank: Option<usize>,
    pub kendall_tau: Option<f64>,
    pub sm_mhz: Option<u32>,
    pub seconds: f64,
    /// cuBLAS under sustained load (`sweep --energy-s`): millijoules per GEMM, average
    /// watts, milliseconds per GEMM. Empty otherwise, and in folders made before.
    #[serde(default)]
    pub cublas_energy_mj: Option<f64>,
    #[serde(default)]
    pub cublas_energy_w: Option<f64>,
    #[serde(default)]
    pub cublas_sustained_ms: Option<f64>,
}

impl ShapeRow {
    pub fn key(&self) -> ShapeKey {
        (self.set.clone(), self.m, self.n, self.k, self.dtype.clone())
    }
}

/// Per-shape metrics from the config rows and cuBLAS's time.
pub fn shape_row(
    set: &str,
    label: &str,
    p: &Problem,
    rows: &[ConfigRow],
    cublas: Option<(f64, f64)>,
) -> ShapeRow {
    let pick = rows.iter().find(|r| r.is_pick == 1);
    let timed: Vec<&ConfigRow> = rows.iter().filter(|r| r.timed().is_some()).collect();
    let bf = timed
        .iter()
        .min_by(|a, b| a.timed().unwrap().total_cmp(&b.timed().unwrap()))
        .copied();
    let pick_ms = pick.and_then(|r| r.timed());
    let pick_infeasible = match pick {
        Some(r) => r.timed().is_none() || r.spills.unwrap_or(0) == 1,
        None => true,
    };
    let bf_ms = bf.and_then(|r| r.timed());
    let a_bf = match (pick_ms, bf_ms) {
        (Some(pm), Some(bm)) => Some(bm / pm),
        (None, Some(_)) => Some(0.0),
        _ => None,
    };
    let pick_rank = pick_ms.map(|pm| 1 + timed.iter().filter(|r| r.timed().unwrap() < pm).count());
    let (xs, ys): (Vec<f64>, Vec<f64>) = timed
        .iter()
        .map(|r| (r.predicted_cycles, r.timed().unwrap()))
        .unzip();
    let kendall_tau = kendall_tau_b(&xs, &ys);
    let tf = |ms: Option<f64>| ms.map(|v| tflops(p, v));
    ShapeRow {
        set: set.into(),
        label: label.into(),
        m: p.m,
        n: p.n,
        k: p.k,
        dtype: p.dtype.to_string(),
        n_configs: rows.len(),
        n_timed: timed.len(),
        pick: pick.map(|r| r.config.clone()).unwrap_or_default(),
        pick_predicted_us: pick.map(|r| r.predicted_us).unwrap_or(f64::NAN),
        pick_ms,
        pick_cov: pick.and_then(|r| r.cov),
        pick_tflops: tf(pick_ms),
        pick_registers: pick.and_then(|r| r.registers),
        pick_infeasible: u8::from(pick_infeasible),
        bf_config: bf.map(|r| r.config.clone()).unwrap_or_default(),
        bf_ms,
        bf_tflops: tf(bf_ms),
        cublas_ms: cublas.map(|c| c.0),
        cublas_cov: cublas.map(|c| c.1),
        cublas_tflops: tf(cublas.map(|c| c.0)),
        a_bf,
        a_cublas: match (pick_ms, cublas) {
            (Some(pm), Some((cm, _))) => Some(cm / pm),
            _ => None,
        },
        bf_cublas: match (bf_ms, cublas) {
            (Some(bm), Some((cm, _))) => Some(cm / bm),
            _ => None,
        },
        pick_rank,
        kendall_tau,
        sm_mhz: None,
        seconds: 0.0,
        cublas_energy_mj: None,
        cublas_energy_w: None,
        cublas_sustained_ms: None,
    }
}

/// Summary statistics over shapes (the keys of `summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetSummary {
    pub n_shapes: usize,
    pub abf_median: Option<f64>,
    pub abf_min: Option<f64>,
    pub abf_mean: Option<f64>,
    pub kendall_tau_mean: Option<f64>,
    pub infeasible_picks: usize,
    pub a_cublas_median: Option<f64>,
    pub bf_cublas_median: Option<f64>,
    /// Shapes where the pick was the measured best.
    pub picks_at_rank_1: usize,
    /// Share of shapes with A/BF ≥ 0.95.
    pub abf_at_least_95_share: Option<f64>,
}

fn opt(v: &[f64], f: impl Fn(&[f64]) -> f64) -> Option<f64> {
    (!v.is_empty()).then(|| f(v))
}

/// Summarize shape rows.
pub fn summarize(rows: &[&ShapeRow]) -> SetSummary {
    let abf: Vec<f64> = rows.iter().filter_map(|r| r.a_bf).collect();
    let tau: Vec<f64> = rows.iter().filter_map(|r| r.kendall_tau).collect();
    let acb: Vec<f64> = rows.iter().filter_map(|r| r.a_cublas).collect();
    let bfcb: Vec<f64> = rows.iter().filter_map(|r| r.bf_cublas).collect();
    SetSummary {
        n_shapes: rows.len(),
        abf_median: opt(&abf, median),
        abf_min: opt(&abf, |v| v.iter().cloned().fold(f64::INFINITY, f64::min)),
        abf_mean: opt(&abf, mean),
        kendall_tau_mean: opt(&tau, mean),
        infeasible_picks: rows.iter().filter(|r| r.pick_infeasible == 1).count(),
        a_cublas_median: opt(&acb, median),
        bf_cublas_median: opt(&bfcb, median),
        picks_at_rank_1: rows.iter().filter(|r| r.pick_rank == Some(1)).count(),
        abf_at_least_95_share: opt(&abf, |v| {
            v.iter().filter(|x| **x >= 0.95).count() as f64 / v.len() as f64
        }),
    }
}

/// The config rows of each shape row, in order: `configs.csv` holds every shape's rows
/// (`n_configs` of them) before its `shapes.csv` row is written, so it is the shapes' rows
/// one after the other, then perhaps the rows of a shape cut off mid-way. Returns the
/// groups and how many rows trail them; an error when the two files disagree.
pub fn rows_by_shape(
    configs: Vec<ConfigRow>,
    shapes: &[ShapeRow],
) -> Result<(Vec<Vec<ConfigRow>>, usize), String> {
    let mut rest = configs.into_iter();
    let mut groups = Vec::with_capacity(shapes.len());
    for (i, s) in shapes.iter().enumerate() {
        let group: Vec<ConfigRow> = rest.by_ref().take(s.n_configs).collect();
        if group.len() != s.n_configs || group.iter().any(|r| r.key() != s.key()) {
            return Err(format!(
                "configs.csv does not match shapes.csv at shape {} ({} {}x{}x{}: {} config rows expected)",
                i + 1,
                s.set,
                s.m,
                s.n,
                s.k,
                s.n_configs
            ));
        }
        groups.push(group);
    }
    Ok((groups, rest.count()))
}

/// Shapes already complete in an earlier run's `shapes.csv`, counted (a shape that
/// stands twice in a list is done once per row): a resumed sweep skips as many
/// occurrences of a shape as there are rows, so what is left is the rest of the list in
/// order.
#[derive(Debug, Clone, Default)]
pub struct DoneShapes {
    counts: HashMap<ShapeKey, usize>,
}

impl DoneShapes {
    pub fn of(rows: &[ShapeRow]) -> DoneShapes {
        let mut counts = HashMap::new();
        for r in rows {
            *counts.entry(r.key()).or_insert(0) += 1;
        }
        DoneShapes { counts }
    }

    /// Shape rows counted.
    pub fn len(&self) -> usize {
        self.counts.values().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Whether this occurrence of a shape is done (and count it off if so).
    pub fn take(&mut self, key: &ShapeKey) -> bool {
        match self.counts.get_mut(key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }
}

/// Sweep options.
#[derive(Debug, Clone, Copy)]
pub struct SweepOptions {
    pub policy: TimingPolicy,
    /// Energy under sustained load for every fully timed config, this window in seconds.
    pub energy_s: Option<f64>,
}

/// What `run_shape` measured of cuBLAS: (median ms, CoV), and its energy under sustained
/// load with `--energy-s`.
pub type CublasMeasured = ((f64, f64), Option<super::energy::Sustained>);

/// Run one shape on a bench: inputs, cuBLAS, then every planned config (verify, time).
/// Returns the config rows and cuBLAS's (median ms, CoV) with its energy when asked. A
/// config that fails to compile or verify gets a row with a note; a driver error aborts
/// (the context is likely lost).
pub fn run_shape<B: GemmBench>(
    bench: &mut B,
    set: &str,
    p: &Problem,
    planned: &[Planned],
    opts: &SweepOptions,
    seed: u64,
    progress: &dyn Fn(),
) -> Result<(Vec<ConfigRow>, CublasMeasured), GemmError> {
    let mut data = bench.prepare(p, seed)?;
    let cb = bench.time_cublas(&data, &opts.policy)?;
    let cb_sum = cb
        .summary()
        .ok_or_else(|| GemmError::Runtime("cuBLAS produced no finite timing sample".into()))?;
    let cb_energy = match opts.energy_s {
        Some(w) => bench.sustained(&data, None, cb_sum.median, w)?,
        None => None,
    };
    let mut rows = Vec::with_capacity(planned.len());
    let mut best: Option<f64> = None;
    for x in planned {
        let mut row = ConfigRow::planned(set, p, x);
        match bench.instance(&x.config) {
            Err(e) => {
                row.note = format!("not compiled: {e}");
                rows.push(row);
                progress();
                continue;
            }
            Ok(inst) => {
                row.registers = Some(inst.registers);
                row.local_bytes = Some(inst.local_bytes);
                row.spills = Some(u8::from(inst.local_bytes > 0));
            }
        }
        if let Some(why) = bench.launch_violation(&x.config, p) {
            row.note = format!("not run: {why}");
            rows.push(row);
            progress();
            continue;
        }
        let (v, first_ms) = bench.verify(&mut data, &x.config)?;
        row.rel_err = Some(v.rel_err);
        row.passed = u8::from(v.passed);
        if !v.passed {
            row.note = format!(
                "verification failed: rel_err {:.3e} (bound {:.0e}), {} non-finite",
                v.rel_err, v.bound, v.unwritten
            );
            rows.push(row);
            progress();
            continue;
        }
        let t = bench.time_config(
            &data,
            &x.config,
            &opts.policy,
            best,
            x.is_pick,
            Some(first_ms),
        )?;
        if let Some(s) = t.summary() {
            row.measured_ms = Some(s.median);
            row.cov = Some(s.cov);
            row.samples = s.n;
            row.tflops = Some(tflops(p, s.median));
            best = Some(best.map_or(s.median, |b: f64| b.min(s.median)));
        }
        row.reps = t.reps;
        row.screened = u8::from(t.screened_out);
        if let (Some(w), Some(ms), false) = (opts.energy_s, row.measured_ms, t.screened_out) {
            if let Some(s) = bench.sustained(&data, Some(&x.config), ms, w)? {
                row.energy_mj = Some(s.mj_per_launch);
                row.energy_w = Some(s.avg_w);
                row.sustained_ms = Some(s.ms_per_launch);
                row.energy_busy = Some(s.busy);
                row.energy_sm_mhz = s.sm_mhz;
                row.energy_throttle = Some(s.throttle.join("|"));
            }
        }
        rows.push(row);
        progress();
    }
    Ok((rows, ((cb_sum.median, cb_sum.cov), cb_energy)))
}

/// A passed, measured row of `config` (tests of the folder and report code).
#[cfg(test)]
pub(crate) fn measured_row(set: &str, p: &Problem, config: &str, pick: bool, ms: f64) -> ConfigRow {
    let mut r = ConfigRow::planned(
        set,
        p,
        &Planned {
            config: crate::model::problem::parse_config(config).unwrap(),
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::hw::presets::preset;
    use crate::model::{family, ModelConstants, Variant};

    fn row(cfg: &str, pick: bool, pred: f64, ms: Option<f64>) -> ConfigRow {
        let c = crate::model::problem::parse_config(cfg).unwrap();
        let p = Problem::new(1024, 1024, 1024, Dtype::Fp16).unwrap();
        let mut r = ConfigRow::planned(
            "t",
            &p,
            &Planned {
                config: c,
                model_rank: 1,
                predicted_cycles: pred,
                predicted_us: pred / 1980.0,
                is_pick: pick,
            },
        );
        r.measured_ms = ms;
        r.passed = u8::from(ms.is_some());
        r.spills = Some(0);
        r
    }

    #[test]
    fn metrics_of_a_shape() {
        let p = Problem::new(1024, 1024, 1024, Dtype::Fp16).unwrap();
        let rows = vec![
            row("128x128x32,g8,w8,s3", true, 100.0, Some(0.020)),
            row("64x64x32,g8,w4,s3", false, 200.0, Some(0.016)),
            row("32x32x32,g8,w4,s3", false, 300.0, Some(0.040)),
            row("32x64x32,g8,w4,s3", false, 400.0, None),
        ];
        let s = shape_row("t", "", &p, &rows, Some((0.010, 0.01)));
        assert_eq!(s.n_timed, 3);
        assert_eq!(s.bf_config, "64x64x32,g8,w4,s3");
        assert!((s.a_bf.unwrap() - 0.8).abs() < 1e-12);
        assert!((s.a_cublas.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(s.pick_rank, Some(2));
        // predicted order 1,2,3 vs measured 2,1,3: one discordant pair of three
        assert!((s.kendall_tau.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.pick_infeasible, 0);
        let sum = summarize(&[&s]);
        assert_eq!(sum.abf_median, Some(s.a_bf.unwrap()));
        assert_eq!(sum.infeasible_picks, 0);
        assert_eq!(sum.picks_at_rank_1, 0);
    }

    #[test]
    fn a_failed_pick_is_infeasible_and_scores_zero() {
        let p = Problem::new(1024, 1024, 1024, Dtype::Fp16).unwrap();
        let rows = vec![
            row("128x128x32,g8,w8,s3", true, 100.0, None),
            row("64x64x32,g8,w4,s3", false, 200.0, Some(0.016)),
        ];
        let s = shape_row("t", "", &p, &rows, None);
        assert_eq!(s.pick_infeasible, 1);
        assert_eq!(s.a_bf, Some(0.0));
        assert_eq!(s.pick_rank, None);
        let mut spilling = rows.clone();
        spilling[0].measured_ms = Some(0.1);
        spilling[0].passed = 1;
        spilling[0].spills = Some(1);
        assert_eq!(shape_row("t", "", &p, &spilling, None).pick_infeasible, 1);
    }

    #[test]
    fn rows_split_by_shape_and_resume_counts_repeats() {
        let p = Problem::new(1024, 1024, 1024, Dtype::Fp16).unwrap();
        let a = row("128x128x32,g8,w8,s3", true, 100.0, Some(0.02));
        let b = row("64x64x32,g8,w4,s3", false, 200.0, Some(0.03));
        let s = shape_row("t", "", &p, &[a.clone(), b.clone()], None);
        // The same shape twice, then a third time cut off after one row.
        let configs = vec![a.clone(), b.clone(), a.clone(), b.clone(), a.clone()];
        let shapes = vec![s.clone(), s.clone()];
        let (groups, trailing) = rows_by_shape(configs.clone(), &shapes).unwrap();
        assert_eq!(groups, vec![vec![a.clone(), b.clone()]; 2]);
        assert_eq!(trailing, 1);
        let mut other = s.clone();
        other.m = 2048;
        assert!(rows_by_shape(configs, &[other]).is_err());
        let mut done = DoneShapes::of(&shapes);
        assert_eq!(done.len(), 2);
        assert!(done.take(&s.key()) && done.take(&s.key()));
        assert!(!done.take(&s.key()), "a third occurrence is still to run");
    }

    #[test]
    fn plan_puts_the_pick_first_and_gives_every_tile_its_group() {
        let r = preset("h100-sxm").unwrap();
        let fam = family("origami").unwrap();
        let s = Selector::new(
            fam,
            &r.gpu,
            &r.params,
            &ModelConstants::default(),
            Variant::Origami,
            Dtype::Fp16,
        )
        .unwrap();
        let p = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        let (sel, v) = plan(&s, &p, Keep::All).unwrap();
        assert_eq!(v.len(), 306);
        assert!(v[0].is_pick);
        assert_eq!(v[0].config, sel.pick.config);
        assert_eq!(v.iter().filter(|x| x.is_pick).count(), 1);
        let (_, one) = plan(&s, &p, Keep::Pick).unwrap();
        assert_eq!(one.len(), 1);
        let (_, five) = plan(&s, &p, Keep::First(5)).unwrap();
        assert_eq!(five.len(), 5);
        assert!(five[0].is_pick);
        let (_, spread) = plan(&s, &p, Keep::Spread(6)).unwrap();
        assert_eq!(spread[0].config, v[0].config);
        assert_eq!(spread[5].config, v[305].config);
        assert_eq!(
            spread.iter().map(|x| x.model_rank).collect::<Vec<_>>(),
            spread_ranks(306, 6)
                .iter()
                .map(|&i| v[i].model_rank)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn spread_ranks_step_geometrically_from_the_pick_to_the_last() {
        assert_eq!(spread_ranks(1196, 8), vec![0, 2, 7, 20, 56, 157, 434, 1195]);
        assert_eq!(spread_ranks(5, 8), vec![0, 1, 2, 3, 4]);
        assert_eq!(spread_ranks(100, 1), vec![0]);
        // few configs, many asked: no repeats
        let v = spread_ranks(20, 12);
        assert!(v.windows(2).all(|w| w[0] < w[1]), "{v:?}");
        assert_eq!((v[0], *v.last().unwrap()), (0, 19));
    }
}
