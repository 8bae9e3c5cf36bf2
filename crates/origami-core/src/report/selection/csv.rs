//! `--format csv`: one shape as a table of its ranked configs (and rejected ones with
//! `--all`); a batch as one row per shape (N ranked rows with `--top N`), streamed as the
//! shapes are selected. A family whose kernel takes compile-time switches (`triton-tma`)
//! adds WARP_SPECIALIZE, FLATTEN and EPILOGUE_SUBTILE after num_stages; `triton-auto`
//! adds them and a family column (first in a shape's table, after dtype in a batch). Every
//! other family's columns are the ones below, unchanged.

use std::io::{self, Write};

use super::{BatchRow, Columns, SelectionReport, SelectionWriter};
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

/// The switch columns, after num_stages (the kernel's constexpr names).
const SWITCH_COLUMNS: &str = "WARP_SPECIALIZE,FLATTEN,EPILOGUE_SUBTILE";

/// A header with the columns of `columns` added: the switches after num_stages, a family
/// column after `family_after` (or first, when that is empty).
fn header(plain: &str, columns: Columns, family_after: &str) -> String {
    let mut h = String::new();
    if columns.family && family_after.is_empty() {
        h.push_str("family,");
    }
    for (i, name) in plain.split(',').enumerate() {
        if i > 0 {
            h.push(',');
        }
        h.push_str(name);
        if columns.family && name == family_after {
            h.push_str(",family");
        }
        if columns.switches && name == "num_stages" {
            h.push(',');
            h.push_str(SWITCH_COLUMNS);
        }
        if columns.split_k && name == "num_stages" {
            h.push_str(",SPLIT_K,STREAM_K,SWAP");
        }
    }
    if columns.energy {
        h.push_str(ENERGY_COLUMNS);
    }
    h
}

/// The energy columns, last (`columns.energy`).
const ENERGY_COLUMNS: &str = ",sustained_us,energy_mj,power_w,power_capped";

/// A config's energy fields (empty where it was not priced), or nothing.
fn energy_fields(r: &Ranked, columns: Columns) -> String {
    match (columns.energy, &r.energy) {
        (false, _) => String::new(),
        (true, Some(e)) => format!(
            ",{:.3},{:.5},{:.1},{}",
            e.sustained_us, e.energy_mj, e.power_w, e.capped
        ),
        (true, None) => ",,,,".into(),
    }
}

/// The header of a shape's config table.
pub fn config_csv_header(columns: Columns) -> String {
    header(CONFIG_CSV_HEADER, columns, "")
}

/// The header of a batch (`ranked`: with `--top`).
pub fn batch_csv_header(ranked: bool, columns: Columns) -> String {
    let plain = if ranked {
        RANKED_BATCH_CSV_HEADER
    } else {
        BATCH_CSV_HEADER
    };
    header(plain, columns, "dtype")
}

/// Writes CSV.
#[derive(Debug, Default)]
pub struct CsvWriter;

/// BLOCK_SIZE_M, N, K, GROUP_SIZE_M, num_warps, num_stages (and the switches, with
/// `columns.switches`; SPLIT_K, STREAM_K and SWAP with `columns.split_k`) as CSV fields.
fn config_fields(c: &Config, columns: Columns) -> String {
    let mut f = format!(
        "{},{},{},{},{},{}",
        c.block_m, c.block_n, c.block_k, c.group_m, c.num_warps, c.num_stages
    );
    if columns.switches {
        let s = c.switches;
        f.push_str(&format!(
            ",{},{},{}",
            s.warp_specialize, s.flatten, s.epilogue_subtile
        ));
    }
    if columns.split_k {
        f.push_str(&format!(
            ",{},{},{}",
            c.split_k, c.stream_k, c.switches.swap
        ));
    }
    f
}

