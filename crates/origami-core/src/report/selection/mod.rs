//! What `origami-select` reports, typed once per shape, and one writer per output format:
//! text for people, JSON and CSV for programs, and the Triton launch dictionary
//! (`--format triton`), for one shape ([`SelectionReport`]) or a batch ([`BatchRow`]),
//! plus the `--explain` walk-through of the NVIDIA port report's algorithms ([`explain`]).

pub mod csv;
pub mod explain;
pub mod json;
pub mod pareto;
pub mod text;
pub mod triton;

use std::io::{self, Write};

use crate::hw::resolve::{Resolved, Tier};
use crate::hw::schema::PARAM_NAMES;
use crate::model::group::GroupCost;
use crate::model::select::{Ranked, Selection, Selector};
pub use crate::model::Scoring;
use crate::model::{Config, FamilySet, Problem};

pub use self::csv::CsvWriter;
pub use self::json::JsonWriter;
pub use self::text::TextWriter;
pub use self::triton::TritonWriter;

/// How many ranked configs a single-shape report lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listing {
    /// The first `top` configs in rank order.
    pub top: usize,
    /// Every candidate instead, and the rejected ones with their reasons.
    pub all: bool,
}

impl Listing {
    pub(crate) fn limit(self) -> usize {
        if self.all {
            usize::MAX
        } else {
            self.top
        }
    }
}

/// The GPU a selection was made for.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSummary {
    pub name: String,
    /// Where its description came from ("preset h100-sxm", "device (...)", "file ...").
    pub source: String,
    pub sm_count: u32,
    pub sm_clock_mhz: f64,
}

/// A model parameter or constant with its value and the tier it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct TieredValue {
    pub name: String,
    pub value: Option<f64>,
    pub tier: Tier,
}

/// The columns and fields the writers add for the `--family` asked. Every family without
/// compile-time switches, asked alone, has none of them: its output is as it always was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns {
    /// A family column: the set chooses among families (`triton-auto`).
    pub family: bool,
    /// WARP_SPECIALIZE, FLATTEN and EPILOGUE_SUBTILE: some member takes compile-time
    /// switches (`triton-tma`).
    pub switches: bool,
    /// SPLIT_K, STREAM_K and SWAP: some member's space shares out K and swaps operands
    /// (`hopper`).
    pub split_k: bool,
    /// `--format triton` writes `{"kernel", "family", "grid", "kwargs"}` rather than the
    /// bare keyword arguments: the kernel is not the tutorial one, or is chosen per shape.
    pub named_launch: bool,
    /// Width of the text tables' config column: the longest config text of the members'
    /// spaces, at least 22.
    pub config_width: usize,
    /// sustained_us, energy_mj and power_w: an objective other than time priced the
    /// configs (`--objective`, `--power-limit`).
    pub energy: bool,
}

impl Columns {
    /// One family without switches.
    pub const PLAIN: Columns = Columns {
        family: false,
        switches: false,
        split_k: false,
        named_launch: false,
        config_width: 22,
        energy: false,
    };

    /// The columns of a family or set.
    pub fn of(set: &FamilySet) -> Columns {
        let switches = set.members.iter().any(|f| f.takes_switches());
        // GROUP_SIZE_M has at most two digits (phase 2's largest is 16; phase 1's default,
        // ceil(sqrt(SMs)), is below 100 for any GPU with fewer than 9802 SMs).
        let config_width = set
            .members
            .iter()
            .flat_map(|f| f.configs())
            .map(|c| Config { group_m: 16, ..c }.to_string().len())
            .fold(Columns::PLAIN.config_width, usize::max);
        Columns {
            family: set.is_choice(),
            switches,
            split_k: set
                .members
                .iter()
                .any(|f| f.split_ks().len() > 1 || f.stream_k()),
            named_launch: switches || set.is_choice(),
            config_width,
            energy: false,
        }
    }
}

