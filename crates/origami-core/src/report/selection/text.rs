//! `--format text`: one shape as a headed table of its ranked configs, after the
//! `--explain` walk-through when asked; a batch as one aligned line per shape (N ranked
//! lines with `--top N`). The config column is as wide as the longest config of the
//! family's space (22 characters for the families without switches, as before); a family
//! set (`triton-auto`) adds a family column to a batch, and to a shape's report the
//! family chosen and every member's pick or reason.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{AutoSummary, BatchRow, Columns, ObjectiveNote, SelectionReport, SelectionWriter};
use crate::model::select::Ranked;

/// Writes text for people.
#[derive(Debug, Default)]
pub struct TextWriter;

/// Width of the family column of a set's batch ("triton-tma").
const FAMILY_WIDTH: usize = 10;

/// The family column's header, or nothing for a single family.
fn family_head(columns: Columns) -> String {
    if columns.family {
        format!(" {:<FAMILY_WIDTH$}", "family")
    } else {
        String::new()
    }
}

/// The energy columns' header (`columns.energy`), or nothing.
fn energy_head(columns: Columns) -> String {
    if columns.energy {
        format!(
            " {:>12} {:>10} {:>7}",
            "sustained_us", "energy_mJ", "power_W"
        )
    } else {
        String::new()
    }
}

/// A config's energy fields under `columns` ("-" where it was not priced).
fn energy_fields(r: &Ranked, columns: Columns) -> String {
    match (columns.energy, &r.energy) {
        (false, _) => String::new(),
        (true, Some(e)) => format!(
            " {:>12.2} {:>10.4} {:>7.1}",
            e.sustained_us, e.energy_mj, e.power_w
        ),
        (true, None) => format!(" {:>12} {:>10} {:>7}", "-", "-", "-"),
    }
}

/// The header line of a batch.
pub fn batch_header(columns: Columns) -> String {
    let w = columns.config_width;
    format!(
        "{:>8} {:>8} {:>8} {:>5}{}  {:<w$} {:>12}{}",
        "M",
        "N",
        "K",
        "dtype",
        family_head(columns),
        "pick",
        "predicted_us",
        energy_head(columns)
    )
}

/// The header line of a ranked batch (`--top N`): a rank column, the config at that rank.
pub fn ranked_batch_header(columns: Columns) -> String {
    let w = columns.config_width;
    format!(
        "{:>8} {:>8} {:>8} {:>5}{} {:>4}  {:<w$} {:>12}{}",
        "M",
        "N",
        "K",
        "dtype",
        family_head(columns),
        "rank",
        "config",
        "predicted_us",
        energy_head(columns)
    )
}

/// One batch line (with its family after the dtype for a set, and its rank when it has
/// one).
pub fn batch_line(row: &BatchRow) -> String {
    let p = &row.problem;
    let w = row.columns.config_width;
    let family = if row.columns.family {
        format!(" {:<FAMILY_WIDTH$}", row.kernel.family)
    } else {
        String::new()
    };
    let rank = row.rank.map(|x| format!(" {x:>4}")).unwrap_or_default();
    format!(
        "{:>8} {:>8} {:>8} {:>5}{family}{rank}  {:<w$} {:>12.2}{}",
        p.m,
        p.n,
        p.k,
        p.dtype,
        row.pick.config.to_string(),
        row.pick.latency_us,
        energy_fields(&row.pick, row.columns)
    )
}

/// The lines of a set's choice: the family chosen, then each other member's pick (with its
/// time relative to the chosen one's) or why it took no part.
pub fn choice_lines(a: &AutoSummary, chosen_us: f64) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: {} chosen (the lower compared time, the prediction through each family's fitted map, among the kernels that can run the shape)",
        a.set, a.chosen
    );
    let chosen_compared = a
        .entrants
        .iter()
        .find(|e| e.family == a.chosen)
        .and_then(|e| e.compared_us)
        .unwrap_or(chosen_us);
    for e in a.entrants.iter().filter(|e| e.family != a.chosen) {
        let _ = match &e.outcome {
            Ok(r) => writeln!(
                o,
                "  {}: pick {}  predicted {:.2} us, compared {:.2} us ({:.2}x, {} scoring)",
                e.family,
                r.config,
                r.latency_us,
                e.compared_us.unwrap_or(r.latency_us),
                e.compared_us.unwrap_or(r.latency_us) / chosen_compared,
                e.scoring.map_or("-", |s| s.name())
            ),
            Err(why) => writeln!(o, "  {}: not run: {why}", e.family),
        };
    }
    o
}