fn config_row(rank: Option<usize>, r: &Ranked, report: &SelectionReport) -> String {
    let family = if report.columns.family {
        format!("{},", report.kernel.family)
    } else {
        String::new()
    };
    format!(
        "{family}{},{},{:.1},{:.3},{},{},{},{}{}",
        rank.map(|x| x.to_string()).unwrap_or_default(),
        config_fields(&r.config, report.columns),
        r.latency_cycles,
        r.latency_us,
        r.smem_bytes,
        r.registers.map(|x| x.to_string()).unwrap_or_default(),
        r.rejected.is_none(),
        r.rejected.as_deref().unwrap_or("").replace(',', ";"),
        energy_fields(r, report.columns),
    )
}

/// The config table of one shape (ranked configs, then rejected ones with `--all`).
pub fn report_csv(r: &SelectionReport) -> String {
    let mut out = config_csv_header(r.columns);
    out.push('\n');
    for (i, c) in r.ranked.iter().enumerate() {
        out.push_str(&config_row(Some(i + 1), c, r));
        out.push('\n');
    }
    for c in r.rejected.iter().flatten() {
        out.push_str(&config_row(None, c, r));
        out.push('\n');
    }
    out
}

/// One batch CSV row (with its family after the dtype, for a set, and its rank when it
/// has one).
pub fn batch_row_csv(row: &BatchRow) -> String {
    let p = &row.problem;
    let r = &row.pick;
    let family = if row.columns.family {
        format!(",{}", row.kernel.family)
    } else {
        String::new()
    };
    let rank = row.rank.map(|x| format!(",{x}")).unwrap_or_default();
    format!(
        "{},{},{},{}{family}{rank},{},{:.1},{:.3}{}",
        p.m,
        p.n,
        p.k,
        p.dtype,
        config_fields(&r.config, row.columns),
        r.latency_cycles,
        r.latency_us,
        energy_fields(r, row.columns)
    )
}

impl SelectionWriter for CsvWriter {
    fn begin_batch(
        &mut self,
        out: &mut dyn Write,
        ranked: bool,
        columns: Columns,
    ) -> io::Result<()> {
        writeln!(out, "{}", batch_csv_header(ranked, columns))
    }

    fn batch_row(&mut self, out: &mut dyn Write, row: &BatchRow) -> io::Result<()> {
        writeln!(out, "{}", batch_row_csv(row))
    }

    fn single(&mut self, out: &mut dyn Write, report: &SelectionReport) -> io::Result<()> {
        writeln!(out, "{}", report_csv(report).trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_gain_columns_only_where_asked() {
        assert_eq!(config_csv_header(Columns::PLAIN), CONFIG_CSV_HEADER);
        assert_eq!(batch_csv_header(false, Columns::PLAIN), BATCH_CSV_HEADER);
        assert_eq!(
            batch_csv_header(true, Columns::PLAIN),
            RANKED_BATCH_CSV_HEADER
        );
        let tma = Columns {
            switches: true,
            named_launch: true,
            config_width: 29,
            ..Columns::PLAIN
        };
        assert!(config_csv_header(tma).starts_with(
            "rank,BLOCK_SIZE_M,BLOCK_SIZE_N,BLOCK_SIZE_K,GROUP_SIZE_M,num_warps,num_stages,WARP_SPECIALIZE,FLATTEN,EPILOGUE_SUBTILE,predicted_cycles,"
        ));
        let auto = Columns {
            family: true,
            ..tma
        };
        assert!(config_csv_header(auto).starts_with("family,rank,"));
        assert!(batch_csv_header(true, auto).starts_with("M,N,K,dtype,family,rank,BLOCK_SIZE_M,"));
        assert_eq!(
            batch_csv_header(false, auto).split(',').count(),
            BATCH_CSV_HEADER.split(',').count() + 4
        );
        // the hopper family's launch columns: its decomposition and operand order
        let hopper = Columns {
            split_k: true,
            ..Columns::PLAIN
        };
        assert!(config_csv_header(hopper).contains(",num_stages,SPLIT_K,STREAM_K,SWAP,"));
        let c = crate::model::problem::parse_config("128x112x64,g16,w12,s7,swap,k2").unwrap();
        assert_eq!(config_fields(&c, hopper), "128,112,64,16,12,7,2,false,true");
        assert_eq!(config_fields(&c, Columns::PLAIN), "128,112,64,16,12,7");
    }
}