/// A config to ask a family what does not depend on the config.
const ANY_CONFIG: Config = Config {
    block_m: 64,
    block_n: 64,
    block_k: 64,
    group_m: 1,
    num_warps: 4,
    num_stages: 3,
    switches: crate::model::Switches::NONE,
    split_k: 1,
    stream_k: false,
};

/// The kernel a config is for: what `--format triton` needs to write its launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelInfo {
    /// The family's command-line name.
    pub family: &'static str,
    /// The Triton kernel function, for a family that is a Triton kernel.
    pub triton_kernel: Option<&'static str>,
    /// The kernel takes WARP_SPECIALIZE, FLATTEN and EPILOGUE_SUBTILE.
    pub switches: bool,
    /// One program per SM walks the tiles: the launch takes NUM_PROGRAMS.
    pub persistent: bool,
    /// The GPU's SM count (NUM_PROGRAMS of a persistent kernel).
    pub sm_count: u32,
    /// The family's space shares out K (split-K or Stream-K): the launch names SPLIT_K
    /// and STREAM_K.
    pub splits_k: bool,
}

impl KernelInfo {
    /// The kernel of a selector's family on its GPU.
    pub fn of(s: &Selector<'_>) -> KernelInfo {
        let f = s.family;
        KernelInfo {
            family: f.name(),
            triton_kernel: f.triton_kernel(),
            switches: f.takes_switches(),
            // Whether the kernel loops over tiles does not depend on the config.
            persistent: f.persistent_loop(&ANY_CONFIG).is_some(),
            sm_count: s.gpu.sm_count,
            splits_k: f.split_ks().len() > 1 || f.stream_k(),
        }
    }
}

/// One member's part in a `triton-auto` choice, as the writers report it.
#[derive(Debug, Clone)]
pub struct Entrant {
    pub family: &'static str,
    /// How the member's configs were scored (latency or throughput model), when it ran.
    pub scoring: Option<Scoring>,
    /// The member's pick, or why it takes no part in the shape.
    pub outcome: Result<Ranked, String>,
    /// The time the choice compared for the pick (`hw::time_map`), when it ran.
    pub compared_us: Option<f64>,
}

/// The choice of a family set for one shape: which member won, and every member's pick
/// or reason.
#[derive(Debug, Clone)]
pub struct AutoSummary {
    pub set: &'static str,
    pub chosen: &'static str,
    pub entrants: Vec<Entrant>,
}

/// The selection of one shape, with everything any format prints about it.
#[derive(Debug, Clone)]
pub struct SelectionReport {
    pub problem: Problem,
    /// The kernel of the pick.
    pub kernel: KernelInfo,
    /// The columns of the `--family` asked.
    pub columns: Columns,
    /// How the family was chosen, when a set was asked (`triton-auto`).
    pub auto: Option<AutoSummary>,
    pub gpu: GpuSummary,
    pub family: &'static str,
    pub model: &'static str,
    pub scoring: Scoring,
    pub pick: Ranked,
    pub feasible_configs: usize,
    /// The five hardware parameters, in schema order.
    pub params: Vec<TieredValue>,
    /// The constants that differ from the defaults, by name.
    pub constants: Vec<TieredValue>,
    pub phase1_group_m: u32,
    pub phase2: Vec<GroupCost>,
    /// Feasible configs in rank order, as many as the listing asks.
    pub ranked: Vec<Ranked>,
    /// Rejected configs with their reasons; `Some` when every candidate was asked for.
    pub rejected: Option<Vec<Ranked>>,
    /// The `--explain` walk-through, when asked for.
    pub walkthrough: Option<String>,
    /// The objective that ranked `ranked` and made the pick, when not the time of one
    /// launch (`--objective`, `--power-limit`).
    pub objective: Option<ObjectiveNote>,
}

/// What ranked a shape's configs other than the model's time.
#[derive(Debug, Clone)]
pub struct ObjectiveNote {
    pub objective: crate::model::objective::Objective,
    /// The power limit the energy model applied, W.
    pub power_limit_w: f64,
    /// Whether the limit is `--power-limit`'s (else the GPU's own).
    pub planned_limit: bool,
    /// Where the energy costs come from.
    pub costs_source: String,
    /// The model's time pick, priced, when the objective picked another config.
    pub time_pick: Option<Ranked>,
}

