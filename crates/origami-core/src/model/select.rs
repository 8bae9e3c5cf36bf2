//! Two-phase selection (the NVIDIA port report, section 2.2): phase 1 scores every tile of
//! a kernel family with the latency model at the default GROUP_SIZE_M and ranks them;
//! phase 2 picks GROUP_SIZE_M for the winner. Ranking per variant:
//! - `seed` (the NVIDIA port report's model as published): lowest latency; exact ties go to
//!   the higher tile arithmetic intensity.
//! - `origami`: stable sort by latency; every tile within the tie band (1 %) of the best
//!   is re-ranked by tile arithmetic intensity (descending), then M > N prefers larger
//!   BLOCK_M and N > M larger BLOCK_N, then larger BM, BN, BK.
//!
//! With `throughput_model` = 1 phase 1 scores every launch with the SM-throughput model
//! (`throughput.rs`) instead, and the same ranking rules apply to those scores. The
//! selector picks its scoring rule (`ScoreRule`) and ranking rule (`RankRule`) once.
//!
//! A pick alone (`Scope::Pick`, what the library's `Engine` asks) scores the tiles in the
//! order of a lower bound on their time (`throughput::lower_bound`) and stops once a bound
//! lies above the tie band of the best config scored so far: the same pick, fewer configs.
//!
//! A `Selector` holds the family's feasible configs for one GPU and dtype, so that a
//! selection costs only the model arithmetic (microseconds), never a compile or a launch.
//! A problem that the family's compiler turns into another kernel
//! (`KernelFamily::problem_variant`: Triton with N or K not a multiple of 16) is scored
//! with that variant's configs, held by a selector built on first use.

use std::cmp::Ordering;
use std::sync::OnceLock;

use crate::dtype::Dtype;
use crate::hw::{GpuDesc, ModelParams};

use super::correction::Correction;
use super::family::{Candidate, KernelFamily, MmaAtom, MAX_VARIANTS};
use super::group::{choose_group, GroupCost};
use super::inputs::{ModelInputs, Variant};
use super::latency::{default_group_m, launch_total, predict_with, Breakdown, TileStatic};
use super::occupancy::{blocks_per_sm, sm_limits};
use super::problem::{kernel_problem, Config, Problem, Switches};
use super::throughput::{self, bound_holds, BlockCosts, LaunchStatic, ThroughputBreakdown};
use crate::constants::modes::Scoring;
use crate::constants::ModelConstants;

/// One tile of the family with its configs.
#[derive(Debug, Clone)]
struct TileEntry {
    tile: (u32, u32, u32),
    /// Feasible configs of this tile, most preferred launch first.
    feasible: Vec<Candidate>,
    /// Rejected configs of this tile.
    rejected: Vec<Candidate>,
    /// Tile arithmetic intensity (ranking key).
    intensity: f64,
    /// Problem-independent model numbers of the tile.
    stat: TileStatic,
    /// Tensor-core speed of each feasible config (`KernelFamily::compute_scale`).
    scales: Vec<f64>,
    /// Throughput-model numbers of each feasible config (empty unless that model scores).
    launches: Vec<LaunchStatic>,
    /// Their block costs (same order).
    costs: Vec<BlockCosts>,
    /// The least, over the launches, of the larger of a block's tensor and shared-memory
    /// time per iteration, and of its L2 time (`Selector::tile_floor`'s inputs).
    floor_core: f64,
    floor_l2: f64,
    /// The least, over the launches, of the fill and setup a launch pays at least once.
    floor_fixed: f64,
    /// The split-K factors above 1 among the launches (each runs on a grid of its own).
    splits: Vec<u64>,
    /// Whether a launch is Stream-K (a grid of its own too).
    stream: bool,
    /// Whether a launch runs in clusters (`TileGrid::cluster`: a grid of its own too).
    cluster: bool,
    /// Whether a launch swaps the operands (the transposed problem's grid).
    swap: bool,
}

/// The prediction of one feasible config: indices into the selector's tiles and that
/// tile's feasible configs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    pub tile: usize,
    pub cfg: usize,
    /// The selector's prediction: the model's, times the learned correction's factor when
    /// the selector has one (`Selector::with_correction`).
    pub cycles: f64,
    /// The model's own prediction (equal to `cycles` without a correction).
    pub model_cycles: f64,
}

/// How phase 1 scores the feasible configs (from the constants, chosen once per selector).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScoreRule {
    /// The latency model, once per tile: every launch of a tile has the tile's prediction
    /// (pipeline model off, every config on the family's base tensor-core path), so the
    /// tile is scored as its preferred launch and `ranked` expands the others.
    TileLatency,
    /// The latency model per launch (`launch_total`: pipeline depth, tensor-core path).
    LaunchLatency,
    /// The SM-throughput model per launch.
    Throughput,
}

impl ScoreRule {
    /// Whether every launch of a tile gets its own score.
    fn per_launch(self) -> bool {
        self != ScoreRule::TileLatency
    }
}

/// How scores are ordered (from the model variant, chosen once per selector).
#[derive(Debug, Clone, Copy, PartialEq)]
enum RankRule {
    /// `seed`: lowest latency; exact ties to the higher intensity, then the smaller tile,
    /// then the preferred launch.
    Lowest,
    /// `origami`: lowest latency; every config within `band` (a fraction) of the best is
    /// re-ranked by the tie-band keys (`Selector::band_order`).
    TieBand { band: f64 },
}

impl RankRule {
    fn new(variant: Variant, constants: &ModelConstants) -> RankRule {
        match variant {
            Variant::Seed => RankRule::Lowest,
            Variant::Origami => RankRule::TieBand {
                band: constants.tie_band,
            },
        }
    }

    /// The highest time that can still win or enter the tie band when `best` is the
    /// lowest scored so far (with a margin for the rounding of a lower bound).
    fn reach(self, best: f64) -> f64 {
        let limit = match self {
            RankRule::Lowest => best,
            RankRule::TieBand { band } => (best * (1.0 + band)).max(best),
        };
        limit * (1.0 + 1e-9)
    }
}

/// Precomputed feasibility of a family on one GPU for one dtype.
pub struct Selector<'a> {
    pub family: &'a dyn KernelFamily,
    pub gpu: GpuDesc,
    pub params: ModelParams,
    pub constants: ModelConstants,
    pub variant: Variant,
    pub dtype: Dtype,
    /// How a family set compares this selector's pick time with other families'
    /// (`hw::time_map`; the identity unless set up with fitted constants it was measured on).
    pub time_map: crate::hw::time_map::TimeMap,
    atom: MmaAtom,
    tiles: Vec<TileEntry>,
    score_rule: ScoreRule,
    rank_rule: RankRule,
    /// Whether a pick may skip tiles by their lower bound (`Scope::Pick`): the throughput
    /// model with costs and constants under which the bound holds (`bound_holds`).
    prunable: bool,
    /// Selectors of the family's compiled variants (`KernelFamily::problem_variant`),
    /// built when a problem first needs one; `None`: the variant has no feasible config.
    variants: [OnceLock<Option<Box<Selector<'static>>>>; MAX_VARIANTS],
    /// The learned correction of the model's times (`model::correction`), when set up with
    /// the fitted constants it was fitted on; a family's compiled variants have none.
    correction: Option<std::sync::Arc<Correction>>,
}

/// A ranked config with its prediction.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub config: Config,
    /// The selector's prediction (the model's, corrected where a learned correction applies).
    pub latency_cycles: f64,
    pub latency_us: f64,
    /// The model's own prediction, without the learned correction (`model::correction`).
    pub model_us: f64,
    pub smem_bytes: u64,
    pub registers: Option<u32>,
    /// Rejection reason (only in `all`).
    pub rejected: Option<String>,
    /// The energy model's prediction, when an objective other than time asked for it
    /// (`objective.rs`).
    pub energy: Option<super::energy::EnergyPrediction>,
}

/// What a selection scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// What the pick needs: under the throughput model a tile whose lower bound
    /// (`throughput::lower_bound`) lies above the tie band of the best config scored so far
    /// is skipped, tiles taken in the order of their bounds. The pick is the one `All`
    /// makes; `Selection::scores` holds the configs scored.
    Pick,
    /// Every feasible config.
    All,
    /// Every feasible config, and the rejected configs predicted (`--all`).
    WithRejected,
}

/// The result of one selection.
#[derive(Debug, Clone)]
pub struct Selection {
    pub problem: Problem,
    pub phase1_group_m: u32,
    /// The pick: the best tile's preferred launch, GROUP_SIZE_M from phase 2.
    pub pick: Ranked,
    /// The prediction of every feasible config, in family order; `Selector::ranked`
    /// orders them. Under `Scope::Pick`, those scored (`complete` false when some were
    /// skipped).
    pub scores: Vec<Score>,
    /// Whether `scores` holds every feasible config.
    pub complete: bool,
    /// Rejected configs with their predicted latency and reason (filled when asked).
    pub rejected: Vec<Ranked>,
    /// Phase-2 table for the picked tile.
    pub phase2: Vec<GroupCost>,
    /// Breakdown of the pick at the phase-1 group size.
    pub pick_breakdown: Breakdown,
}

