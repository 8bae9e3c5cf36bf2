//! `--format csv`: one shape as a table of its ranked configs (and rejected ones with
//! `--all`); a batch as one row per shape (N ranked rows with `--top N`), streamed as the
//! shapes are selected.

use std::io::{self, Write};

use super::{BatchRow, SelectionReport, SelectionWriter};
use crate::model::select::Ranked;
use crate::model::Config;

/// CSV header of the per-config listing.
pub const CONFIG_CSV_HEADER: &str =
    "rank,BLOCK_SIZE_M,BLOCK_SIZE_N,BLOCK_SIZE_K,GROUP_SIZE_M,num_warps,num_stages,predicted_cycles,predicted_us,smem_bytes,registers,feasible,reason";

/// Header of the batch CSV (one row per shape).
pub const BATCH_CSV_HEADER: &str =
    "M,N,K,dtype,BLOCK_SIZE_M,BLOCK_SIZE_N,BLOCK_SIZE_K,GROUP_SIZE_M,num_warps,num_stages,predicted_cycles,predicted_us";

/// Header of the ranked batch CSV (`--top N`: N rows per shape, a rank column).
pub const RANKED_BATCH_CSV_HEADER: &str =
    "M,N,K,dtype,rank,BLOCK_SIZE_M,BLOCK_SIZE_N,BLOCK_SIZE_K,GROUP_SIZE_M,num_warps,num_stages,predicted_cycles,predicted_us";

/// Writes CSV.
#[derive(Debug, Default)]
pub struct CsvWriter;

/// BLOCK_SIZE_M, N, K, GROUP_SIZE_M, num_warps, num_stages as CSV fields.
fn config_fields(c: &Config) -> String {
    format!(
        "{},{},{},{},{},{}",
        c.block_m, c.block_n, c.block_k, c.group_m, c.num_warps, c.num_stages
    )
}

fn config_row(rank: Option<usize>, r: &Ranked) -> String {
    format!(
        "{},{},{:.1},{:.3},{},{},{},{}",
        rank.map(|x| x.to_string()).unwrap_or_default(),
        config_fields(&r.config),
        r.latency_cycles,
        r.latency_us,
        r.smem_bytes,
        r.registers.map(|x| x.to_string()).unwrap_or_default(),
        r.rejected.is_none(),
        r.rejected.as_deref().unwrap_or("").replace(',', ";"),
    )
}

/// The config table of one shape (ranked configs, then rejected ones with `--all`).
pub fn report_csv(r: &SelectionReport) -> String {
    let mut out = String::from(CONFIG_CSV_HEADER);
    out.push('\n');
    for (i, c) in r.ranked.iter().enumerate() {
        out.push_str(&config_row(Some(i + 1), c));
        out.push('\n');
    }
    for c in r.rejected.iter().flatten() {
        out.push_str(&config_row(None, c));
        out.push('\n');
    }
    out
}

/// One batch CSV row (with its rank after the dtype when it has one).
pub fn batch_row_csv(row: &BatchRow) -> String {
    let p = &row.problem;
    let r = &row.pick;
    let rank = row.rank.map(|x| format!(",{x}")).unwrap_or_default();
    format!(
        "{},{},{},{}{rank},{},{:.1},{:.3}",
        p.m,
        p.n,
        p.k,
        p.dtype,
        config_fields(&r.config),
        r.latency_cycles,
        r.latency_us
    )
}

impl SelectionWriter for CsvWriter {
    fn begin_batch(&mut self, out: &mut dyn Write, ranked: bool) -> io::Result<()> {
        if ranked {
            writeln!(out, "{RANKED_BATCH_CSV_HEADER}")
        } else {
            writeln!(out, "{BATCH_CSV_HEADER}")
        }
    }

    fn batch_row(&mut self, out: &mut dyn Write, row: &BatchRow) -> io::Result<()> {
        writeln!(out, "{}", batch_row_csv(row))
    }

    fn single(&mut self, out: &mut dyn Write, report: &SelectionReport) -> io::Result<()> {
        writeln!(out, "{}", report_csv(report).trim_end())
    }
}
