//! Selection by an objective other than the time of one launch (issue 15, section 4):
//! every feasible config priced by the energy model (`energy.rs`) at its predicted time,
//! then ranked by the time under a power limit, the energy per GEMM, or their product,
//! and the time/energy Pareto front of a shape. The time a config is priced at is the
//! selector's prediction through its family's time map (`hw::time_map`: the absolute time
//! the family's measured picks gave; the identity where none is fitted), since the static
//! energy is power times an absolute time.

use crate::hw::energy::EnergyCosts;

use super::energy::{predict, EnergyPrediction};
use super::problem::Config;
use super::select::{Ranked, Scope, Selection, Selector};

/// What a pick minimizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Objective {
    /// The time of one launch at full clock (the model's own ranking), or under
    /// `--power-limit` when one is given.
    Time,
    /// The time per launch under the power limit (the GPU's own, or `--power-limit`).
    Sustained,
    /// Energy per launch under the power limit.
    Energy,
    /// Energy x sustained time.
    Edp,
}

/// The names `--objective` takes.
pub const OBJECTIVE_NAMES: [&str; 4] = ["time", "sustained", "energy", "edp"];

impl Objective {
    pub fn named(name: &str) -> Option<Objective> {
        Some(match name {
            "time" => Objective::Time,
            "sustained" => Objective::Sustained,
            "energy" => Objective::Energy,
            "edp" => Objective::Edp,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Objective::Time => "time",
            Objective::Sustained => "sustained",
            Objective::Energy => "energy",
            Objective::Edp => "edp",
        }
    }
}

/// An objective with what it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyPlan {
    pub objective: Objective,
    /// `--power-limit`: a limit for planning; `None`: the GPU's own (`costs.power_limit_w`).
    pub power_limit_w: Option<f64>,
    pub costs: EnergyCosts,
}

impl EnergyPlan {
    /// The limit the energy model applies.
    pub fn limit_w(&self) -> f64 {
        self.power_limit_w.unwrap_or(self.costs.power_limit_w)
    }

    /// Whether the pick is the model's own time pick (`time` without a limit).
    pub fn keeps_time_pick(&self) -> bool {
        self.objective == Objective::Time && self.power_limit_w.is_none()
    }

    /// The number ranked, smaller first.
    pub fn key(&self, e: &EnergyPrediction) -> f64 {
        match self.objective {
            Objective::Time if self.power_limit_w.is_none() => e.time_us,
            Objective::Time | Objective::Sustained => e.sustained_us,
            Objective::Energy => e.energy_mj,
            Objective::Edp => e.edp(),
        }
    }
}

/// One feasible config priced: the selector's ranked entry (its prediction before the
/// time map) with `energy` set, and that prediction.
#[derive(Debug, Clone)]
pub struct Priced {
    pub ranked: Ranked,
    pub energy: EnergyPrediction,
}

impl Priced {
    pub fn config(&self) -> &Config {
        &self.ranked.config
    }
}

/// Every feasible config of `sel`'s shape priced under `plan` (at the selection's
/// phase-1 GROUP_SIZE_M), in the selector's family order; empty when the selector has no
/// traffic counts (the latency model scores it).
pub fn price_all(s: &Selector<'_>, sel: &Selection, plan: &EnergyPlan) -> Vec<Priced> {
    let p = &sel.problem;
    let full;
    let scored = if sel.complete {
        sel
    } else {
        match s.select_scoped(p, Scope::All) {
            Ok(f) => {
                full = f;
                &full
            }
            Err(_) => sel,
        }
    };
    let ranked = s.ranked(scored, usize::MAX);
    let shape_min_us = ranked
        .iter()
        .map(|r| r.latency_us)
        .filter(|t| t.is_finite() && *t > 0.0)
        .fold(f64::INFINITY, f64::min);
    ranked
        .into_iter()
        .filter_map(|mut r| {
            let mut c = r.config;
            c.group_m = sel.phase1_group_m;
            let traffic = s.traffic(p, &c)?;
            let us = s.time_map.apply_within_shape(r.latency_us, shape_min_us);
            let energy = predict(&plan.costs, &traffic, us, plan.limit_w());
            r.energy = Some(energy);
            Some(Priced { ranked: r, energy })
        })
        .collect()
}

/// The configs in `plan`'s order (ties by the model's time ranking, which `priced` is in);
/// the model's own ranking, as it is, when the objective is its time.
pub fn rank(priced: &[Priced], plan: &EnergyPlan) -> Vec<Priced> {
    let mut v = priced.to_vec();
    if !plan.keeps_time_pick() {
        v.sort_by(|a, b| plan.key(&a.energy).total_cmp(&plan.key(&b.energy)));
    }
    v
}

/// The objective's pick: the first of `ranked` (the configs in [`rank`]'s order), its
/// GROUP_SIZE_M from phase 2 on its tile (the time pick's when the tile is the same);
/// `None` when nothing is priced.
pub fn pick(s: &Selector<'_>, sel: &Selection, ranked: &[Priced]) -> Option<Priced> {
    let mut best = ranked.first()?.clone();
    let c = &mut best.ranked.config;
    c.group_m = if c.same_grid(&sel.pick.config) {
        sel.pick.config.group_m
    } else {
        s.group_size(&sel.problem, c)
    };
    Some(best)
}

/// The time/energy Pareto front under the limit: the configs no other config beats in
/// both sustained time and energy, fastest first.
pub fn pareto(priced: &[Priced]) -> Vec<Priced> {
    let points: Vec<(f64, f64)> = priced
        .iter()
        .map(|x| (x.energy.sustained_us, x.energy.energy_mj))
        .collect();
    front_of(&points)
        .into_iter()
        .map(|i| priced[i].clone())
        .collect()
}

/// The indices of the Pareto front of (time, energy) points, smaller better in both:
/// the points no other point beats in both (of equal points, the first), fastest first;
/// non-finite points are never on it. The one rule for predicted and measured fronts.
pub fn front_of(points: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].0.is_finite() && points[i].1.is_finite())
        .collect();
    order.sort_by(|&a, &b| {
        let (pa, pb) = (points[a], points[b]);
        pa.0.total_cmp(&pb.0)
            .then(pa.1.total_cmp(&pb.1))
            .then(a.cmp(&b))
    });
    let mut front: Vec<usize> = Vec::new();
    for i in order {
        if front.last().map_or(true, |&f| points[i].1 < points[f].1) {
            front.push(i);
        }
    }
    front
}

/// The price of a config that is not among the priced ones (the time pick at its phase-2
/// GROUP_SIZE_M is priced as its phase-1 entry).
pub fn price_of<'p>(priced: &'p [Priced], c: &Config) -> Option<&'p Priced> {
    priced.iter().find(|x| same_launch(x.config(), c))
}

/// Whether two configs are the same launch, GROUP_SIZE_M aside (the priced configs carry
/// phase 1's group size, a pick phase 2's).
pub fn same_launch(a: &Config, b: &Config) -> bool {
    a.same_tile(b)
        && (a.num_warps, a.num_stages, a.switches, a.split_k, a.stream_k)
            == (b.num_warps, b.num_stages, b.switches, b.split_k, b.stream_k)
}