/// Every feasible config's prediction for a shape came out NaN or infinite (constants or
/// hardware numbers at extremes the model cannot use): nothing can be ranked.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "no config of family '{family}' has a finite positive predicted latency for {shape} on \
     {gpu} ({count} predictions NaN, infinite or not positive): check the constants and \
     hardware numbers"
)]
pub struct NoFiniteScore {
    pub family: String,
    pub shape: String,
    pub gpu: String,
    pub count: usize,
}

impl crate::exit::ToExit for NoFiniteScore {
    /// The constants or hardware numbers given make the model meaningless: bad input.
    fn exit_code(&self) -> crate::exit::Exit {
        crate::exit::Exit::BadInput
    }
}

/// Why a config whose prediction is no usable time is never ranked.
pub const BAD_PREDICTION_REASON: &str =
    "predicted latency is not a finite positive number (NaN, infinite, zero or negative)";

/// A prediction that can be ranked: a finite time above zero.
fn usable(cycles: f64) -> bool {
    cycles.is_finite() && cycles > 0.0
}

/// Nothing in the family fits this GPU.
#[derive(Debug, Clone, thiserror::Error)]
#[error("no feasible config of family '{family}' for {dtype} on {gpu}")]
pub struct NoFeasibleConfig {
    pub family: String,
    pub dtype: String,
    pub gpu: String,
}