impl SelectionReport {
    /// The report of one selection made by `s` on the hardware `res`.
    pub fn new(
        sel: Selection,
        s: &Selector<'_>,
        res: &Resolved,
        listing: Listing,
        explain: bool,
    ) -> SelectionReport {
        let walkthrough = explain.then(|| explain::walkthrough(&sel, s, res));
        let ranked = s.ranked(&sel, listing.limit());
        SelectionReport {
            problem: sel.problem,
            kernel: KernelInfo::of(s),
            columns: Columns::PLAIN,
            auto: None,
            gpu: GpuSummary {
                name: s.gpu.name.clone(),
                source: res.gpu_source.clone(),
                sm_count: s.gpu.sm_count,
                sm_clock_mhz: s.gpu.sm_clock_mhz,
            },
            family: s.family.name(),
            model: s.variant.name(),
            scoring: s.constants.scoring(),
            pick: sel.pick,
            feasible_configs: s.feasible_count_for(&sel.problem),
            params: params(res),
            constants: constants(res),
            phase1_group_m: sel.phase1_group_m,
            phase2: sel.phase2,
            ranked,
            rejected: listing.all.then_some(sel.rejected),
            walkthrough,
            objective: None,
        }
    }
}

impl SelectionReport {
    /// The report as part of the `--family` asked: its columns, and the set's choice (whose
    /// account joins the walk-through, when there is one).
    pub fn in_set(mut self, columns: Columns, auto: Option<AutoSummary>) -> SelectionReport {
        if let (Some(w), Some(a)) = (self.walkthrough.as_mut(), auto.as_ref()) {
            w.push_str(&explain::choice_section(a));
        }
        self.columns = columns;
        self.auto = auto;
        self
    }
}

/// The five parameters of a resolution with their tiers.
pub fn params(res: &Resolved) -> Vec<TieredValue> {
    PARAM_NAMES
        .iter()
        .map(|name| TieredValue {
            name: name.to_string(),
            value: res.params.get(name),
            tier: res.tiers[*name].clone(),
        })
        .collect()
}

/// The constants of a resolution that differ from the defaults, with their tiers.
pub fn constants(res: &Resolved) -> Vec<TieredValue> {
    res.constants
        .iter()
        .map(|(name, (v, tier))| TieredValue {
            name: name.clone(),
            value: Some(*v),
            tier: tier.clone(),
        })
        .collect()
}

/// What a batch writes per shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchRows {
    /// The pick alone (one row per shape).
    Pick,
    /// The first N feasible configs in rank order (`--top N`), each row with its rank.
    Top(usize),
}

/// One row of a batch: the pick and its prediction, or (with `rank`) the config at that
/// rank of the shape's ranking.
#[derive(Debug, Clone)]
pub struct BatchRow {
    pub problem: Problem,
    /// The place in the ranking (from 1) of a `--top` row; `None` for the pick.
    pub rank: Option<usize>,
    pub pick: Ranked,
    /// The kernel the config is for.
    pub kernel: KernelInfo,
    /// The columns of the `--family` asked.
    pub columns: Columns,
}

impl BatchRow {
    /// The pick of a selection, as one row.
    pub fn pick(sel: Selection, kernel: KernelInfo, columns: Columns) -> BatchRow {
        BatchRow {
            problem: sel.problem,
            rank: None,
            pick: sel.pick,
            kernel,
            columns,
        }
    }
}

/// One output format of `origami-select`. A batch is written as `begin_batch`, one
/// `batch_row` per row as its shape is selected, then `end_batch`; a single shape as
/// `single`. No writer keeps a batch's rows: memory does not grow with the batch.
pub trait SelectionWriter {
    /// Before the first row of a batch (a header, where the format has one); `ranked`
    /// when the rows carry a rank (`--top`); `columns` those of the `--family` asked.
    fn begin_batch(
        &mut self,
        _out: &mut dyn Write,
        _ranked: bool,
        _columns: Columns,
    ) -> io::Result<()> {
        Ok(())
    }

