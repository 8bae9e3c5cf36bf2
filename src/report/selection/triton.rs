//! `--format triton`: the keyword arguments of a Triton launch of the pick, one compact
//! JSON object per shape (the pick only: a batch with `--top` is refused).

use std::io::{self, Write};

use serde_json::{json, Value};

use super::{BatchRow, SelectionReport, SelectionWriter};
use crate::model::Config;

/// The keys a Triton launch takes, for one config.
pub fn launch_json(c: &Config) -> Value {
    json!({
        "BLOCK_SIZE_M": c.block_m,
        "BLOCK_SIZE_N": c.block_n,
        "BLOCK_SIZE_K": c.block_k,
        "GROUP_SIZE_M": c.group_m,
        "num_warps": c.num_warps,
        "num_stages": c.num_stages,
    })
}

/// Writes one launch line per shape.
#[derive(Debug, Default)]
pub struct TritonWriter;

impl SelectionWriter for TritonWriter {
    /// A launch line has no place for the shape or a rank: one pick per shape.
    fn ranks_batches(&self) -> bool {
        false
    }

    fn batch_row(&mut self, out: &mut dyn Write, row: &BatchRow) -> io::Result<()> {
        writeln!(out, "{}", launch_json(&row.pick.config))
    }

    fn single(&mut self, out: &mut dyn Write, report: &SelectionReport) -> io::Result<()> {
        writeln!(out, "{}", launch_json(&report.pick.config))
    }
}