impl<'a> Selector<'a> {
    /// Enumerate and classify the family's configs once.
    pub fn new(
        family: &'a dyn KernelFamily,
        gpu: &GpuDesc,
        params: &ModelParams,
        constants: &ModelConstants,
        variant: Variant,
        dtype: Dtype,
    ) -> Result<Selector<'a>, NoFeasibleConfig> {
        Self::over(
            family.candidates(dtype, gpu),
            family,
            gpu,
            params,
            constants,
            variant,
            dtype,
        )
    }

    /// A selector over these candidates of the family in place of its space (the learned
    /// correction's fit over a wider space, `KernelFamily::compiled_configs`).
    pub fn over(
        candidates: Vec<Candidate>,
        family: &'a dyn KernelFamily,
        gpu: &GpuDesc,
        params: &ModelParams,
        constants: &ModelConstants,
        variant: Variant,
        dtype: Dtype,
    ) -> Result<Selector<'a>, NoFeasibleConfig> {
        let mut tiles: Vec<TileEntry> = Vec::new();
        for c in candidates {
            let t = (c.config.block_m, c.config.block_n, c.config.block_k);
            let idx = match tiles.iter().position(|e| e.tile == t) {
                Some(i) => i,
                None => {
                    tiles.push(TileEntry {
                        tile: t,
                        feasible: Vec::new(),
                        rejected: Vec::new(),
                        intensity: c.config.tile_intensity(),
                        stat: TileStatic::new(
                            t,
                            dtype,
                            family.mma_atom(dtype),
                            &ModelInputs {
                                gpu,
                                params,
                                constants,
                                variant,
                            },
                        ),
                        scales: Vec::new(),
                        launches: Vec::new(),
                        costs: Vec::new(),
                        floor_core: 0.0,
                        floor_l2: 0.0,
                        floor_fixed: 0.0,
                        splits: Vec::new(),
                        stream: false,
                        cluster: false,
                        swap: false,
                    });
                    tiles.len() - 1
                }
            };
            if c.feasible() {
                tiles[idx].feasible.push(c);
            } else {
                tiles[idx].rejected.push(c);
            }
        }
        for e in &mut tiles {
            e.feasible.sort_by(|a, b| {
                family
                    .launch_preference(&a.config, constants)
                    .total_cmp(&family.launch_preference(&b.config, constants))
                    .then(a.config.cmp(&b.config))
            });
            e.scales = e
                .feasible
                .iter()
                .map(|c| family.compute_scale(&c.config, dtype, gpu, constants))
                .collect();
        }
        if tiles.iter().all(|e| e.feasible.is_empty()) {
            return Err(NoFeasibleConfig {
                family: family.name().into(),
                dtype: dtype.name().into(),
                gpu: gpu.name.clone(),
            });
        }
        let throughput_on = constants.scoring() == Scoring::Throughput;
        if throughput_on {
            let lim = sm_limits(gpu);
            let atom = family.mma_atom(dtype);
            let tin = ModelInputs {
                gpu,
                params,
                constants,
                variant,
            };
            for e in &mut tiles {
                (e.launches, e.costs) = e
                    .feasible
                    .iter()
                    .zip(&e.scales)
                    .map(|(c, &scale)| {
                        let o = blocks_per_sm(&lim, c.smem_bytes, c.registers, c.config.num_warps);
                        let issue = family.issue_costs(&c.config, dtype, gpu);
                        // the pipeline depth the compiled kernel keeps
                        let config = match issue {
                            Some(ic) => Config {
                                num_stages: ic.stages,
                                ..c.config
                            },
                            None => c.config,
                        };
                        let warp_grid = family.warp_grid(&c.config, dtype, gpu);
                        let wgmma = family.uses_wgmma(&c.config, dtype, gpu);
                        let mut launch = LaunchStatic::new(
                            &config,
                            warp_grid,
                            o,
                            dtype,
                            atom,
                            scale,
                            if wgmma { constants.tp_wgmma_min_n } else { 0.0 },
                        )
                        .with_persistent(family.persistent_loop(&c.config))
                        .with_whole_boxes(family.loads_whole_boxes());
                        if wgmma && constants.tp_wgmma_operand_reads == 1.0 {
                            launch = launch.with_wgmma_operand_reads(warp_grid.1, dtype);
                        }
                        let mut costs = BlockCosts::new(&launch, &tin);
                        // memory instructions beyond the vectorised copies: the load/store
                        // pipe the shared-memory term prices, and the epilogue
                        if let Some(ic) = issue {
                            costs.smem += ic.lsu_cycles_per_iter;
                            costs.per_block += ic.lsu_cycles_per_block;
                        }
                        (launch, costs)
                    })
                    .unzip();
            }
        }
        for e in &mut tiles {
            e.floor_core = e
                .costs
                .iter()
                .map(|c| c.tensor.max(c.smem))
                .fold(f64::INFINITY, f64::min);
            e.floor_l2 = e.costs.iter().map(|c| c.l2).fold(f64::INFINITY, f64::min);
            e.floor_fixed = e
                .costs
                .iter()
                .map(|c| c.fixed)
                .fold(f64::INFINITY, f64::min);
            e.splits = e
                .launches
                .iter()
                .map(|l| l.split_k)
                .filter(|&k| k > 1)
                .collect();
            e.splits.sort_unstable();
            e.splits.dedup();
            e.stream = e.launches.iter().any(|l| l.stream_k);
            e.cluster = e.launches.iter().any(|l| l.cluster);
            e.swap = e.launches.iter().any(|l| l.swap);
        }
        let prunable = throughput_on
            && bound_holds(constants)
            && tiles
                .iter()
                .flat_map(|e| &e.costs)
                .all(BlockCosts::bounded_below);
        let score_rule = if throughput_on {
            ScoreRule::Throughput
        } else if constants.stage_latency_cycles > 0.0
            || tiles.iter().any(|e| e.scales.iter().any(|x| *x != 1.0))
        {
            ScoreRule::LaunchLatency
        } else {
            ScoreRule::TileLatency
        };
        Ok(Selector {
            score_rule,
            prunable,
            rank_rule: RankRule::new(variant, constants),
            family,
            gpu: gpu.clone(),
            params: *params,
            constants: *constants,
            variant,
            dtype,
            time_map: crate::hw::time_map::TimeMap::IDENTITY,
            atom: family.mma_atom(dtype),
            tiles,
            variants: Default::default(),
            correction: None,
        })
    }

    /// This selector with a learned correction of the model's times (`model::correction`):
    /// every prediction is the model's times the correction's factor, and a pick is made
    /// among the launches the model predicts within the correction's guard of its best.
    /// Only for the throughput model (the residual was learnt on it): otherwise unchanged.
    pub fn with_correction(mut self, correction: Option<std::sync::Arc<Correction>>) -> Self {
        if self.score_rule == ScoreRule::Throughput {
            self.correction = correction;
        }
        self
    }

    /// The correction applied, if any.
    pub fn correction(&self) -> Option<&Correction> {
        self.correction.as_deref()
    }

    /// This selector with the time map a family set compares its picks through.
    pub fn with_time_map(mut self, time_map: crate::hw::time_map::TimeMap) -> Self {
        self.time_map = time_map;
        self
    }

    /// The selector of the compiled variant that runs this problem
    /// (`KernelFamily::problem_variant`), or this one.
    fn for_problem(&self, p: &Problem) -> Option<&Selector<'a>> {
        let v = self.family.problem_variant(p, &self.gpu)?;
        let slot = self.variants.get(v.index)?;
        slot.get_or_init(|| {
            Selector::new(
                v.family,
                &self.gpu,
                &self.params,
                &self.constants,
                self.variant,
                self.dtype,
            )
            .ok()
            .map(Box::new)
        })
        .as_deref()
    }

    /// Whether launches are scored with the SM-throughput model.
    pub fn throughput_model(&self) -> bool {
        self.score_rule == ScoreRule::Throughput
    }

    /// The throughput model's breakdown of one feasible config at `config.group_m`;
    /// `None` when that model is off or the config is not a feasible one.
    pub fn throughput_breakdown(
        &self,
        p: &Problem,
        config: &Config,
    ) -> Option<ThroughputBreakdown> {
        if let Some(s) = self.for_problem(p) {
            return s.throughput_breakdown(p, config);
        }
        if !self.throughput_model() {
            return None;
        }
        let (e, j) = self.find(config)?;
        Some(throughput::predict_with(
            p,
            &e.launches[j],
            &e.costs[j],
            config.group_m,
            &self.inputs(),
        ))
    }

    /// What one feasible config's launch does (`energy::Traffic`) at `config.group_m`;
    /// `None` when the throughput model is off or the config is not a feasible one.
    pub fn traffic(&self, p: &Problem, config: &Config) -> Option<super::energy::Traffic> {
        if let Some(s) = self.for_problem(p) {
            return s.traffic(p, config);
        }
        if !self.throughput_model() {
            return None;
        }
        let (e, j, launch) = self.launch_of(config)?;
        let b = throughput::predict_with(p, &launch, &e.costs[j], config.group_m, &self.inputs());
        let tma = self.family.loads_whole_boxes();
        let wgmma = self.family.uses_wgmma(config, self.dtype, &self.gpu);
        Some(super::energy::Traffic::of_launch(
            p,
            &launch,
            &b,
            wgmma,
            tma,
            self.gpu.sm_count,
        ))
    }

    /// A config's launch: a feasible config's own, or for a `cluster` or Stream-K config
    /// outside the space the same launch without the switch with it set (priced on its
    /// grid: `throughput::TileGrid::cluster`, `TileGrid::stream`).
    /// `None` as well when the throughput model is off (no launches were made).
    fn launch_of(&self, config: &Config) -> Option<(&TileEntry, usize, LaunchStatic)> {
        if let Some((e, j)) = self.find(config) {
            return Some((e, j, *e.launches.get(j)?));
        }
        if !(config.switches.cluster || config.stream_k) {
            return None;
        }
        let (e, j) = self.find(&plain_launch(config))?;
        let launch = LaunchStatic {
            cluster: config.switches.cluster,
            stream_k: config.stream_k,
            ..*e.launches.get(j)?
        };
        Some((e, j, launch))
    }

    fn find(&self, config: &Config) -> Option<(&TileEntry, usize)> {
        let e = self
            .tiles
            .iter()
            .find(|e| e.tile == (config.block_m, config.block_n, config.block_k))?;
        let key = |c: &Config| (c.num_warps, c.num_stages, c.switches, c.split_k, c.stream_k);
        let j = e
            .feasible
            .iter()
            .position(|c| key(&c.config) == key(config))?;
        Some((e, j))
    }

    fn inputs(&self) -> ModelInputs<'_> {
        ModelInputs {
            gpu: &self.gpu,
            params: &self.params,
            constants: &self.constants,
            variant: self.variant,
        }
    }

    /// Number of feasible configs.
    pub fn feasible_count(&self) -> usize {
        self.tiles.iter().map(|e| e.feasible.len()).sum()
    }

    /// What compiled variant of the family runs this problem, if not the family's own.
    pub fn variant_note(&self, p: &Problem) -> Option<&'static str> {
        self.family.problem_variant(p, &self.gpu).map(|v| v.note)
    }

    /// Number of feasible configs for a problem (those of the compiled variant that runs it).
    pub fn feasible_count_for(&self, p: &Problem) -> usize {
        self.for_problem(p)
            .map_or_else(|| self.feasible_count(), |s| s.feasible_count())
    }

    /// Phase 2 for a tile from its breakdown: (GROUP_SIZE_M, the table).
    pub fn phase2(&self, b: &Breakdown, tile: (u32, u32, u32)) -> (u32, Vec<GroupCost>) {
        let one_wave = b.grid_m * b.grid_n <= u64::from(self.gpu.sm_count);
        let prefer_larger = if one_wave && self.family.one_wave_groups_by_operand() {
            // consecutive CTAs share the larger operand's tile: B's (down a column, the
            // largest group) unless the launch's rows outnumber its columns
            b.grid_m * u64::from(tile.0) <= b.grid_n * u64::from(tile.1)
        } else {
            self.constants.phase2_tie().prefers_larger()
        };
        choose_group(
            self.family.group_sizes(),
            b.grid_m,
            b.grid_n,
            b.active_sms,
            tile.0,
            tile.1,
            prefer_larger,
        )
    }

    /// Phase 2's GROUP_SIZE_M for a config's tile on a problem (on the problem its kernel
    /// computes: the transpose with `swap`), from the tile's prediction at phase 1's group.
    pub fn group_size(&self, p: &Problem, c: &Config) -> u32 {
        let tile = (c.block_m, c.block_n, c.block_k);
        let g1 = default_group_m(self.gpu.sm_count);
        self.phase2(&self.predict_tile(&kernel_problem(p, c), tile, g1), tile)
            .0
    }

    /// Predicted latency of a tile at a group size (cycles), with its breakdown.
    pub fn predict_tile(&self, p: &Problem, tile: (u32, u32, u32), group_m: u32) -> Breakdown {
        super::latency::predict(p, tile, group_m, self.atom, &self.inputs())
    }

    /// Cycles to microseconds at the description's SM clock.
    pub fn cycles_to_us(&self, cycles: f64) -> f64 {
        cycles / self.gpu.sm_clock_mhz
    }

    /// Run both phases. `with_rejected` also predicts the rejected configs (for `--all`).
    /// A config whose prediction is NaN, infinite, zero or negative is never ranked (it joins the rejected
    /// configs with [`BAD_PREDICTION_REASON`]); when no config is left, [`NoFiniteScore`].
    pub fn select(&self, p: &Problem, with_rejected: bool) -> Result<Selection, NoFiniteScore> {
        self.select_scoped(
            p,
            if with_rejected {
                Scope::WithRejected
            } else {
                Scope::All
            },
        )
    }

    /// Run both phases over what `scope` scores.
    pub fn select_scoped(&self, p: &Problem, scope: Scope) -> Result<Selection, NoFiniteScore> {
        self.select_inner(p, scope, None)
    }

    /// Both phases over the feasible configs that `keep` accepts (a sweep scored within the
    /// part of the space it timed: one made before split-K entered a family's space).
    /// Under the latency model's per-tile scoring a tile is kept when its first launch is.
    pub fn select_where(
        &self,
        p: &Problem,
        keep: &dyn Fn(&Config) -> bool,
    ) -> Result<Selection, NoFiniteScore> {
        self.select_inner(p, Scope::All, Some(keep))
    }

    fn select_inner(
        &self,
        p: &Problem,
        scope: Scope,
        keep: Option<&dyn Fn(&Config) -> bool>,
    ) -> Result<Selection, NoFiniteScore> {
        assert_eq!(p.dtype, self.dtype, "selector built for another dtype");
        if let Some(s) = self.for_problem(p) {
            return s.select_inner(p, scope, keep);
        }
        let with_rejected = scope == Scope::WithRejected;
        let g1 = default_group_m(self.gpu.sm_count);
        let swap_ok = self.family.swaps_operands(p);
        let hw = self.inputs();
        // Phase 1: score every feasible config (or, for a pick, those that can win).
        let mut scores = Vec::with_capacity(if self.score_rule.per_launch() {
            self.feasible_count()
        } else {
            self.tiles.len()
        });
        let mut unusable = Vec::new();
        let mut score_tile = |i: usize, scores: &mut Vec<Score>| {
            let e = &self.tiles[i];
            self.score_launches(e, p, g1, 0..e.feasible.len(), swap_ok, |cfg, cycles| {
                let sc = Score {
                    tile: i,
                    cfg,
                    cycles,
                    model_cycles: cycles,
                };
                if usable(cycles) {
                    scores.push(sc)
                } else {
                    unusable.push(sc)
                }
            });
        };
        let mut complete = true;
        if scope == Scope::Pick && self.prunable {
            // Tiles by their lower bound; once a bound lies above the band of the best
            // scored so far, neither that tile nor any later one can win or enter the band.
            let mut order: Vec<(f64, usize)> = self
                .tiles
                .iter()
                .enumerate()
                .filter(|(_, e)| !e.feasible.is_empty())
                .map(|(i, e)| (self.tile_floor(e, p, swap_ok), i))
                .collect();
            order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut best = f64::INFINITY;
            for &(floor, i) in &order {
                if floor > self.reach(best) {
                    complete = false;
                    break;
                }
                let before = scores.len();
                score_tile(i, &mut scores);
                best = scores[before..]
                    .iter()
                    .map(|s| s.cycles)
                    .fold(best, f64::min);
            }
        } else {
            for (i, e) in self.tiles.iter().enumerate() {
                if !e.feasible.is_empty() {
                    score_tile(i, &mut scores);
                }
            }
        }
        if let Some(keep) = keep {
            scores.retain(|sc| keep(&self.tiles[sc.tile].feasible[sc.cfg].config));
        }
        if scope == Scope::Pick && !scores.is_empty() {
            // a pick corrects only the launches it can take (those within the guard); the
            // others leave the selection, which a full ranking then scores again
            if let Some(limit) = self.guard_limit(&scores) {
                let before = scores.len();
                scores.retain(|s| s.model_cycles <= limit);
                complete &= scores.len() == before;
            }
        }
        self.correct(p, &mut scores);
        if scores.is_empty() {
            return Err(NoFiniteScore {
                family: self.family.name().into(),
                shape: format!("{}x{}x{} {}", p.m, p.n, p.k, p.dtype.name()),
                gpu: self.gpu.name.clone(),
                count: unusable.len(),
            });
        }
        let best = self.best(p, &scores);

        // Phase 2 for the winning tile.
        let entry = &self.tiles[best.tile];
        let pick_problem = kernel_problem(p, &entry.feasible[best.cfg].config);
        let pick_breakdown = predict_with(&entry.stat, &pick_problem, g1, &hw);
        let (g, phase2) = self.phase2(&pick_breakdown, entry.tile);
        let mut pick = self.ranked_entry(&entry.feasible[best.cfg], best.cycles, best.model_cycles);
        pick.config.group_m = g;
        // Phase 3: the pick's Stream-K twin, where the family runs one and it is faster.
        if let Some(twin) = self.stream_k_twin(p, &pick, keep) {
            pick = twin;
        }
        let rejected = if with_rejected {
            let mut v: Vec<Ranked> = self
                .tiles
                .iter()
                .flat_map(|e| {
                    let lat = if e.rejected.is_empty() {
                        0.0
                    } else {
                        predict_with(&e.stat, p, g1, &hw).l_total
                    };
                    e.rejected.iter().map(move |c| (c, lat))
                })
                .map(|(c, lat)| self.ranked_entry(c, lat, lat))
                .collect();
            for sc in &unusable {
                let e = &self.tiles[sc.tile];
                let launches = if self.score_rule.per_launch() {
                    sc.cfg..sc.cfg + 1
                } else {
                    0..e.feasible.len()
                };
                for j in launches {
                    let mut r = self.ranked_entry(&e.feasible[j], sc.cycles, sc.model_cycles);
                    r.rejected = Some(BAD_PREDICTION_REASON.into());
                    v.push(r);
                }
            }
            v.sort_by(|a, b| {
                a.latency_cycles
                    .total_cmp(&b.latency_cycles)
                    .then(a.config.cmp(&b.config))
            });
            v
        } else {
            Vec::new()
        };
        Ok(Selection {
            problem: *p,
            phase1_group_m: g1,
            pick,
            scores,
            complete,
            rejected,
            phase2,
            pick_breakdown,
        })
    }

    /// Phase 3: the pick with Stream-K (`,sk`: whole rounds, then the last two rounds' K
    /// iterations in one range per CTA) when the family takes that twin
    /// (`KernelFamily::stream_k_twin`) with the ranges within its share of the work, `keep`
    /// (a sweep's timed launches) accepts it and the model prices it below the whole-tile
    /// launch at the pick's GROUP_SIZE_M; its
    /// times are the pick's scaled by that ratio (the ranking's scale). `None` otherwise
    /// (a split-K, clustered or Stream-K pick keeps its launch).
    fn stream_k_twin(
        &self,
        p: &Problem,
        pick: &Ranked,
        keep: Option<&dyn Fn(&Config) -> bool>,
    ) -> Option<Ranked> {
        let c = pick.config;
        let most = self.family.stream_k_twin()?;
        if c.split_k > 1 || c.stream_k || c.switches.cluster {
            return None;
        }
        let twin = Config {
            stream_k: true,
            ..c
        };
        if keep.is_some_and(|k| !k(&twin)) {
            return None;
        }
        let (_, _, launch) = self.launch_of(&twin)?;
        if throughput::TileGrid::new(p, &launch, &self.inputs()).stream_range_share(&self.inputs())
            > most
        {
            return None;
        }
        let whole = self.predict_config(p, &c)?;
        let ranged = self.predict_outside_space(p, &twin)?;
        // (a launch of whole rounds has no range: the same grid, priced the same up to
        // rounding, keeps its launch)
        let ratio = ranged / whole;
        (ratio < 1.0 - 1e-9 && usable(ratio)).then(|| Ranked {
            config: twin,
            latency_cycles: pick.latency_cycles * ratio,
            latency_us: pick.latency_us * ratio,
            model_us: pick.model_us * ratio,
            ..pick.clone()
        })
    }

    /// A lower bound on the predicted time of every launch of a tile
    /// (`throughput::lower_bound`), only meaningful when the selector is `prunable`.
    fn tile_floor(&self, e: &TileEntry, p: &Problem, swap_ok: bool) -> f64 {
        let first = &e.launches[0];
        let floor = self.grid_floor(e, p, first);
        if e.swap && swap_ok {
            // the launches that swap the operands run the transposed problem's grid
            let other = throughput::LaunchStatic {
                swap: !first.swap,
                ..*first
            };
            floor.min(self.grid_floor(e, p, &other))
        } else {
            floor
        }
    }

    /// [`Selector::tile_floor`] over the launches of `e` that swap as `l` does.
    fn grid_floor(&self, e: &TileEntry, p: &Problem, l: &throughput::LaunchStatic) -> f64 {
        let hw = self.inputs();
        let grid = throughput::TileGrid::new(p, l, &hw);
        let mut floor =
            throughput::lower_bound(&grid, e.floor_core, e.floor_l2, e.floor_fixed, &hw);
        // a split-K launch runs on a grid of its own: the tile's bound is the least
        for &k in &e.splits {
            let split = grid.split(k, &hw).0;
            floor = floor.min(throughput::lower_bound(
                &split,
                e.floor_core,
                e.floor_l2,
                e.floor_fixed,
                &hw,
            ));
        }
        if e.stream {
            let stream = grid.stream(&hw).0;
            floor = floor.min(throughput::lower_bound(
                &stream,
                e.floor_core,
                e.floor_l2,
                e.floor_fixed,
                &hw,
            ));
        }
        if e.cluster {
            let cluster = grid.cluster(&hw);
            floor = floor.min(throughput::lower_bound(
                &cluster,
                e.floor_core,
                e.floor_l2,
                e.floor_fixed,
                &hw,
            ));
        }
        floor
    }

    /// The first `limit` feasible configs in rank order (every launch of a tile, most
    /// preferred first); the pick's tile carries the phase-2 GROUP_SIZE_M.
    pub fn ranked(&self, sel: &Selection, limit: usize) -> Vec<Ranked> {
        if let Some(s) = self.for_problem(&sel.problem) {
            return s.ranked(sel, limit);
        }
        let mut order = if sel.complete {
            sel.scores.clone()
        } else {
            match self.select_scoped(&sel.problem, Scope::All) {
                Ok(full) => full.scores,
                Err(_) => sel.scores.clone(),
            }
        };
        self.rank(&sel.problem, &mut order);
        if !self.score_rule.per_launch() {
            order = order
                .iter()
                .flat_map(|sc| {
                    (0..self.tiles[sc.tile].feasible.len()).map(move |cfg| Score { cfg, ..*sc })
                })
                .collect();
        }
        let mut order = order
            .iter()
            .take(limit)
            .map(|sc| {
                let c = &self.tiles[sc.tile].feasible[sc.cfg];
                let mut r = self.ranked_entry(c, sc.cycles, sc.model_cycles);
                if c.config.same_grid(&sel.pick.config) {
                    r.config.group_m = sel.pick.config.group_m;
                }
                r
            })
            .collect::<Vec<_>>();
        // a pick outside the space (phase 3's Stream-K twin) heads the ranking, its
        // whole-tile launch kept in its place (a sweep times both)
        if sel.pick.config.stream_k
            && limit > 0
            && !order.iter().any(|r| r.config == sel.pick.config)
        {
            order.insert(0, sel.pick.clone());
            order.truncate(limit);
        }
        order
    }

    /// Predicted cycles of one config (its tile at `config.group_m`, adjusted for its
    /// launch); `None` when the config is not a feasible config of this selector or its
    /// prediction is not a finite positive number.
    pub fn predict_config(&self, p: &Problem, config: &Config) -> Option<f64> {
        if let Some(s) = self.for_problem(p) {
            return s.predict_config(p, config);
        }
        let (cycles, feasible) = self.model_cycles(p, config)?;
        Some(cycles * self.correction_factor(p, &feasible, cycles))
    }

    /// The model's own prediction of one config, without the learned correction
    /// (`predict_config` when the selector has none).
    pub fn predict_config_uncorrected(&self, p: &Problem, config: &Config) -> Option<f64> {
        if let Some(s) = self.for_problem(p) {
            return s.predict_config_uncorrected(p, config);
        }
        self.model_cycles(p, config).map(|(cycles, _)| cycles)
    }

    /// The model's cycles of a feasible config (a usable number) and that config as the
    /// family lists it.
    fn model_cycles(&self, p: &Problem, config: &Config) -> Option<(f64, Config)> {
        let (e, j) = self.find(config)?;
        let mut cycles = None;
        self.score_launches(e, p, config.group_m, j..j + 1, true, |_, c| {
            cycles = Some(c)
        });
        Some((cycles.filter(|c: &f64| usable(*c))?, e.feasible[j].config))
    }

    /// The learned correction's factor for a feasible config whose model time is `cycles`:
    /// 1 without a correction, or where the corrected time would not be usable.
    fn correction_factor(&self, p: &Problem, config: &Config, cycles: f64) -> f64 {
        let Some(corr) = &self.correction else {
            return 1.0;
        };
        let f = corr.factor(p, config, &self.gpu, self.cycles_to_us(cycles));
        if usable(cycles * f) {
            f
        } else {
            1.0
        }
    }

    /// Predicted cycles of a `cluster` or Stream-K (`sk`) config outside the family's space
    /// (`origami-bench run --config ...,cluster`, `...,sk`): the same launch without the
    /// switch, priced on its grid ([`throughput::TileGrid::cluster`]: the pairs' rounds,
    /// the shared operand's L2 bytes halved; [`throughput::TileGrid::stream`]: whole
    /// rounds, then the ranges, with the hand-over), times the learned correction's factor
    /// of that plain launch where the selector has one (so both read on one scale); `None`
    /// without either switch, without the throughput model or when the plain launch is not
    /// a feasible config.
    pub fn predict_outside_space(&self, p: &Problem, config: &Config) -> Option<f64> {
        if let Some(s) = self.for_problem(p) {
            return s.predict_outside_space(p, config);
        }
        if !(config.switches.cluster || config.stream_k) || self.score_rule != ScoreRule::Throughput
        {
            return None;
        }
        let (e, j, launch) = self.launch_of(config)?;
        let t = throughput::predict_with(p, &launch, &e.costs[j], config.group_m, &self.inputs());
        let factor = match self.model_cycles(p, &plain_launch(config)) {
            Some((cycles, plain)) => self.correction_factor(p, &plain, cycles),
            None => 1.0,
        };
        Some(t.total * factor).filter(|c| usable(*c))
    }

    /// Score the launches `cfgs` (indices into `e.feasible`) of one tile at `group_m` by the
    /// selector's scoring rule, handing each (launch index, cycles) to `emit`; swapped
    /// launches only with `swap_ok` (`KernelFamily::swaps_operands`). Under
    /// `TileLatency` the tile is scored once, as its first launch in `cfgs`: every launch
    /// of the tile has that prediction (`launch_total` reduces to `l_total`).
    #[inline]
    fn score_launches(
        &self,
        e: &TileEntry,
        p: &Problem,
        group_m: u32,
        cfgs: std::ops::Range<usize>,
        swap_ok: bool,
        mut emit: impl FnMut(usize, f64),
    ) {
        let hw = self.inputs();
        let skip = |j: usize| !swap_ok && e.feasible[j].config.switches.swap;
        match self.score_rule {
            ScoreRule::Throughput => {
                // the grid is the tile's: made once for all its launches (one for those
                // that swap the operands, which run the transposed problem)
                let mut grids: [Option<throughput::TileGrid>; 2] = [None, None];
                for j in cfgs.filter(|&j| !skip(j)) {
                    let l = &e.launches[j];
                    let grid = grids[usize::from(l.swap)]
                        .get_or_insert_with(|| throughput::TileGrid::new(p, l, &hw));
                    let t = throughput::predict_on(p, grid, l, &e.costs[j], group_m, &hw);
                    emit(j, t.total);
                }
            }
            ScoreRule::TileLatency => {
                emit(cfgs.start, predict_with(&e.stat, p, group_m, &hw).l_total)
            }
            ScoreRule::LaunchLatency => {
                let b = predict_with(&e.stat, p, group_m, &hw);
                for j in cfgs.filter(|&j| !skip(j)) {
                    let stages = e.feasible[j].config.num_stages;
                    emit(j, launch_total(&b, stages, e.scales[j], &self.constants));
                }
            }
        }
    }

    fn ranked_entry(&self, c: &Candidate, lat: f64, model_lat: f64) -> Ranked {
        Ranked {
            config: c.config,
            latency_cycles: lat,
            latency_us: self.cycles_to_us(lat),
            model_us: self.cycles_to_us(model_lat),
            smem_bytes: c.smem_bytes,
            registers: c.registers,
            rejected: c.rejected.clone(),
            energy: None,
        }
    }

    /// The highest model time a tile's lower bound may have and still hold a launch that
    /// can win or enter the tie band when `best` is the lowest model time scored so far:
    /// with a correction, anything within its guard can win.
    fn reach(&self, best: f64) -> f64 {
        let reach = self.rank_rule.reach(best);
        match &self.correction {
            Some(c) => (reach * (1.0 + c.guard)).max(reach),
            None => reach,
        }
    }

    /// With a correction, every score's time becomes the model's times the correction's
    /// factor (`model_cycles` keeps the model's).
    fn correct(&self, p: &Problem, scores: &mut [Score]) {
        let Some(corr) = &self.correction else {
            return;
        };
        let launches: Vec<(&Config, f64)> = scores
            .iter()
            .map(|sc| {
                (
                    &self.tiles[sc.tile].feasible[sc.cfg].config,
                    self.cycles_to_us(sc.model_cycles),
                )
            })
            .collect();
        let factors = corr.factors(p, &launches, &self.gpu);
        for (sc, f) in scores.iter_mut().zip(factors) {
            let t = sc.model_cycles * f;
            if usable(t) {
                sc.cycles = t;
            }
        }
    }

    /// The highest model time (any unit) a pick may have among configs whose least model
    /// time is `least`: the correction's guard over the tie band (`None` without a
    /// correction; the pool the time pick is taken from).
    pub fn guard_limit_over(&self, least: f64) -> Option<f64> {
        self.correction.as_ref()?;
        Some(self.reach(least))
    }

    /// The highest model time a pick may have: the correction's guard over the tie band of
    /// the least model time (`None` without a correction). With a correction that changes
    /// nothing, the pool's corrected tie band is the model's own: the same pick.
    fn guard_limit(&self, scores: &[Score]) -> Option<f64> {
        let min = scores
            .iter()
            .map(|s| s.model_cycles)
            .fold(f64::INFINITY, f64::min);
        self.guard_limit_over(min)
    }

    /// The first config of `rank`'s order, found in one pass: the lowest latency (seed:
    /// exact ties to the higher intensity, then the smaller tile, then the preferred
    /// launch); origami: among the configs within the tie band of the best, the first by
    /// the band's keys.
    fn best(&self, p: &Problem, scores: &[Score]) -> Score {
        let guard = self.guard_limit(scores);
        let pool: Vec<Score>;
        let scores = match guard {
            Some(limit) => {
                pool = scores
                    .iter()
                    .filter(|s| s.model_cycles <= limit)
                    .copied()
                    .collect();
                &pool[..]
            }
            None => scores,
        };
        let mut best = scores[0];
        match self.rank_rule {
            RankRule::Lowest => {
                for s in &scores[1..] {
                    if self.seed_order(s, &best) == Ordering::Less {
                        best = *s;
                    }
                }
            }
            RankRule::TieBand { band } => {
                let min = scores
                    .iter()
                    .map(|s| s.cycles)
                    .fold(f64::INFINITY, f64::min);
                // max: a negative minimum is never left out of its own band.
                let limit = (min * (1.0 + band)).max(min);
                let mut in_band = scores.iter().filter(|s| s.cycles <= limit);
                best = *in_band.next().expect("the minimum is in the band");
                for s in in_band {
                    if self.band_order(p, s, &best) == Ordering::Less {
                        best = *s;
                    }
                }
            }
        }
        best
    }

    /// Seed order: latency, then higher intensity, then the smaller tile, then the
    /// preferred launch.
    fn seed_order(&self, a: &Score, b: &Score) -> Ordering {
        let (ta, tb) = (&self.tiles[a.tile], &self.tiles[b.tile]);
        a.cycles
            .total_cmp(&b.cycles)
            .then_with(|| tb.intensity.total_cmp(&ta.intensity))
            .then_with(|| ta.tile.cmp(&tb.tile))
            .then_with(|| a.cfg.cmp(&b.cfg))
    }

    /// Origami tie-band order: higher intensity, then the orientation preference (M > N:
    /// larger BLOCK_M; N > M: larger BLOCK_N; in the kernel's terms for a swapped launch),
    /// then for a family that asks (`band_prefers_fewer_fragment_bytes`) fewer shared-memory
    /// fragment bytes per output element, then the plain launch before the swapped one, then
    /// larger BM, BN, BK, then the preferred launch.
    fn band_order(&self, p: &Problem, a: &Score, b: &Score) -> Ordering {
        let (ta, tb) = (&self.tiles[a.tile], &self.tiles[b.tile]);
        // the tile's extent along the problem's longer side, in the kernel's terms (a
        // swapped launch's BLOCK_M runs along the user's N)
        let orient = |t: &TileEntry, s: &Score| -> u32 {
            let kp = kernel_problem(p, &t.feasible[s.cfg].config);
            match kp.m.cmp(&kp.n) {
                Ordering::Greater => t.tile.0,
                Ordering::Less => t.tile.1,
                Ordering::Equal => 0,
            }
        };
        let swapped = |t: &TileEntry, s: &Score| t.feasible[s.cfg].config.switches.swap;
        // shared-memory fragment bytes per output element of a launch (wgmma reads B's
        // whole tile once per 64-row block of A: fewer, wider blocks read less)
        let fragments = |t: &TileEntry, s: &Score| -> f64 {
            match t.launches.get(s.cfg) {
                Some(l) if self.family.band_prefers_fewer_fragment_bytes() => {
                    l.fragment_bytes / (l.bm * l.bn) as f64
                }
                _ => 0.0,
            }
        };
        tb.intensity
            .total_cmp(&ta.intensity)
            .then_with(|| orient(tb, b).cmp(&orient(ta, a)))
            .then_with(|| fragments(ta, a).total_cmp(&fragments(tb, b)))
            // the same extent either way round: the plain launch (swapping buys nothing)
            .then_with(|| swapped(ta, a).cmp(&swapped(tb, b)))
            .then_with(|| tb.tile.0.cmp(&ta.tile.0))
            .then_with(|| tb.tile.1.cmp(&ta.tile.1))
            .then_with(|| tb.tile.2.cmp(&ta.tile.2))
            .then_with(|| a.cfg.cmp(&b.cfg))
    }

    /// Order scores best first, per the ranking rule.
    fn rank(&self, p: &Problem, scores: &mut [Score]) {
        match self.rank_rule {
            RankRule::Lowest => {
                let guard = self.guard_limit(scores).unwrap_or(f64::INFINITY);
                scores.sort_by(|a, b| {
                    (a.model_cycles > guard)
                        .cmp(&(b.model_cycles > guard))
                        .then_with(|| self.seed_order(a, b))
                })
            }
            RankRule::TieBand { band } => {
                // with a correction, the launches within its guard first (the pick is
                // among them), each part by its corrected time
                let guard = self.guard_limit(scores).unwrap_or(f64::INFINITY);
                scores.sort_by(|a, b| {
                    (a.model_cycles > guard)
                        .cmp(&(b.model_cycles > guard))
                        .then(a.cycles.total_cmp(&b.cycles))
                });
                let limit = (scores[0].cycles * (1.0 + band)).max(scores[0].cycles);
                let band = scores
                    .iter()
                    .take_while(|s| s.cycles <= limit && s.model_cycles <= guard)
                    .count();
                scores[..band].sort_by(|a, b| self.band_order(p, a, b));
            }
        }
    }
}

