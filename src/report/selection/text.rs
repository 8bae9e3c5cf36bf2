//! `--format text`: one shape as a headed table of its ranked configs, after the
//! `--explain` walk-through when asked; a batch as one aligned line per shape (N ranked
//! lines with `--top N`).

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{BatchRow, SelectionReport, SelectionWriter};

/// Writes text for people.
#[derive(Debug, Default)]
pub struct TextWriter;

/// The header line of a batch.
pub fn batch_header() -> String {
    format!(
        "{:>8} {:>8} {:>8} {:>5}  {:<22} {:>12}",
        "M", "N", "K", "dtype", "pick", "predicted_us"
    )
}

/// The header line of a ranked batch (`--top N`): a rank column, the config at that rank.
pub fn ranked_batch_header() -> String {
    format!(
        "{:>8} {:>8} {:>8} {:>5} {:>4}  {:<22} {:>12}",
        "M", "N", "K", "dtype", "rank", "config", "predicted_us"
    )
}

/// One batch line (with its rank after the dtype when it has one).
pub fn batch_line(row: &BatchRow) -> String {
    let p = &row.problem;
    let rank = row.rank.map(|x| format!(" {x:>4}")).unwrap_or_default();
    format!(
        "{:>8} {:>8} {:>8} {:>5}{rank}  {:<22} {:>12.2}",
        p.m,
        p.n,
        p.k,
        p.dtype,
        row.pick.config.to_string(),
        row.pick.latency_us
    )
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
    let _ = writeln!(
        o,
        "{:>4}  {:<22} {:>14} {:>10} {:>8} {:>5}",
        "rank", "config", "cycles", "us", "smem", "regs"
    );
    for (i, c) in r.ranked.iter().enumerate() {
        let _ = writeln!(
            o,
            "{:>4}  {:<22} {:>14.0} {:>10.2} {:>8} {:>5}",
            i + 1,
            c.config.to_string(),
            c.latency_cycles,
            c.latency_us,
            c.smem_bytes,
            c.registers
                .map(|x| x.to_string())
                .unwrap_or_else(|| "-".into())
        );
    }
    if let Some(rejected) = r.rejected.as_ref().filter(|v| !v.is_empty()) {
        let _ = writeln!(o, "rejected ({}):", rejected.len());
        for c in rejected {
            let _ = writeln!(
                o,
                "   -  {:<22} {:>14.0} {:>10.2}  {}",
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
    fn begin_batch(&mut self, out: &mut dyn Write, ranked: bool) -> io::Result<()> {
        if ranked {
            writeln!(out, "{}", ranked_batch_header())
        } else {
            writeln!(out, "{}", batch_header())
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
