//! `--format json`: the whole report of one shape as one object; a batch as one array of
//! `{problem, pick}` objects (`{problem, rank, config}` with `--top`), streamed: each
//! element is written as its shape is selected, laid out as `serde_json`'s pretty printer
//! lays out the whole array, so memory does not grow with the batch. A family whose
//! kernel takes compile-time switches (`triton-tma`) gives every config its
//! WARP_SPECIALIZE, FLATTEN and EPILOGUE_SUBTILE; `triton-auto` adds the family of each
//! batch row, and to a shape's object the choice (`"auto"`: every member's pick or why it
//! took no part).

use std::io::{self, Write};

use serde_json::{json, Map, Value};

use super::triton::{launch_json, switch_fields};
use super::{AutoSummary, BatchRow, Columns, SelectionReport, SelectionWriter, TieredValue};
use crate::model::select::Ranked;
use crate::model::Problem;

/// Writes JSON; counts a batch's rows (the separators and an empty batch's `[]` depend on
/// it).
#[derive(Debug, Default)]
pub struct JsonWriter {
    rows: usize,
}

fn problem_json(p: &Problem) -> Value {
    json!({"M": p.m, "N": p.n, "K": p.k, "dtype": p.dtype.name()})
}

/// One config with its prediction (and its rejection reason, if any); its switches as
/// fields with `columns.switches`.
pub fn ranked_json(r: &Ranked, columns: Columns) -> Value {
    let mut v = launch_json(&r.config);
    let o = v.as_object_mut().expect("object");
    if columns.switches {
        switch_fields(o, &r.config);
    }
    if columns.split_k {
        o.insert("SPLIT_K".into(), serde_json::json!(r.config.split_k));
        o.insert("STREAM_K".into(), serde_json::json!(r.config.stream_k));
        o.insert("SWAP".into(), serde_json::json!(r.config.switches.swap));
    }
    o.insert("predicted_cycles".into(), json!(r.latency_cycles));
    o.insert("predicted_us".into(), json!(r.latency_us));
    o.insert("smem_bytes".into(), json!(r.smem_bytes));
    o.insert("registers".into(), json!(r.registers));
    if let Some(why) = &r.rejected {
        o.insert("rejected".into(), json!(why));
    }
    if let Some(e) = &r.energy {
        o.insert("energy".into(), json!(e));
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

/// A set's choice: the set, the family chosen, every member's pick or reason.
fn auto_json(a: &AutoSummary, columns: Columns) -> Value {
    let entrants: Vec<Value> = a
        .entrants
        .iter()
        .map(|e| match &e.outcome {
            Ok(r) => json!({
                "family": e.family,
                "scoring": e.scoring.map(|s| s.name()),
                "pick": ranked_json(r, columns),
                "compared_us": e.compared_us,
            }),
            Err(why) => json!({"family": e.family, "not_run": why}),
        })
        .collect();
    json!({"set": a.set, "chosen": a.chosen, "entrants": entrants})
}

/// The JSON object of one shape's report.
pub fn report_json(r: &SelectionReport) -> Value {
    let mut v = json!({
        "problem": problem_json(&r.problem),
        "gpu": {"name": r.gpu.name, "source": r.gpu.source, "sm_count": r.gpu.sm_count, "sm_clock_mhz": r.gpu.sm_clock_mhz},
        "family": r.family,
        "model": r.model,
        "scoring": r.scoring.name(),
        "pick": ranked_json(&r.pick, r.columns),
        "params": tiered_json(&r.params),
        "constants": tiered_json(&r.constants),
        "phase1_group_m": r.phase1_group_m,
        "phase2": r.phase2,
        "ranked": r.ranked.iter().map(|x| ranked_json(x, r.columns)).collect::<Vec<_>>(),
        "feasible_configs": r.feasible_configs,
    });
    if let Some(rejected) = &r.rejected {
        v["rejected"] = rejected
            .iter()
            .map(|x| ranked_json(x, r.columns))
            .collect::<Vec<_>>()
            .into();
    }
    if let Some(a) = &r.auto {
        v["auto"] = auto_json(a, r.columns);
    }
    if r.columns.named_launch {
        v["kernel"] = json!(r.kernel.triton_kernel);
    }
    if let Some(n) = &r.objective {
        v["objective"] = json!({
            "objective": n.objective.name(),
            "power_limit_w": n.power_limit_w,
            "planned_limit": n.planned_limit,
            "costs_source": n.costs_source,
            "time_pick": n.time_pick.as_ref().map(|t| ranked_json(t, r.columns)),
        });
    }
    v
}

/// The JSON object of one batch row: the pick, or the config at its rank.
/// With a family set (`triton-auto`), the row names its family.
pub fn batch_row_json(row: &BatchRow) -> Value {
    let config = ranked_json(&row.pick, row.columns);
    let mut v = match row.rank {
        None => json!({"problem": problem_json(&row.problem), "pick": config}),
        Some(rank) => json!({
            "problem": problem_json(&row.problem),
            "rank": rank,
            "config": config,
        }),
    };
    if row.columns.family {
        v["family"] = json!(row.kernel.family);
    }
    v
}

/// One element of a pretty-printed array: `v` pretty-printed, every line indented by the
/// two spaces of the array's level (strings hold no raw newline: JSON escapes it).
fn array_element(v: &Value) -> io::Result<String> {
    let text = serde_json::to_string_pretty(v).map_err(io::Error::other)?;
    let mut out = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("  ");
        out.push_str(line);
    }
    Ok(out)
}

fn write_pretty(out: &mut dyn Write, v: &Value) -> io::Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(io::Error::other)?;
    writeln!(out, "{text}")
}

impl SelectionWriter for JsonWriter {
    fn begin_batch(
        &mut self,
        _out: &mut dyn Write,
        _ranked: bool,
        _columns: Columns,
    ) -> io::Result<()> {
        self.rows = 0;
        Ok(())
    }

    fn batch_row(&mut self, out: &mut dyn Write, row: &BatchRow) -> io::Result<()> {
        let sep = if self.rows == 0 { "[\n" } else { ",\n" };
        self.rows += 1;
        write!(out, "{sep}{}", array_element(&batch_row_json(row))?)
    }

    fn end_batch(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.rows == 0 {
            writeln!(out, "[]")
        } else {
            writeln!(out, "\n]")
        }
    }

    fn single(&mut self, out: &mut dyn Write, report: &SelectionReport) -> io::Result<()> {
        write_pretty(out, &report_json(report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streamed array is byte for byte what the pretty printer makes of the whole
    /// array, for no, one and several elements.
    #[test]
    fn streamed_elements_lay_out_like_the_whole_array() {
        let element = |i: u64| json!({"problem": {"M": i, "dtype": "fp16"}, "pick": {"a": [1, 2], "s": "x\ny", "e": {}}});
        for n in [0u64, 1, 3] {
            let all: Vec<Value> = (0..n).map(element).collect();
            let whole = format!(
                "{}\n",
                serde_json::to_string_pretty(&Value::Array(all)).unwrap()
            );
            let mut streamed = String::new();
            for i in 0..n {
                streamed.push_str(if i == 0 { "[\n" } else { ",\n" });
                streamed.push_str(&array_element(&element(i)).unwrap());
            }
            streamed.push_str(if n == 0 { "[]\n" } else { "\n]\n" });
            assert_eq!(streamed, whole, "{n} elements");
        }
    }
}