/// A config without the switches outside every family's space that the model still
/// prices (`cluster`, Stream-K): the launch of the space they are applied to.
fn plain_launch(config: &Config) -> Config {
    Config {
        switches: Switches {
            cluster: false,
            ..config.switches
        },
        stream_k: false,
        ..*config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;
    use crate::model::family::{SeedFamily, TritonFamily};
    use crate::model::problem::parse_config;

    fn pick(variant: Variant, gpu: &str, fam: &dyn KernelFamily, m: u64, n: u64, k: u64) -> Config {
        let doc = preset(gpu).unwrap();
        let s = Selector::new(
            fam,
            &doc.gpu,
            &doc.params,
            &ModelConstants::default(),
            variant,
            Dtype::Fp16,
        )
        .unwrap();
        s.select(&Problem::new(m, n, k, Dtype::Fp16).unwrap(), false)
            .unwrap()
            .pick
            .config
    }

    /// `f` run on `fam`'s selector for the H100 preset with the family's fitted constants
    /// (none when it has no fit), fp16, the origami model.
    fn with_h100_fitted<R>(fam: &dyn KernelFamily, f: impl FnOnce(&Selector<'_>) -> R) -> R {
        let doc = preset("h100-sxm").unwrap();
        let (_, fitted) =
            crate::hw::fitted::fitted_constants(fam.name(), &doc.gpu).unwrap_or_default();
        let constants =
            ModelConstants::with_overrides(fitted.iter().map(|(k, v)| (k.as_str(), *v))).unwrap();
        with_h100(fam, &constants, f)
    }

    /// A selector of `fam` on the H100 preset with `constants`, fp16.
    fn with_h100<R>(
        fam: &dyn KernelFamily,
        constants: &ModelConstants,
        f: impl FnOnce(&Selector<'_>) -> R,
    ) -> R {
        let doc = preset("h100-sxm").unwrap();
        let s = Selector::new(
            fam,
            &doc.gpu,
            &doc.params,
            constants,
            Variant::Origami,
            Dtype::Fp16,
        )
        .unwrap();
        f(&s)
    }

    fn tile_g(c: Config) -> (u32, u32, u32, u32) {
        (c.block_m, c.block_n, c.block_k, c.group_m)
    }

    #[test]
    fn seed_golden_picks_rtx4090() {
        let cases = [
            (64, (16, 16, 32, 1)),
            (512, (32, 64, 128, 1)),
            (1024, (64, 128, 64, 1)),
            (2048, (128, 256, 64, 1)),
            (4096, (256, 256, 64, 1)),
            (8192, (256, 256, 64, 8)),
        ];
        for (s, want) in cases {
            let got = tile_g(pick(Variant::Seed, "rtx4090", &SeedFamily, s, s, s));
            assert_eq!(got, want, "{s}^3");
        }
    }

    #[test]
    fn tma_launches_waiting_on_memory_draw_less_active_power() {
        // The energy model's busy share (model::energy): a decode launch of the Hopper
        // family waits on DRAM for most of its time, a large square one works; the
        // mma.sync family's loads were priced above the active power, so its share is 1.
        let busy = |fam: &dyn KernelFamily, m: u64, n: u64, k: u64| -> f64 {
            with_h100_fitted(fam, |s| {
                let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
                let pick = s.select(&p, false).unwrap().pick.config;
                s.traffic(&p, &pick).unwrap().issue_busy
            })
        };
        let hopper = crate::model::family::HopperFamily;
        let decode = busy(&hopper, 1, 28672, 4096);
        let square = busy(&hopper, 8192, 8192, 8192);
        // (the p-norm of the iteration's terms counts part of a compute-bound iteration as
        // waiting too: 0.45 at 8192^3 with the committed hopper constants, 0.11 for decode)
        assert!(decode < 0.25, "decode busy share {decode}");
        assert!(
            square > 3.0 * decode,
            "8192^3 busy share {square}, decode {decode}"
        );
        let origami = crate::model::family::OrigamiFamily;
        assert_eq!(busy(&origami, 1, 28672, 4096), 1.0);
    }

    #[test]
    fn the_latency_model_takes_no_stream_k_twin_and_does_not_panic() {
        // the hopper family under the published latency model (no fitted constants: no
        // launches are made) on a shape whose pick the throughput model gives Stream-K,
        // with a sweep's filter that keeps Stream-K launches (`origami-bench refit` without
        // TRITONBLAS_HW_PARAMS took this path and indexed an empty launch list)
        let latency = ModelConstants::default();
        with_h100(&crate::model::family::HopperFamily, &latency, |s| {
            assert!(!s.throughput_model());
            let p = Problem::new(8192, 8192, 8192, Dtype::Fp16).unwrap();
            let sel = s.select_where(&p, &|_c: &Config| true).unwrap();
            assert!(!sel.pick.config.stream_k);
            let twin = Config {
                stream_k: true,
                ..sel.pick.config
            };
            assert!(s.throughput_breakdown(&p, &twin).is_none());
        });
    }

    #[test]
    fn a_clustered_config_outside_the_space_is_priced_on_the_clustered_grid() {
        with_h100_fitted(&crate::model::family::HopperFamily, |s| {
            let p = Problem::new(4100, 576, 7168, Dtype::Fp16).unwrap();
            let alone = crate::model::problem::parse_config("128x144x64,g16,w12,s6").unwrap();
            let pair = Config {
                switches: Switches {
                    cluster: true,
                    ..Switches::NONE
                },
                ..alone
            };
            // not in the family's space: no prediction of its own
            assert_eq!(s.predict_config(&p, &pair), None);
            assert_eq!(s.predict_outside_space(&p, &alone), None);
            let one = s.predict_config(&p, &alone).unwrap();
            let two = s.predict_outside_space(&p, &pair).unwrap();
            // 33 x 4 tiles pair along N into one wave; A's L2 bytes halved
            assert!(two < one && two > 0.5 * one, "{two} vs {one}");
        });
    }

    #[test]
    fn phase_3_gives_the_pick_stream_k_where_the_model_prices_it_faster() {
        with_h100_fitted(&crate::model::family::HopperFamily, |s| {
            let pick = |m, n, k| {
                let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
                (p, s.select(&p, false).unwrap())
            };
            // 8192^3: 15.5 rounds of 128 x 256 tiles; the last two in ranges
            let (p, sel) = pick(8192, 8192, 8192);
            assert!(sel.pick.config.stream_k, "{}", sel.pick.config);
            let whole = Config {
                stream_k: false,
                ..sel.pick.config
            };
            let ranged = s.predict_outside_space(&p, &sel.pick.config).unwrap();
            assert!(ranged < s.predict_config(&p, &whole).unwrap());
            // the ranking shows the pick first, its whole-tile launch in its place
            let ranked = s.ranked(&sel, 3);
            assert_eq!(ranked[0].config, sel.pick.config);
            assert_eq!(ranked[1].config, whole);
            // a sweep that did not time it keeps the whole-tile launch
            let timed = s.select_where(&p, &|c: &Config| !c.stream_k).unwrap();
            assert_eq!(timed.pick.config, whole);
            // 4096^3 (3.9 rounds: the ranges would be half the work, and priced slower),
            // 4100 x 4096 (four whole rounds: no range) and 3 x 57344 x 65536 (1.7 rounds:
            // all of it in ranges, where the model prices Stream-K faster but its price
            // was too kind on the H100) keep their launch
            for (m, n, k) in [(4096, 4096, 4096), (4100, 4096, 7168), (3, 57344, 65536)] {
                assert!(!pick(m, n, k).1.pick.config.stream_k, "{m}x{n}x{k}");
            }
            let (p, sel) = pick(3, 57344, 65536);
            let sk = Config {
                stream_k: true,
                ..sel.pick.config
            };
            let ranged = s.predict_outside_space(&p, &sk).unwrap();
            assert!(ranged < s.predict_config(&p, &sel.pick.config).unwrap());
        });
    }

    #[test]
    fn a_stream_k_config_outside_the_space_is_priced_on_the_stream_k_grid() {
        with_h100_fitted(&crate::model::family::HopperFamily, |s| {
            let whole = parse_config("128x256x64,g16,w12,s4").unwrap();
            let sk = Config {
                stream_k: true,
                ..whole
            };
            // 4100 x 4096: 33 x 16 = 528 tiles, four whole rounds of 132: no range, the
            // plain launch's time
            let even = Problem::new(4100, 4096, 7168, Dtype::Fp16).unwrap();
            assert_eq!(s.predict_config(&even, &sk), None);
            let plain = s.predict_config(&even, &whole).unwrap();
            let ranged = s.predict_outside_space(&even, &sk).unwrap();
            assert!((ranged / plain - 1.0).abs() < 1e-9, "{ranged} vs {plain}");
            // 4096^3: 512 tiles, 3.9 rounds; the busiest SM runs 249 iterations instead of
            // 256 but five segments (three more epilogues) and a hand-over: the model's
            // priced grid, within half the plain launch's time of it
            let cube = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
            let plain = s.predict_config(&cube, &whole).unwrap();
            let ranged = s.predict_outside_space(&cube, &sk).unwrap();
            assert!(ranged != plain, "{ranged} vs {plain}");
            assert!(
                ranged > 0.9 * plain && ranged < 1.5 * plain,
                "{ranged} vs {plain}"
            );
        });
    }

    #[test]
    fn a_swapped_launch_is_priced_on_the_transposed_problem() {
        with_h100_fitted(&crate::model::family::HopperFamily, |s| {
            let p = Problem::new(333, 4096, 4096, Dtype::Fp16).unwrap();
            for text in ["128x112x64,g4,w12,s6", "128x96x64,g1,w12,s7,k2"] {
                let plain = parse_config(text).unwrap();
                let swapped = Config {
                    switches: Switches {
                        swap: true,
                        ..Switches::NONE
                    },
                    ..plain
                };
                let a = s.predict_config(&p, &swapped).unwrap();
                let b = s.predict_config(&p.transposed(), &plain).unwrap();
                assert!((a - b).abs() <= 1e-9 * a, "{text}: {a} vs {b}");
                assert_ne!(a, s.predict_config(&p, &plain).unwrap(), "{text}");
            }
            // the 333 rows on wgmma's N (3 x 112) beat 128-row tiles padding them to 384
            let sel = s.select(&p, false).unwrap();
            assert!(sel.pick.config.switches.swap, "{}", sel.pick.config);
            // ... and the one-pass pick is the full ranking's first
            let first = &s.ranked(&sel, 1)[0];
            assert_eq!(first.config, sel.pick.config);
            // a ranked swapped config's prediction is its own
            for r in s
                .ranked(&sel, 40)
                .iter()
                .filter(|r| r.config.same_grid(&sel.pick.config))
            {
                let own = s.predict_config(&p, &r.config).unwrap();
                assert!((own - r.latency_cycles).abs() <= 1e-9 * own, "{}", r.config);
            }
            // where the rows outnumber the columns swapped launches are not selectable
            // (`swaps_operands`), but one asked by name is still priced
            let tall = Problem::new(4100, 576, 7168, Dtype::Fp16).unwrap();
            let all = s.select(&tall, false).unwrap();
            assert!(s
                .ranked(&all, usize::MAX)
                .iter()
                .all(|r| !r.config.switches.swap));
            let named = parse_config("128x144x64,g1,w12,s6,swap").unwrap();
            assert!(s.predict_config(&tall, &named).is_some());
            assert!(!crate::model::family::HopperFamily.swaps_operands(&tall));
            assert!(crate::model::family::HopperFamily.swaps_operands(&p));
        });
    }

    #[test]
    fn the_hopper_tie_band_takes_the_launch_that_reads_fewer_fragment_bytes() {
        with_h100_fitted(&crate::model::family::HopperFamily, |s| {
            // 1024^3: 64x128 (one m64n128 wgmma per K step) and 128x64 (two m64n64) are
            // predicted within the band; the first reads B once (6.5 us on an H100, 7.8)
            let p = Problem::new(1024, 1024, 1024, Dtype::Fp16).unwrap();
            let pick = s.select(&p, false).unwrap().pick.config;
            assert_eq!((pick.block_m, pick.block_n), (64, 128), "{pick}");
            // the mma.sync family keeps the published keys
            assert!(!crate::model::family::OrigamiFamily.band_prefers_fewer_fragment_bytes());
        });
    }

    #[test]
    fn one_wave_launches_put_consecutive_ctas_on_the_larger_operands_tile() {
        with_h100_fitted(&crate::model::family::HopperFamily, |s| {
            // 4100x576 in 128x144 tiles: 33 x 4 = 132 tiles, one wave; A is the larger
            // operand: a group of one (consecutive CTAs along a row share A's tile)
            let tall = Problem::new(4100, 576, 7168, Dtype::Fp16).unwrap();
            let c = parse_config("128x144x64,w12,s6").unwrap();
            assert_eq!(s.group_size(&tall, &c), 1);
            // 333x4096 plain: 3 x 37 tiles, B the larger: the largest group (down a column)
            let wide = Problem::new(333, 4096, 4096, Dtype::Fp16).unwrap();
            let c112 = parse_config("128x112x64,w12,s6").unwrap();
            assert_eq!(s.group_size(&wide, &c112), 16);
            // swapped, the kernel's rows are the user's 4096: a group of one
            let swapped = parse_config("128x112x64,w12,s6,swap").unwrap();
            assert_eq!(s.group_size(&wide, &swapped), 1);
            // more tiles than SMs: phase 2's footprint decides as before (8192^3 in 128 x
            // 256 tiles: the grid and the first wave are the same either way round)
            let big = Problem::new(8192, 8192, 8192, Dtype::Fp16).unwrap();
            let c256 = parse_config("128x256x64,w12,s4").unwrap();
            assert!(s.group_size(&big, &c256) > 1);
            // the tie rule is the hopper kernel's: the mma.sync family keeps the constant's
            assert!(!crate::model::family::OrigamiFamily.one_wave_groups_by_operand());
        });
    }

    #[test]
    fn a_split_configs_own_prediction_is_its_ranked_prediction() {
        // predict_config (run, refit, score) must find the config's own decomposition,
        // not the first launch of its warps and stages.
        with_h100_fitted(&crate::model::family::HopperFamily, |s| {
            let p = Problem::new(333, 4096, 14336, Dtype::Fp16).unwrap();
            let sel = s.select(&p, false).unwrap();
            let ranked = s.ranked(&sel, usize::MAX);
            let splits: std::collections::HashSet<u32> =
                ranked.iter().map(|r| r.config.split_k).collect();
            assert!(splits.len() > 1, "the space has split-K configs");
            // The ranking scores at the selection's group size, predict_config at the
            // config's (GROUP_SIZE_M moves the L2 term by a few percent); a split's grid gives
            // a prediction of its own.
            // The pick's tile is ranked at the pick's group size (other tiles at phase 1's,
            // while their configs say 1): its launches must get their ranked prediction back.
            // (the pick's tile grid: its tile in its operand order, `swap`)
            let mine: Vec<_> = ranked
                .iter()
                .filter(|r| r.config.same_grid(&sel.pick.config))
                .collect();
            assert!(mine.iter().any(|r| r.config.split_k > 1));
            for r in mine {
                let own = s.predict_config(&p, &r.config).unwrap();
                assert!(
                    (own - r.latency_cycles).abs() <= 1e-9 * own,
                    "{}: {own} vs ranked {}",
                    r.config,
                    r.latency_cycles
                );
            }
            // Every split config is priced on its own grid, not on its unsplit sibling's.
            for r in ranked.iter().filter(|r| r.config.split_k > 1) {
                let own = s.predict_config(&p, &r.config).unwrap();
                let whole = Config {
                    split_k: 1,
                    ..r.config
                };
                let one = s.predict_config(&p, &whole).unwrap();
                assert!(
                    (one - own).abs() > 1e-9 * own,
                    "{}: {own} = {one}",
                    r.config
                );
            }
        });
    }

    #[test]
    fn one_pass_pick_is_the_first_of_the_full_ranking() {
        let doc = preset("h100-sxm").unwrap();
        for variant in [Variant::Seed, Variant::Origami] {
            for fam in [&SeedFamily as &dyn KernelFamily, &TritonFamily] {
                let s = Selector::new(
                    fam,
                    &doc.gpu,
                    &doc.params,
                    &ModelConstants::default(),
                    variant,
                    Dtype::Fp16,
                )
                .unwrap();
                for (m, n, k) in [
                    (64, 64, 64),
                    (128, 14336, 4096),
                    (16384, 64, 4096),
                    (4096, 4096, 4096),
                    (1000, 3000, 777),
                ] {
                    let sel = s
                        .select(&Problem::new(m, n, k, Dtype::Fp16).unwrap(), false)
                        .unwrap();
                    let first = s.ranked(&sel, 1)[0].config;
                    assert_eq!(
                        first,
                        sel.pick.config,
                        "{variant:?} {} {m}x{n}x{k}",
                        fam.name()
                    );
                }
            }
        }
    }

    #[test]
    fn a_pick_that_skips_tiles_by_their_bound_is_the_full_selections_pick() {
        use crate::model::family::{family, FAMILY_NAMES};
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |hi: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            1 + x % hi
        };
        // Every tenth shape unaligned; sizes from decode to very large.
        let shapes: Vec<(u64, u64, u64)> = (0..160)
            .map(|i| {
                let round = |v: u64| if i % 10 == 0 { v } else { v.div_ceil(16) * 16 };
                let scale = [64, 1024, 8192, 65536][i % 4];
                (round(next(scale)), round(next(32768)), round(next(16384)))
            })
            .collect();
        let mut skipped_any = false;
        for gpu in ["h100-sxm", "h200", "a100", "rtx4090"] {
            let doc = preset(gpu).unwrap();
            for name in FAMILY_NAMES {
                let fam = family(name).unwrap();
                let fitted = crate::hw::fitted::fitted_constants(name, &doc.gpu);
                let constants = match fitted {
                    Some((_, f)) => {
                        ModelConstants::with_overrides(f.iter().map(|(k, v)| (k.as_str(), *v)))
                            .unwrap()
                    }
                    None => ModelConstants {
                        throughput_model: Scoring::Throughput,
                        ..ModelConstants::default()
                    },
                };
                for variant in [Variant::Seed, Variant::Origami] {
                    for dtype in [Dtype::Fp16, Dtype::Bf16] {
                        let Ok(s) =
                            Selector::new(fam, &doc.gpu, &doc.params, &constants, variant, dtype)
                        else {
                            continue;
                        };
                        for &(m, n, k) in &shapes {
                            let Ok(p) = Problem::new(m, n, k, dtype) else {
                                continue;
                            };
                            if fam.problem_violation(&p).is_some() {
                                continue;
                            }
                            let full = s.select(&p, false).map(|x| x.pick);
                            let quick = s.select_scoped(&p, Scope::Pick);
                            if let Ok(q) = &quick {
                                skipped_any |= !q.complete;
                                // a partial selection still ranks fully
                                if let Ok(f) = &full {
                                    assert_eq!(s.ranked(q, 3)[0].config, f.config);
                                }
                            }
                            let quick = quick.map(|x| x.pick);
                            let what = format!("{gpu} {name} {variant:?} {dtype} {m}x{n}x{k}");
                            match (full, quick) {
                                (Ok(f), Ok(q)) => {
                                    assert_eq!(f.config, q.config, "{what}");
                                    assert_eq!(f.latency_cycles, q.latency_cycles, "{what}");
                                }
                                (Err(_), Err(_)) => {}
                                (f, q) => panic!("{what}: {:?} vs {:?}", f.is_ok(), q.is_ok()),
                            }
                        }
                    }
                }
            }
        }
        assert!(
            skipped_any,
            "no selection skipped a tile: the bound prunes nothing"
        );
    }

    #[test]
    fn non_finite_predictions_are_never_ranked() {
        let doc = preset("h100-sxm").unwrap();
        let p = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        for (mma, variant) in [(1e308, Variant::Origami), (f64::INFINITY, Variant::Seed)] {
            let mut params = doc.params;
            params.mma_latency = mma;
            let s = Selector::new(
                &TritonFamily,
                &doc.gpu,
                &params,
                &ModelConstants::default(),
                variant,
                Dtype::Fp16,
            )
            .unwrap();
            match s.select(&p, true) {
                Ok(sel) => {
                    assert!(sel.scores.iter().all(|x| x.cycles.is_finite()));
                    assert!(sel.pick.latency_cycles.is_finite());
                }
                Err(e) => {
                    let msg = e.to_string();
                    assert!(msg.contains("4096x4096x4096 fp16"), "{msg}");
                    assert!(msg.contains("'triton'"), "{msg}");
                    assert!(!msg.contains('\n'));
                    use crate::exit::{Exit, ToExit};
                    assert_eq!(e.exit_code(), Exit::BadInput);
                }
            }
        }
    }

    #[test]
    fn negative_predictions_are_never_ranked() {
        // Out-of-range constants (past the validation a file goes through) can drive a
        // prediction below zero: such a config is rejected with its reason, never picked.
        let doc = preset("h100-sxm").unwrap();
        let p = Problem::new(1, 2, 10, Dtype::Fp16).unwrap();
        let mut c = ModelConstants::default();
        assert!(c.set_unvalidated("loop_overhead_cycles", -1e6));
        let s = Selector::new(
            &TritonFamily,
            &doc.gpu,
            &doc.params,
            &c,
            Variant::Origami,
            Dtype::Fp16,
        )
        .unwrap();
        match s.select(&p, true) {
            Ok(sel) => {
                assert!(sel.scores.iter().all(|x| x.cycles > 0.0));
                assert!(sel.pick.latency_cycles > 0.0);
                assert!(sel
                    .rejected
                    .iter()
                    .any(|r| r.rejected.as_deref() == Some(BAD_PREDICTION_REASON)));
            }
            Err(e) => assert!(e.to_string().contains("not positive"), "{e}"),
        }
    }

    #[test]
    fn triton_family_never_picks_a_spilling_tile() {
        for s in [2048u64, 4096, 8192] {
            let c = pick(Variant::Origami, "h100-sxm", &TritonFamily, s, s, s);
            assert!(c.block_m * c.block_n < 256 * 256, "{c}");
        }
    }
}
