//! `origami-select --pareto`: each shape's predicted time/energy Pareto front under a
//! power limit (`model::objective::pareto`), as text (one block per shape), CSV (one row
//! per config of a front) or JSON (one object per shape).

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::model::objective::Priced;
use crate::pick::ParetoShape;

/// The CSV header of the fronts.
pub const PARETO_CSV_HEADER: &str = "M,N,K,dtype,family,power_limit_w,front_rank,config,predicted_us,full_clock_us,sustained_us,energy_mj,power_w,power_capped";

/// One shape's front as CSV rows (no header).
pub fn pareto_csv(s: &ParetoShape) -> String {
    let p = &s.problem;
    let mut o = String::new();
    for (i, x) in s.front.iter().enumerate() {
        let e = &x.energy;
        let _ = writeln!(
            o,
            "{},{},{},{},{},{:.1},{},\"{}\",{:.3},{:.3},{:.3},{:.5},{:.1},{}",
            p.m,
            p.n,
            p.k,
            p.dtype,
            s.family,
            s.power_limit_w,
            i + 1,
            x.config(),
            x.ranked.latency_us,
            e.time_us,
            e.sustained_us,
            e.energy_mj,
            e.power_w,
            e.capped
        );
    }
    o
}

/// One shape's front as a text block.
pub fn pareto_text(s: &ParetoShape) -> String {
    let p = &s.problem;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "GEMM {}x{}x{} {}, family {}: time/energy front under {:.0} W ({} of {} configs)",
        p.m,
        p.n,
        p.k,
        p.dtype,
        s.family,
        s.power_limit_w,
        s.front.len(),
        s.all.len()
    );
    let w = s
        .front
        .iter()
        .map(|x| x.config().to_string().len())
        .fold(22, usize::max);
    let _ = writeln!(
        o,
        "{:>4}  {:<w$} {:>12} {:>12} {:>10} {:>7}",
        "rank", "config", "sustained_us", "full_clk_us", "energy_mJ", "power_W"
    );
    for (i, x) in s.front.iter().enumerate() {
        let e = &x.energy;
        let _ = writeln!(
            o,
            "{:>4}  {:<w$} {:>12.2} {:>12.2} {:>10.4} {:>7.1}{}",
            i + 1,
            x.config().to_string(),
            e.sustained_us,
            e.time_us,
            e.energy_mj,
            e.power_w,
            if e.capped { "  capped" } else { "" }
        );
    }
    o
}

fn priced_json(x: &Priced) -> Value {
    json!({"config": x.config().to_string(), "predicted_us": x.ranked.latency_us, "energy": x.energy})
}

/// One shape's front as a JSON object.
pub fn pareto_json(s: &ParetoShape) -> Value {
    let p = &s.problem;
    json!({
        "problem": {"M": p.m, "N": p.n, "K": p.k, "dtype": p.dtype.name()},
        "family": s.family,
        "power_limit_w": s.power_limit_w,
        "configs_priced": s.all.len(),
        "front": s.front.iter().map(priced_json).collect::<Vec<_>>(),
    })
}