    /// Whether the format can write ranked batch rows (`--shapes` with `--top`).
    fn ranks_batches(&self) -> bool {
        true
    }

    /// One shape of a batch.
    fn batch_row(&mut self, out: &mut dyn Write, row: &BatchRow) -> io::Result<()>;

    /// After the last row of a batch.
    fn end_batch(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    /// The report of a single shape.
    fn single(&mut self, out: &mut dyn Write, report: &SelectionReport) -> io::Result<()>;

    /// Whether `single` prints the `--explain` walk-through itself; when not, it goes to
    /// the diagnostics stream.
    fn prints_walkthrough(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::setup::{setup, SetupRequest};

    fn report(listing: Listing, explain: bool) -> SelectionReport {
        let s = setup(&SetupRequest {
            device: None,
            gpu_name: Some("h200".into()),
            override_file: None,
            family: "triton".into(),
            model: "origami".into(),
            no_fitted: false,
            calibration_only: false,
        })
        .unwrap();
        let sel = s.selector(Dtype::Fp16).unwrap();
        let p = Problem {
            m: 4096,
            n: 4096,
            k: 4096,
            dtype: Dtype::Fp16,
        };
        SelectionReport::new(
            sel.select(&p, listing.all).unwrap(),
            &sel,
            &s.resolved,
            listing,
            explain,
        )
    }

    fn written(w: &mut dyn SelectionWriter, r: &SelectionReport) -> String {
        let mut out = Vec::new();
        w.single(&mut out, r).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn columns_follow_the_family_set() {
        let of = |name: &str| Columns::of(&FamilySet::named(name).unwrap());
        for plain in ["triton", "origami", "seed"] {
            assert_eq!(of(plain), Columns::PLAIN, "{plain}");
        }
        let tma = of("triton-tma");
        assert!(tma.switches && tma.named_launch && !tma.family);
        // "256x256x128,g16,w8,s5,flatten"
        assert_eq!(tma.config_width, 29);
        let auto = of("triton-auto");
        assert_eq!(
            auto,
            Columns {
                family: true,
                ..tma
            }
        );
    }

    #[test]
    fn single_shape_in_every_format() {
        let r = report(Listing { top: 3, all: false }, false);
        assert_eq!(r.ranked.len(), 3);
        assert!(r.rejected.is_none());
        assert_eq!(r.params.len(), PARAM_NAMES.len());

        let text = written(&mut TextWriter, &r);
        assert!(text.starts_with("GEMM 4096x4096x4096 fp16 on "), "{text}");
        assert!(text.contains(&format!("({} feasible configs)", r.feasible_configs)));
        assert_eq!(text.lines().count(), 3 + 3);

        let csv = written(&mut CsvWriter, &r);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], csv::CONFIG_CSV_HEADER);
        assert_eq!(lines.len(), 1 + 3);
        assert!(lines[1].starts_with("1,") && lines[1].ends_with(",true,"));

        let v: serde_json::Value =
            serde_json::from_str(&written(&mut JsonWriter::default(), &r)).unwrap();
        assert_eq!(v["ranked"].as_array().unwrap().len(), 3);
        assert_eq!(v["scoring"], r.scoring.name());
        assert_eq!(v["params"].as_object().unwrap().len(), PARAM_NAMES.len());
        assert!(v.get("rejected").is_none());

        let launch: serde_json::Value =
            serde_json::from_str(&written(&mut TritonWriter, &r)).unwrap();
        assert_eq!(launch, triton::launch_json(&r.pick.config));
        assert_eq!(launch.as_object().unwrap().len(), 6);
    }

    #[test]
    fn every_candidate_and_the_walkthrough() {
        let r = report(Listing { top: 1, all: true }, true);
        assert_eq!(r.ranked.len(), r.feasible_configs);
        let rejected = r.rejected.as_ref().unwrap();
        let walk = r.walkthrough.as_deref().unwrap();
        assert!(walk.starts_with("== Hardware parameters"), "{walk}");

        let text = written(&mut TextWriter, &r);
        assert!(text.starts_with(walk), "the walk-through leads the text");
        assert!(TextWriter.prints_walkthrough() && !CsvWriter.prints_walkthrough());
        if !rejected.is_empty() {
            assert!(text.contains(&format!("rejected ({}):", rejected.len())));
        }
        let csv = written(&mut CsvWriter, &r);
        assert_eq!(csv.lines().count(), 1 + r.ranked.len() + rejected.len());
        let v: serde_json::Value =
            serde_json::from_str(&written(&mut JsonWriter::default(), &r)).unwrap();
        assert_eq!(v["rejected"].as_array().unwrap().len(), rejected.len());
    }

    #[test]
    fn batches_stream_rows() {
        let r = report(Listing { top: 1, all: false }, false);
        let row = BatchRow {
            problem: r.problem,
            rank: None,
            pick: r.pick.clone(),
            kernel: r.kernel,
            columns: r.columns,
        };
        let run = |w: &mut dyn SelectionWriter| {
            let mut out = Vec::new();
            w.begin_batch(&mut out, false, Columns::PLAIN).unwrap();
            w.batch_row(&mut out, &row).unwrap();
            let after_row = out.len();
            w.batch_row(&mut out, &row).unwrap();
            w.end_batch(&mut out).unwrap();
            (after_row, String::from_utf8(out).unwrap())
        };
        let (_, csv) = run(&mut CsvWriter);
        assert_eq!(csv.lines().next(), Some(csv::BATCH_CSV_HEADER));
        assert_eq!(csv.lines().nth(1), Some(csv::batch_row_csv(&row).as_str()));
        assert_eq!(csv.lines().count(), 3);
        let (_, text) = run(&mut TextWriter);
        assert_eq!(text.lines().count(), 3);
        assert!(text
            .lines()
            .nth(1)
            .unwrap()
            .contains(&row.pick.config.to_string()));
        let (_, triton) = run(&mut TritonWriter);
        assert_eq!(triton.lines().count(), 2);
        let (after_row, json) = run(&mut JsonWriter::default());
        assert!(after_row > 0, "json writes a row as it comes");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 2);
        assert_eq!(v[0], json::batch_row_json(&row));
        // byte for byte the pretty-printed array of the rows, as when they were kept
        let whole = serde_json::to_string_pretty(&v).unwrap();
        assert_eq!(json, format!("{whole}\n"));
        let mut empty = Vec::new();
        let mut w = JsonWriter::default();
        w.begin_batch(&mut empty, false, Columns::PLAIN).unwrap();
        w.end_batch(&mut empty).unwrap();
        assert_eq!(empty, b"[]\n");
    }

    #[test]
    fn ranked_batch_rows_carry_their_rank() {
        let r = report(Listing { top: 2, all: false }, false);
        let row = BatchRow {
            problem: r.problem,
            rank: Some(2),
            pick: r.ranked[1].clone(),
            kernel: r.kernel,
            columns: r.columns,
        };
        let csv = csv::batch_row_csv(&row);
        assert!(csv.starts_with("4096,4096,4096,fp16,2,"), "{csv}");
        assert_eq!(
            csv.split(',').count(),
            csv::RANKED_BATCH_CSV_HEADER.split(',').count()
        );
        let line = text::batch_line(&row);
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[4], "2", "{line}");
        assert_eq!(
            text::ranked_batch_header(Columns::PLAIN)
                .split_whitespace()
                .nth(4),
            Some("rank")
        );
        let v = json::batch_row_json(&row);
        assert_eq!(v["rank"], 2);
        assert_eq!(v["config"], json::ranked_json(&r.ranked[1], Columns::PLAIN));
        assert!(v.get("pick").is_none());
        assert!(!TritonWriter.ranks_batches() && CsvWriter.ranks_batches());
    }
}
