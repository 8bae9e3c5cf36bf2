//! `origami-select`'s job as a library: the request checked in the order the tool reports
//! errors (input type, family, model, `--top`, the shapes, whether the family's kernel can
//! run each of them, then the hardware tiers and constants), one selector per family and
//! input type, and each shape's selection handed to a report writer as soon as it is made
//! (`report::selection`). `--family` names a family or a set of them (`triton-auto`);
//! `model::family_set` owns the rule that chooses a set's member per shape, and a single
//! family takes the same path as the set of itself.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::dtype::{Dtype, UnknownDtype};
use crate::exit::{Exit, ToExit};
use crate::hw::energy::{EnergyCosts, COST_NAMES};
use crate::hw::load::{load_file, HwFile};
use crate::hw::DeviceProps;
use crate::model::family_set::{set_names, Choice, FamilySet, NoMember};
use crate::model::objective::{self, EnergyPlan, Objective, Priced};
use crate::model::problem::{parse_dim, DimError};
use crate::model::select::Ranked;
use crate::model::shapes::{read_shape_rows, ShapesError};
use crate::model::{Problem, Selector};
use crate::report::selection::ObjectiveNote;
use crate::report::selection::{
    AutoSummary, BatchRow, BatchRows, Columns, Entrant, KernelInfo, Listing, SelectionReport,
    SelectionWriter,
};
use crate::setup::{setup, setup_announcing, variant_named, Setup, SetupError, SetupRequest};

/// How many ranked configs a single shape lists when `--top` is not given.
pub const DEFAULT_TOP: usize = 5;

/// The input types the selector ranks configs for.
pub const SELECT_DTYPES: [Dtype; 5] = [
    Dtype::Fp16,
    Dtype::Bf16,
    Dtype::Fp8E4m3,
    Dtype::Fp32,
    Dtype::Tf32,
];