/// The objective's lines: what ranked the configs, under which limit and costs, the pick's
/// energy, and the model's time pick beside it when the objective chose another config.
pub fn objective_lines(n: &ObjectiveNote, pick: &Ranked) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "objective {}: ranked by the energy model under a power limit of {:.0} W ({}); energy costs from {}",
        n.objective.name(),
        n.power_limit_w,
        if n.planned_limit { "--power-limit" } else { "the GPU's own" },
        n.costs_source
    );
    let line = |label: &str, r: &Ranked| {
        match &r.energy {
        Some(e) => format!(
            "  {label} {}: {:.4} mJ per GEMM, {:.2} us sustained ({:.2} us at full clock), {:.1} W{}\n",
            r.config,
            e.energy_mj,
            e.sustained_us,
            e.time_us,
            e.power_w,
            if e.capped {
                format!(", power-capped (SM clock x{:.2})", e.clock_fraction)
            } else {
                String::new()
            }
        ),
        None => String::new(),
    }
    };
    o.push_str(&line("pick", pick));
    if let Some(t) = &n.time_pick {
        o.push_str(&line("time pick", t));
    }
    o
}

/// The table of one shape: problem and setting, the pick, the ranked configs, and the
/// rejected ones with their reasons when every candidate was asked for.
pub fn report_text(r: &SelectionReport) -> String {
    let p = &r.problem;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "GEMM {}x{}x{} {} on {} ({}), family {}, model {}, {} scoring",
        p.m,
        p.n,
        p.k,
        p.dtype,
        r.gpu.name,
        r.gpu.source,
        r.family,
        r.model,
        r.scoring.name()
    );
    let pick = &r.pick;
    let _ = writeln!(
        o,
        "pick: {}  predicted {:.0} cycles = {:.2} us ({} feasible configs)",
        pick.config, pick.latency_cycles, pick.latency_us, r.feasible_configs
    );
    if let Some(a) = &r.auto {
        o.push_str(&choice_lines(a, pick.latency_us));
    }
    if let Some(n) = &r.objective {
        o.push_str(&objective_lines(n, pick));
    }
    let w = r
        .ranked
        .iter()
        .chain(r.rejected.iter().flatten())
        .map(|c| c.config.to_string().len())
        .fold(r.columns.config_width, usize::max);
    let _ = writeln!(
        o,
        "{:>4}  {:<w$} {:>14} {:>10} {:>8} {:>5}{}",
        "rank",
        "config",
        "cycles",
        "us",
        "smem",
        "regs",
        energy_head(r.columns)
    );
    for (i, c) in r.ranked.iter().enumerate() {
        let _ = writeln!(
            o,
            "{:>4}  {:<w$} {:>14.0} {:>10.2} {:>8} {:>5}{}",
            i + 1,
            c.config.to_string(),
            c.latency_cycles,
            c.latency_us,
            c.smem_bytes,
            c.registers
                .map(|x| x.to_string())
                .unwrap_or_else(|| "-".into()),
            energy_fields(c, r.columns)
        );
    }
    if let Some(rejected) = r.rejected.as_ref().filter(|v| !v.is_empty()) {
        let _ = writeln!(o, "rejected ({}):", rejected.len());
        for c in rejected {
            let _ = writeln!(
                o,
                "   -  {:<w$} {:>14.0} {:>10.2}  {}",
                c.config.to_string(),
                c.latency_cycles,
                c.latency_us,
                c.rejected.as_deref().unwrap_or("")
            );
        }
    }
    o
}

impl SelectionWriter for TextWriter {
    fn begin_batch(
        &mut self,
        out: &mut dyn Write,
        ranked: bool,
        columns: Columns,
    ) -> io::Result<()> {
        if ranked {
            writeln!(out, "{}", ranked_batch_header(columns))
        } else {
            writeln!(out, "{}", batch_header(columns))
        }
    }

    fn batch_row(&mut self, out: &mut dyn Write, row: &BatchRow) -> io::Result<()> {
        writeln!(out, "{}", batch_line(row))
    }

    fn single(&mut self, out: &mut dyn Write, report: &SelectionReport) -> io::Result<()> {
        let mut t = String::new();
        if let Some(w) = &report.walkthrough {
            t.push_str(w);
            t.push('\n');
        }
        t.push_str(&report_text(report));
        writeln!(out, "{}", t.trim_end())
    }

    fn prints_walkthrough(&self) -> bool {
        true
    }
}
