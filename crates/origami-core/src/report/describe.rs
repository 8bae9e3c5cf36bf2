//! `origami-select --describe`: what the model would use, with no shape: the GPU
//! description, the five hardware parameters with their tiers, and every model constant
//! of the table (`constants`) with its group, unit, default, allowed range, the
//! value in force and where that value came from. The JSON form is what scripts read
//! instead of restating the Rust side's numbers and names.

use serde_json::{json, Value};

use crate::constants::{ConstantDef, ValueRange, CONSTANTS};
use crate::hw::resolve::Tier;
use crate::setup::Setup;

use super::selection::{params, TieredValue};

/// One constant of the table as the setup has it.
#[derive(Debug, Clone)]
pub struct ConstantInForce {
    pub def: &'static ConstantDef,
    pub value: f64,
    /// Where the value came from; `None` for the table's default.
    pub tier: Option<Tier>,
}

/// Everything `--describe` prints.
#[derive(Debug, Clone)]
pub struct Description {
    pub gpu: crate::hw::GpuDesc,
    pub gpu_source: String,
    pub family: &'static str,
    pub model: &'static str,
    pub params: Vec<TieredValue>,
    pub constants: Vec<ConstantInForce>,
}

impl Description {
    pub fn of(setup: &Setup) -> Description {
        let res = &setup.resolved;
        let constants = CONSTANTS
            .iter()
            .map(|def| ConstantInForce {
                def,
                value: setup.constants.get(def.name).unwrap_or(def.default),
                tier: res.constants.get(def.name).map(|(_, t)| t.clone()),
            })
            .collect();
        Description {
            gpu: res.gpu.clone(),
            gpu_source: res.gpu_source.clone(),
            family: setup.family.name(),
            model: setup.variant.name(),
            params: params(res),
            constants,
        }
    }
}

/// A bound as JSON: a number, or null for an infinite one.
fn bound(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

fn range_json(r: &ValueRange) -> Value {
    match *r {
        ValueRange::Switch => json!({"values": [0, 1]}),
        ValueRange::OffOrAtLeast { min } => json!({
            "values": [0],
            "min": bound(min),
            "min_inclusive": true,
            "max": Value::Null,
            "max_inclusive": false,
        }),
        ValueRange::Interval {
            min,
            min_inclusive,
            max,
            max_inclusive,
        } => json!({
            "min": bound(min),
            "min_inclusive": min_inclusive,
            "max": bound(max),
            "max_inclusive": max_inclusive,
        }),
    }
}

/// The range in interval notation: `[0, inf)`, `(0, 1]`, `{0, 1}`.
pub fn range_text(r: &ValueRange) -> String {
    match *r {
        ValueRange::Switch => "{0, 1}".to_string(),
        ValueRange::OffOrAtLeast { min } => format!("{{0}} or [{min}, inf)"),
        ValueRange::Interval {
            min,
            min_inclusive,
            max,
            max_inclusive,
        } => format!(
            "{}{}, {}{}",
            if min_inclusive { '[' } else { '(' },
            min,
            if max.is_finite() {
                max.to_string()
            } else {
                "inf".to_string()
            },
            if max_inclusive { ']' } else { ')' }
        ),
    }
}

/// The JSON document.
pub fn describe_json(d: &Description) -> Value {
    let params: serde_json::Map<String, Value> = d
        .params
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                json!({"value": p.value, "tier": p.tier.label(), "source": p.tier.to_string()}),
            )
        })
        .collect();
    let constants: Vec<Value> = d
        .constants
        .iter()
        .map(|c| {
            json!({
                "name": c.def.name,
                "group": c.def.group.name(),
                "unit": c.def.unit,
                "default": c.def.default,
                "range": range_json(&c.def.range),
                "value": c.value,
                "tier": c.tier.as_ref().map_or("default", Tier::label),
                "source": c.tier.as_ref().map_or_else(|| "the table's default".to_string(), Tier::to_string),
                "doc": c.def.doc(),
            })
        })
        .collect();
    json!({
        "gpu": d.gpu,
        "gpu_source": d.gpu_source,
        "family": d.family,
        "model": d.model,
        "params": params,
        "constants": constants,
    })
}

/// The text for people: one line per parameter and per constant.
pub fn describe_text(d: &Description) -> String {
    let g = &d.gpu;
    let mut o = format!(
        "{} ({}): sm_{}{}, {} SMs, L2 {} bytes, shared memory {} bytes per block, {} registers per SM, SM clock {} MHz\nfamily {}, model {}\n\nhardware parameters\n",
        g.name,
        d.gpu_source,
        g.compute_capability[0],
        g.compute_capability[1],
        g.sm_count,
        g.l2_bytes,
        g.smem_per_block_optin_bytes,
        g.registers_per_sm,
        g.sm_clock_mhz,
        d.family,
        d.model
    );
    for p in &d.params {
        o.push_str(&format!(
            "  {:<22} {:>22}  [{}]\n",
            p.name,
            p.value.map_or("-".to_string(), |v| format!("{v}")),
            p.tier
        ));
    }
    o.push_str(&format!(
        "\nmodel constants\n  {:<28} {:<10} {:>12} {:>12}  {:<16} {:<14} tier\n",
        "name", "group", "value", "default", "range", "unit"
    ));
    for c in &d.constants {
        o.push_str(&format!(
            "  {:<28} {:<10} {:>12} {:>12}  {:<16} {:<14} {}\n",
            c.def.name,
            c.def.group.name(),
            format!("{}", c.value),
            format!("{}", c.def.default),
            range_text(&c.def.range),
            c.def.unit,
            c.tier.as_ref().map_or("default", Tier::label)
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::{setup, SetupRequest};

    fn described(gpu: &str, family: &str, no_fitted: bool) -> Description {
        Description::of(
            &setup(&SetupRequest {
                device: None,
                gpu_name: Some(gpu.into()),
                override_file: None,
                family: family.into(),
                model: "origami".into(),
                no_fitted,
                calibration_only: false,
            })
            .unwrap(),
        )
    }

    #[test]
    fn every_constant_is_listed_with_its_tier() {
        let d = described("h200", "triton", false);
        assert_eq!(d.constants.len(), CONSTANTS.len());
        let tp = d
            .constants
            .iter()
            .find(|c| c.def.name == "throughput_model")
            .unwrap();
        assert_eq!(tp.value, 1.0);
        assert_eq!(tp.tier.as_ref().map(Tier::label), Some("fitted"));
        let published = described("h200", "triton", true);
        assert!(published.constants.iter().all(|c| c.tier.is_none()));
        assert!(published.constants.iter().all(|c| c.value == c.def.default));
    }

    #[test]
    fn json_names_the_gpu_and_every_range() {
        let j = describe_json(&described("a100", "origami", false));
        assert_eq!(j["gpu"]["sm_count"], 108);
        assert_eq!(j["params"]["l2_perf_ratio"]["tier"], "preset");
        let tie = j["constants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "tie_band")
            .unwrap();
        assert_eq!(tie["range"]["max"], 1.0);
        assert_eq!(tie["tier"], "default");
        assert!(describe_text(&described("a100", "origami", false)).contains("tie_band"));
    }

    #[test]
    fn ranges_in_interval_notation() {
        assert_eq!(range_text(&ValueRange::NON_NEGATIVE), "[0, inf)");
        assert_eq!(range_text(&ValueRange::POSITIVE), "(0, inf)");
        assert_eq!(range_text(&ValueRange::Switch), "{0, 1}");
        assert_eq!(
            range_text(&ValueRange::OFF_OR_AT_LEAST_ONE),
            "{0} or [1, inf)"
        );
    }
}