/// Why a pick could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum PickError {
    #[error("--dtype: {0}")]
    Dtype(#[from] UnknownDtype),
    #[error("--dtype: {0} is not supported by origami-select (use fp16, bf16, fp8, fp32, tf32)")]
    UnsupportedDtype(Dtype),
    #[error("unexpected argument '{0}' found; see --help")]
    UnknownFlag(String),
    #[error("--family: unknown family '{0}' (known: {known})", known = set_names().join(", "))]
    UnknownFamily(String),
    #[error("--all lists every candidate of one family: --family {set} chooses among {members}; name one of them, or use --top N")]
    SetAll { set: &'static str, members: String },
    #[error("--top: must be at least 1")]
    NoTop,
    #[error("--explain walks through one shape: give M N K instead of --shapes")]
    BatchExplain,
    #[error("--all lists every candidate of one shape: with --shapes, use --top N (N ranked configs per shape)")]
    BatchAll,
    #[error("--top with --shapes writes ranked rows in text, csv or json: --format triton prints one launch per shape")]
    BatchTopFormat,
    #[error("give either M N K or --shapes FILE, not both")]
    SizesAndShapes,
    #[error("expected three sizes M N K (or --shapes FILE.csv); see --help")]
    MissingSizes,
    #[error(transparent)]
    Size(#[from] DimError),
    #[error("--shapes {0}")]
    Shapes(#[from] ShapesError),
    #[error("--shapes {}: {}", path.display(), PickError::UnsupportedDtype(*dtype))]
    ShapeDtype { path: PathBuf, dtype: Dtype },
    /// The family's kernel cannot run the shape (`KernelFamily::problem_violation`).
    #[error("--family {family}: {reason}")]
    Unrunnable {
        family: &'static str,
        reason: String,
    },
    /// A row of the shape list the family's kernel cannot run: the whole list is refused.
    #[error("--shapes {}: line {line}: --family {family}: {reason}", path.display())]
    UnrunnableRow {
        path: PathBuf,
        line: usize,
        family: &'static str,
        reason: String,
    },
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// No member of the family set can select for a shape (a single family's own reason).
    #[error(transparent)]
    NoMember(#[from] NoMember),
    #[error("--objective: unknown objective '{0}' (known: {known})", known = crate::model::objective::OBJECTIVE_NAMES.join(", "))]
    UnknownObjective(String),
    #[error("--power-limit: '{0}' is not a power in watts above 0")]
    PowerLimit(String),
    #[error("--power-limit: {limit} W is at or below the GPU's static power ({static_w:.0} W, {source_name}): no clock meets it")]
    PowerBelowStatic {
        limit: f64,
        static_w: f64,
        source_name: String,
    },
    #[error("--energy-costs {}: {msg}", path.display())]
    EnergyCostsFile { path: PathBuf, msg: String },
    #[error("--objective {objective}: {reason}")]
    EnergyCosts { objective: String, reason: String },
    #[error("--objective {objective} prices configs with the throughput model's counts: family {family} is scored by the latency model here (no fitted throughput constants for this GPU)")]
    NotPriceable { objective: String, family: String },
    #[error("--format triton writes one launch per shape: --pareto writes text, csv or json")]
    ParetoFormat,
    #[error("writing output: {0}")]
    Output(#[from] io::Error),
}

impl ToExit for PickError {
    /// Bad input, but for a failed write (run-time failure).
    fn exit_code(&self) -> Exit {
        match self {
            PickError::Setup(e) => e.exit_code(),
            PickError::Output(_) => Exit::Runtime,
            _ => Exit::BadInput,
        }
    }
}

/// Whether a size as typed is a flag: a leading '-' and not a number.
fn is_flag(s: &str) -> bool {
    s.starts_with('-') && s.parse::<f64>().is_err()
}

/// `d` if the selector ranks configs for it.
pub fn supported_dtype(d: Dtype) -> Result<Dtype, PickError> {
    if SELECT_DTYPES.contains(&d) {
        Ok(d)
    } else {
        Err(PickError::UnsupportedDtype(d))
    }
}

/// What `origami-select` is asked, as given on its command line.
#[derive(Debug, Clone)]
pub struct PickRequest {
    /// M, N and K as typed (one shape), or none with `shapes`.
    pub sizes: [Option<String>; 3],
    /// A shape list (batch mode).
    pub shapes: Option<PathBuf>,
    /// Input type of the shape, and of the list's rows without one.
    pub dtype: String,
    /// A preset by name instead of the GPU found.
    pub gpu: Option<String>,
    /// The override file (`TRITONBLAS_HW_PARAMS`).
    pub override_file: Option<PathBuf>,
    pub family: String,
    pub model: String,
    pub no_fitted: bool,
    /// Leave out the learned correction of the family's model (`model::correction`).
    pub no_correction: bool,
    /// `--calibration-only`: the throughput model's constants from the measurements of the
    /// calibration in the override file (`hw::calibrated`), nothing fitted.
    pub calibration_only: bool,
    /// `--top`: how many ranked configs a single shape lists ([`DEFAULT_TOP`] when not
    /// given); with `shapes`, that many ranked rows per shape instead of the pick alone.
    pub top: Option<usize>,
    /// `--all`: every candidate of a single shape (refused with `shapes`).
    pub all: bool,
    /// Add the `--explain` walk-through to a single shape's report (refused with `shapes`).
    pub explain: bool,
    /// `--objective`, `--power-limit`, `--energy-costs`, `--pareto`.
    pub energy: EnergyRequest,
}

/// The energy side of a request (issue 15, section 4), as typed.
#[derive(Debug, Clone, Default)]
pub struct EnergyRequest {
    /// `--objective` (time when not given).
    pub objective: Option<String>,
    /// `--power-limit W`: a limit for planning instead of the GPU's own.
    pub power_limit: Option<String>,
    /// `--energy-costs FILE`: a calibration with the energy measurements.
    pub costs_file: Option<PathBuf>,
    /// `--pareto`: the time/energy front of each shape instead of a pick.
    pub pareto: bool,
}

impl EnergyRequest {
    /// Whether anything asks for the energy model (`--energy-costs` alone prices the
    /// model's own pick and ranking).
    pub fn active(&self) -> bool {
        self.pareto
            || self.power_limit.is_some()
            || self.costs_file.is_some()
            || self.objective.as_deref().is_some_and(|o| o != "time")
    }
}

/// A checked request: the shapes and the model set up for them.
pub struct PickJob {
    pub problems: Vec<Problem>,
    /// The family, or the set of families to choose among.
    pub set: FamilySet,
    /// One setup per member of the set, in member order (each with its family's fitted
    /// constants).
    pub setups: Vec<Setup>,
    /// The columns the writers add for the set.
    pub columns: Columns,
    /// What a batch writes per shape; `None` for a full report per shape.
    pub batch: Option<BatchRows>,
    pub listing: Listing,
    pub explain: bool,
    /// The objective with its costs, when the energy model is asked for.
    pub energy: Option<EnergyPlan>,
    /// `--pareto`: write each shape's time/energy front instead of a pick.
    pub pareto: bool,
}

impl PickRequest {
    /// Check the request and set up the model. `detect` is asked for the GPU only when no
    /// preset is named; `notice` gets the default-preset notice when there is one.
    pub fn prepare(
        &self,
        detect: impl FnOnce() -> Option<DeviceProps>,
        notice: impl FnOnce(&str),
    ) -> Result<PickJob, PickError> {
        // A size that reads as a flag is one clap could not place: the sizes accept a
        // leading '-' so that "-5" is reported as a bad size.
        if let Some(f) = self.sizes.iter().flatten().find(|s| is_flag(s)) {
            return Err(PickError::UnknownFlag(f.clone()));
        }
        let dtype = supported_dtype(self.dtype.parse::<Dtype>()?)?;
        let set = FamilySet::named(&self.family)
            .ok_or_else(|| PickError::UnknownFamily(self.family.clone()))?;
        variant_named(&self.model)?;
        if self.top == Some(0) {
            return Err(PickError::NoTop);
        }
        let batch = self.shapes.as_ref().map(|_| match self.top {
            Some(n) => BatchRows::Top(n),
            None => BatchRows::Pick,
        });
        if batch.is_some() && self.explain {
            return Err(PickError::BatchExplain);
        }
        if batch.is_some() && self.all {
            return Err(PickError::BatchAll);
        }
        if set.is_choice() && self.all {
            return Err(PickError::SetAll {
                set: set.name,
                members: set
                    .members
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(" and "),
            });
        }
        let objective = match self.energy.objective.as_deref() {
            None => Objective::Time,
            Some(o) => Objective::named(o).ok_or_else(|| PickError::UnknownObjective(o.into()))?,
        };
        let power_limit = match &self.energy.power_limit {
            None => None,
            Some(w) => Some(
                w.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .ok_or_else(|| PickError::PowerLimit(w.clone()))?,
            ),
        };
        let rows = self.problems(dtype)?;
        for (line, p) in &rows {
            if let Some(reason) = set.violation(p) {
                let family = set.name;
                return Err(match (&self.shapes, line) {
                    (Some(path), Some(line)) => PickError::UnrunnableRow {
                        path: path.clone(),
                        line: *line,
                        family,
                        reason,
                    },
                    _ => PickError::Unrunnable { family, reason },
                });
            }
        }
        let problems = rows.into_iter().map(|(_, p)| p).collect();
        let device = if self.gpu.is_none() { detect() } else { None };
        let mut setups = Vec::with_capacity(set.members.len());
        let mut notice = Some(notice);
        for f in &set.members {
            let request = SetupRequest {
                device: device.clone(),
                gpu_name: self.gpu.clone(),
                override_file: self.override_file.clone(),
                family: f.name().to_string(),
                model: self.model.clone(),
                no_fitted: self.no_fitted,
                calibration_only: self.calibration_only,
            };
            // One hardware notice: every member runs on the same hardware.
            let one = match notice.take() {
                Some(n) => setup_announcing(&request, n)?,
                None => setup(&request)?,
            };
            setups.push(if self.no_correction {
                one.without_correction()
            } else {
                one
            });
        }
        let energy = if self.energy.active() {
            Some(self.energy_plan(objective, power_limit, &setups[0])?)
        } else {
            None
        };
        let mut columns = Columns::of(&set);
        columns.energy = energy.is_some();
        Ok(PickJob {
            problems,
            columns,
            set,
            setups,
            batch,
            listing: Listing {
                top: self.top.unwrap_or(DEFAULT_TOP),
                all: self.all,
            },
            explain: self.explain,
            energy,
            pareto: self.energy.pareto,
        })
    }

    /// The objective with its energy costs: `--energy-costs`, else the override file's
    /// measurements when it is a full calibration with them, else the costs committed for
    /// the GPU's preset.
    fn energy_plan(
        &self,
        objective: Objective,
        power_limit_w: Option<f64>,
        setup: &Setup,
    ) -> Result<EnergyPlan, PickError> {
        let gpu = &setup.resolved.gpu.name;
        let costs = if let Some(path) = &self.energy.costs_file {
            let doc = EnergyCosts::load_doc(path).map_err(|msg| PickError::EnergyCostsFile {
                path: path.clone(),
                msg,
            })?;
            EnergyCosts::from_doc(&doc, &path.display().to_string())
        } else {
            let file_doc = self
                .override_file
                .as_ref()
                .and_then(|p| match load_file(p) {
                    Ok(HwFile::Full(doc))
                        if doc.measurements.iter().any(|m| m.name == COST_NAMES[0]) =>
                    {
                        Some((doc, p.display().to_string()))
                    }
                    _ => None,
                });
            EnergyCosts::resolve(file_doc.as_ref().map(|(d, s)| (&**d, s.as_str())), gpu)
        }
        .map_err(|e| PickError::EnergyCosts {
            objective: objective.name().into(),
            reason: e.to_string(),
        })?;
        if let Some(limit) = power_limit_w {
            if !costs.limit_reachable(limit) {
                return Err(PickError::PowerBelowStatic {
                    limit,
                    static_w: costs.static_w,
                    source_name: costs.source.clone(),
                });
            }
        }
        Ok(EnergyPlan {
            objective,
            power_limit_w,
            costs,
        })
    }

    /// The shapes asked for: the list's rows with their lines, or M N K with `dtype`.
    fn problems(&self, dtype: Dtype) -> Result<Vec<(Option<usize>, Problem)>, PickError> {
        if let Some(path) = &self.shapes {
            if self.sizes[0].is_some() {
                return Err(PickError::SizesAndShapes);
            }
            let v = read_shape_rows(path, dtype)?;
            if let Some(r) = v.iter().find(|r| !SELECT_DTYPES.contains(&r.problem.dtype)) {
                return Err(PickError::ShapeDtype {
                    path: path.clone(),
                    dtype: r.problem.dtype,
                });
            }
            return Ok(v.into_iter().map(|r| (Some(r.line), r.problem)).collect());
        }
        let [Some(m), Some(n), Some(k)] = &self.sizes else {
            return Err(PickError::MissingSizes);
        };
        Ok(vec![(
            None,
            Problem {
                m: parse_dim("M", m)?,
                n: parse_dim("N", n)?,
                k: parse_dim("K", k)?,
                dtype,
            },
        )])
    }
}

impl PickJob {
    /// Select every shape and write it with `writer` on `out` as it is selected (a batch
    /// row by row: nothing is kept but the selectors); a walk-through the writer does not
    /// print goes to `diag`.
    pub fn write(
        &self,
        writer: &mut dyn SelectionWriter,
        out: &mut dyn Write,
        diag: &mut dyn Write,
    ) -> Result<(), PickError> {
        // Every member's selector of every input type first: a single family that cannot
        // rank a row's type fails before anything is written, as does a set none of whose
        // members can select for a row.
        let mut selectors: Vec<HashMap<Dtype, Member>> =
            self.set.members.iter().map(|_| HashMap::new()).collect();
        for p in &self.problems {
            for (i, f) in self.set.members.iter().enumerate() {
                if f.problem_violation(p).is_some() {
                    continue;
                }
                if let Entry::Vacant(e) = selectors[i].entry(p.dtype) {
                    e.insert(match self.setups[i].selector(p.dtype) {
                        Ok(s) => Ok(s),
                        Err(e) if !self.set.is_choice() => return Err(e.into()),
                        Err(SetupError::NoFeasibleConfig { source, .. }) => Err(source.to_string()),
                        Err(e) => Err(e.to_string()),
                    });
                }
            }
        }
        let selector_of = |dtype: Dtype| {
            let selectors = &selectors;
            move |i: usize| match selectors[i].get(&dtype) {
                Some(Ok(s)) => Ok(s),
                Some(Err(why)) => Err(why.clone()),
                None => Err("its kernel cannot run the shape".to_string()),
            }
        };
        for p in &self.problems {
            self.set.check(p, selector_of(p.dtype))?;
        }
        if let Some(rows) = self.batch {
            if matches!(rows, BatchRows::Top(_)) && !writer.ranks_batches() {
                return Err(PickError::BatchTopFormat);
            }
            writer.begin_batch(out, rows != BatchRows::Pick, self.columns)?;
        }
        for p in &self.problems {
            let with_rejected = self.listing.all && self.batch.is_none();
            let mut choice = self.set.choose(p, selector_of(p.dtype), with_rejected)?;
            let s = choice.selector;
            let kernel = KernelInfo::of(s);
            // the objective's order of every feasible config, and the time pick priced
            let by_objective = match &self.energy {
                Some(plan) => Some(self.by_objective(s, &mut choice.selection, plan)?),
                None => None,
            };
            match self.batch {
                Some(BatchRows::Pick) => {
                    let row = BatchRow::pick(choice.selection, kernel, self.columns);
                    writer.batch_row(out, &row)?;
                    continue;
                }
                Some(BatchRows::Top(n)) => {
                    let ranked = match &by_objective {
                        Some((order, _)) => order.iter().take(n).cloned().collect(),
                        None => s.ranked(&choice.selection, n),
                    };
                    for (i, r) in ranked.into_iter().enumerate() {
                        let row = BatchRow {
                            problem: *p,
                            rank: Some(i + 1),
                            pick: r,
                            kernel,
                            columns: self.columns,
                        };
                        writer.batch_row(out, &row)?;
                    }
                    continue;
                }
                None => {}
            }
            let auto = auto_summary(&self.set, &choice, |i| match selectors[i].get(&p.dtype) {
                Some(Ok(s)) => Some(s.constants.scoring()),
                _ => None,
            });
            let mut report = SelectionReport::new(
                choice.selection,
                s,
                &self.setups[choice.chosen].resolved,
                self.listing,
                self.explain,
            )
            .in_set(self.columns, auto);
            if let (Some(plan), Some((order, time_pick))) = (&self.energy, by_objective) {
                if let Some(w) = report.walkthrough.as_mut() {
                    w.push_str(&crate::report::selection::explain::energy_section(
                        s,
                        p,
                        &report.pick,
                        plan,
                    ));
                }
                report.ranked = order.into_iter().take(self.listing.limit()).collect();
                report.objective = Some(ObjectiveNote {
                    objective: plan.objective,
                    power_limit_w: plan.limit_w(),
                    planned_limit: plan.power_limit_w.is_some(),
                    costs_source: plan.costs.source.clone(),
                    time_pick,
                });
            }
            if let Some(w) = &report.walkthrough {
                if !writer.prints_walkthrough() {
                    // Diagnostics are best effort, like eprint! without the panic.
                    let _ = diag.write_all(w.as_bytes());
                }
            }
            writer.single(out, &report)?;
        }
        if self.batch.is_some() {
            writer.end_batch(out)?;
        }
        out.flush()?;
        Ok(())
    }
}

impl PickJob {
    /// Price every feasible config of `sel`'s shape under `plan`, make the objective's
    /// pick `sel`'s pick (unless the objective is the model's own time), and return the
    /// configs in the objective's order (the pick first) with the time pick, priced, when
    /// the objective chose another config.
    fn by_objective(
        &self,
        s: &Selector<'_>,
        sel: &mut crate::model::Selection,
        plan: &EnergyPlan,
    ) -> Result<(Vec<Ranked>, Option<Ranked>), PickError> {
        if !s.throughput_model() {
            return Err(PickError::NotPriceable {
                objective: plan.objective.name().into(),
                family: s.family.name().into(),
            });
        }
        let priced = objective::price_all(s, sel, plan);
        let time_priced = objective::price_of(&priced, &sel.pick.config).map(|x| {
            let mut r = sel.pick.clone();
            r.energy = Some(x.energy);
            r
        });
        let ranked = objective::rank(&priced, plan, Some(&sel.pick.config));
        let best = objective::pick(s, sel, &ranked);
        let mut order: Vec<Ranked> = ranked.into_iter().map(|x| x.ranked).collect();
        if plan.keeps_time_pick() {
            if let Some(t) = &time_priced {
                sel.pick = t.clone();
            }
            return Ok((order, None));
        }
        let Some(best) = best else {
            return Ok((order, None));
        };
        if let Some(first) = order.first_mut() {
            first.config.group_m = best.ranked.config.group_m;
        }
        let time_pick =
            time_priced.filter(|t| !objective::same_launch(&t.config, &best.ranked.config));
        sel.pick = best.ranked;
        Ok((order, time_pick))
    }

    /// Each shape's time/energy Pareto front under the plan (fastest first), with every
    /// feasible config priced (for a plot); the family chosen as for a pick.
    pub fn pareto_fronts(&self) -> Result<Vec<ParetoShape>, PickError> {
        let Some(plan) = &self.energy else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(self.problems.len());
        // each member's selector once per input type, as `write` keeps them
        let mut by_dtype: HashMap<Dtype, Vec<Member>> = HashMap::new();
        for p in &self.problems {
            let selectors = by_dtype.entry(p.dtype).or_insert_with(|| {
                self.setups
                    .iter()
                    .map(|s| s.selector(p.dtype).map_err(|e| e.to_string()))
                    .collect()
            });
            let members = &self.set.members;
            let choice = self.set.choose(
                p,
                |i: usize| match (members[i].problem_violation(p), selectors.get(i)) {
                    (Some(_), _) => Err("its kernel cannot run the shape".to_string()),
                    (None, Some(Ok(s))) => Ok(s),
                    (None, Some(Err(why))) => Err(why.clone()),
                    (None, None) => Err("no selector".to_string()),
                },
                false,
            )?;
            let s = choice.selector;
            if !s.throughput_model() {
                return Err(PickError::NotPriceable {
                    objective: plan.objective.name().into(),
                    family: s.family.name().into(),
                });
            }
            let priced = objective::price_all(s, &choice.selection, plan);
            out.push(ParetoShape {
                problem: *p,
                family: s.family.name(),
                power_limit_w: plan.limit_w(),
                front: objective::pareto(&priced),
                all: priced,
            });
        }
        Ok(out)
    }
}

/// One shape's time/energy front.
#[derive(Debug, Clone)]
pub struct ParetoShape {
    pub problem: Problem,
    pub family: &'static str,
    pub power_limit_w: f64,
    /// The configs no other beats in both sustained time and energy, fastest first.
    pub front: Vec<Priced>,
    /// Every feasible config priced.
    pub all: Vec<Priced>,
}

/// One member's selector for one input type, or why it has none.
type Member = Result<Selector<'static>, String>;

/// A set's choice as the writers report it (`None` for a single family); `scoring(i)` is
/// member `i`'s scoring mode when it has a selector for the shape's type.
pub fn auto_summary(
    set: &FamilySet,
    choice: &Choice<'_>,
    scoring: impl Fn(usize) -> Option<crate::model::Scoring>,
) -> Option<AutoSummary> {
    if !set.is_choice() {
        return None;
    }
    let entrants = set
        .members
        .iter()
        .zip(&choice.entrants)
        .enumerate()
        .map(|(i, (f, e))| Entrant {
            family: f.name(),
            scoring: if e.is_ok() { scoring(i) } else { None },
            outcome: e.clone().map_err(|out| out.reason),
            compared_us: choice.compared_us.get(i).copied().flatten(),
        })
        .collect();
    Some(AutoSummary {
        set: set.name,
        chosen: set.members[choice.chosen].name(),
        entrants,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::selection::{CsvWriter, JsonWriter, TextWriter, TritonWriter};

    fn request(sizes: [&str; 3]) -> PickRequest {
        PickRequest {
            sizes: sizes.map(|s| Some(s.to_string())),
            shapes: None,
            dtype: "fp16".into(),
            gpu: Some("h200".into()),
            override_file: None,
            family: "triton".into(),
            model: "origami".into(),
            no_fitted: false,
            no_correction: false,
            calibration_only: false,
            top: None,
            all: false,
            explain: false,
            energy: Default::default(),
        }
    }

    fn error(r: &PickRequest) -> String {
        match r.prepare(|| panic!("a preset is named"), |_| {}) {
            Ok(_) => panic!("expected an error"),
            Err(e) => {
                assert_eq!(e.exit_code(), Exit::BadInput);
                e.to_string()
            }
        }
    }

    #[test]
    fn checks_come_in_the_tools_order() {
        let mut r = request(["--bogus", "1", "1"]);
        r.dtype = "int4".into();
        assert_eq!(error(&r), "unexpected argument '--bogus' found; see --help");
        r.sizes[0] = Some("0".into());
        r.dtype = "int4".into();
        r.family = "nope".into();
        assert!(error(&r).starts_with("--dtype: unknown dtype 'int4'"));
        r.dtype = "nvfp4".into();
        assert!(error(&r).contains("not supported by origami-select"));
        r.dtype = "fp16".into();
        assert!(error(&r).starts_with("--family: unknown family"));
        r.family = "triton".into();
        r.model = "nope".into();
        r.top = Some(0);
        assert!(error(&r).starts_with("--model: "));
        r.model = "seed".into();
        r.gpu = Some("nope".into());
        assert_eq!(error(&r), "--top: must be at least 1");
        r.top = Some(1);
        assert!(error(&r).starts_with("M: "));
        r.sizes[0] = Some("64".into());
        assert!(error(&r).starts_with("--gpu: "));
        r.sizes[2] = None;
        assert_eq!(
            error(&r),
            "expected three sizes M N K (or --shapes FILE.csv); see --help"
        );
        r.shapes = Some("s.csv".into());
        assert_eq!(error(&r), "give either M N K or --shapes FILE, not both");
    }

    /// A batch request on a list that is never read: the refusals come first.
    fn batch(top: Option<usize>, all: bool, explain: bool) -> PickRequest {
        let mut r = request(["", "", ""]);
        r.sizes = [None, None, None];
        r.shapes = Some("/nonexistent/shapes.csv".into());
        r.top = top;
        r.all = all;
        r.explain = explain;
        r
    }

    #[test]
    fn a_batch_refuses_explain_and_all_and_honours_top() {
        assert_eq!(
            error(&batch(None, false, true)),
            "--explain walks through one shape: give M N K instead of --shapes"
        );
        assert!(error(&batch(Some(3), true, false)).starts_with("--all lists every candidate"));
        assert_eq!(
            error(&batch(Some(0), false, false)),
            "--top: must be at least 1"
        );
        // past the refusals, the list is read
        assert!(error(&batch(Some(3), false, false)).starts_with("--shapes /nonexistent"));
        assert!(error(&batch(None, false, false)).starts_with("--shapes /nonexistent"));
    }

    /// A batch job over `shapes` with `top`.
    fn batch_job(shapes: &[(u64, u64, u64)], top: Option<usize>) -> PickJob {
        let mut job = request(["64", "64", "64"])
            .prepare(|| None, |_| {})
            .unwrap();
        job.problems = shapes
            .iter()
            .map(|&(m, n, k)| Problem {
                m,
                n,
                k,
                dtype: Dtype::Fp16,
            })
            .collect();
        job.batch = Some(match top {
            Some(n) => BatchRows::Top(n),
            None => BatchRows::Pick,
        });
        job
    }

    fn written(job: &PickJob, w: &mut dyn SelectionWriter) -> Result<String, PickError> {
        let (mut out, mut diag) = (Vec::new(), Vec::new());
        job.write(w, &mut out, &mut diag)?;
        assert!(diag.is_empty());
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn top_gives_n_ranked_rows_per_shape() {
        let shapes = [(4096, 4096, 4096), (128, 8192, 1024)];
        let picks = written(&batch_job(&shapes, None), &mut CsvWriter).unwrap();
        let csv = written(&batch_job(&shapes, Some(3)), &mut CsvWriter).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            crate::report::selection::csv::RANKED_BATCH_CSV_HEADER
        );
        assert_eq!(lines.len(), 1 + 2 * 3, "{csv}");
        let ranks: Vec<&str> = lines[1..]
            .iter()
            .map(|l| l.split(',').nth(4).unwrap())
            .collect();
        assert_eq!(ranks, ["1", "2", "3", "1", "2", "3"]);
        assert!(lines[4].starts_with("128,8192,1024,fp16,1,"));
        // rank 1 is the pick's config (its GROUP_SIZE_M from phase 2)
        for (pick, first) in picks.lines().skip(1).zip([lines[1], lines[4]]) {
            fn cfg(l: &str, from: usize) -> Vec<&str> {
                l.split(',').skip(from).take(6).collect()
            }
            assert_eq!(cfg(pick, 4), cfg(first, 5), "{pick} / {first}");
        }

        let text = written(&batch_job(&shapes, Some(2)), &mut TextWriter).unwrap();
        assert_eq!(text.lines().count(), 1 + 2 * 2, "{text}");
        assert!(text.lines().next().unwrap().contains("rank"));

        let json = written(&batch_job(&shapes, Some(2)), &mut JsonWriter::default()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let rows = v.as_array().unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[1]["rank"], 2);
        assert_eq!(rows[2]["problem"]["M"], 128);
        assert!(rows[0]["config"]["predicted_us"].is_number());

        let e = written(&batch_job(&shapes, Some(2)), &mut TritonWriter).unwrap_err();
        assert!(matches!(e, PickError::BatchTopFormat), "{e}");
        assert_eq!(e.exit_code(), Exit::BadInput);
        let launches = written(&batch_job(&shapes, None), &mut TritonWriter).unwrap();
        assert_eq!(launches.lines().count(), 2);
    }

    #[test]
    fn the_walkthrough_goes_where_the_writer_wants_it() {
        let mut r = request(["4096", "4096", "4096"]);
        r.explain = true;
        let mut notices = 0;
        let job = r.prepare(|| None, |_| notices += 1).unwrap();
        assert_eq!(notices, 0, "a named preset is no default");
        let (mut out, mut diag) = (Vec::new(), Vec::new());
        job.write(&mut JsonWriter::default(), &mut out, &mut diag)
            .unwrap();
        assert!(String::from_utf8_lossy(&diag).starts_with("== Hardware parameters"));
        assert!(out.starts_with(b"{"));
        let (mut out, mut diag) = (Vec::new(), Vec::new());
        job.write(&mut TextWriter, &mut out, &mut diag).unwrap();
        assert!(diag.is_empty());
        assert!(String::from_utf8_lossy(&out).starts_with("== Hardware parameters"));
    }

    #[test]
    fn the_default_preset_is_announced_and_unsupported_families_fail_at_their_dtype() {
        let mut r = request(["64", "64", "64"]);
        r.gpu = None;
        r.family = "origami".into();
        r.dtype = "fp32".into();
        let mut notice = String::new();
        r.dtype = "fp16".into();
        r.prepare(|| None, |n| notice = n.to_string()).unwrap();
        assert!(notice.starts_with("no GPU found"), "{notice}");
        // the family refuses the type with its reason, when the shape is checked
        r.dtype = "fp32".into();
        let e = match r.prepare(|| None, |_| {}) {
            Ok(job) => {
                let (mut out, mut diag) = (Vec::new(), Vec::new());
                job.write(&mut CsvWriter, &mut out, &mut diag).unwrap_err()
            }
            Err(e) => e,
        };
        assert!(e.to_string().starts_with("--family origami: "), "{e}");
        assert!(e.to_string().contains("ask for tf32"), "{e}");
        assert_eq!(e.exit_code(), Exit::BadInput);
    }
}
