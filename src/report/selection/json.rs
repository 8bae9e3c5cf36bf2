//! `--format json`: the whole report of one shape as one object; a batch as one array of
//! `{problem, pick}` objects, written when the last shape is in.

use std::io::{self, Write};

use serde_json::{json, Map, Value};

use super::triton::launch_json;
use super::{BatchRow, SelectionReport, SelectionWriter, TieredValue};
use crate::model::select::Ranked;
use crate::model::Problem;

/// Writes JSON; keeps a batch's rows until its end.
#[derive(Debug, Default)]
pub struct JsonWriter {
    rows: Vec<Value>,
}

fn problem_json(p: &Problem) -> Value {
    json!({"M": p.m, "N": p.n, "K": p.k, "dtype": p.dtype.name()})
}

/// One config with its prediction (and its rejection reason, if any).
pub fn ranked_json(r: &Ranked) -> Value {
    let mut v = launch_json(&r.config);
    let o = v.as_object_mut().expect("object");
    o.insert("predicted_cycles".into(), json!(r.latency_cycles));
    o.insert("predicted_us".into(), json!(r.latency_us));
    o.insert("smem_bytes".into(), json!(r.smem_bytes));
    o.insert("registers".into(), json!(r.registers));
    if let Some(why) = &r.rejected {
        o.insert("rejected".into(), json!(why));
    }
    v
}

/// Values by name, each with its tier's label and description.
fn tiered_json(values: &[TieredValue]) -> Value {
    let m: Map<String, Value> = values
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                json!({"value": t.value, "tier": t.tier.label(), "source": t.tier.to_string()}),
            )
        })
        .collect();
    Value::Object(m)
}

/// The JSON object of one shape's report.
pub fn report_json(r: &SelectionReport) -> Value {
    let mut v = json!({
        "problem": problem_json(&r.problem),
        "gpu": {"name": r.gpu.name, "source": r.gpu.source, "sm_count": r.gpu.sm_count, "sm_clock_mhz": r.gpu.sm_clock_mhz},
        "family": r.family,
        "model": r.model,
        "scoring": r.scoring.name(),
        "pick": ranked_json(&r.pick),
        "params": tiered_json(&r.params),
        "constants": tiered_json(&r.constants),
        "phase1_group_m": r.phase1_group_m,
        "phase2": r.phase2,
        "ranked": r.ranked.iter().map(ranked_json).collect::<Vec<_>>(),
        "feasible_configs": r.feasible_configs,
    });
    if let Some(rejected) = &r.rejected {
        v["rejected"] = rejected.iter().map(ranked_json).collect::<Vec<_>>().into();
    }
    v
}

/// The JSON object of one batch row.
pub fn batch_row_json(row: &BatchRow) -> Value {
    json!({"problem": problem_json(&row.problem), "pick": ranked_json(&row.pick)})
}

fn write_pretty(out: &mut dyn Write, v: &Value) -> io::Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(io::Error::other)?;
    writeln!(out, "{text}")
}

impl SelectionWriter for JsonWriter {
    fn batch_row(&mut self, _out: &mut dyn Write, row: &BatchRow) -> io::Result<()> {
        self.rows.push(batch_row_json(row));
        Ok(())
    }

    fn end_batch(&mut self, out: &mut dyn Write) -> io::Result<()> {
        write_pretty(out, &Value::Array(std::mem::take(&mut self.rows)))
    }

    fn single(&mut self, out: &mut dyn Write, report: &SelectionReport) -> io::Result<()> {
        write_pretty(out, &report_json(report))
    }
}
