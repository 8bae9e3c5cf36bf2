//! Output of `origami-select`: text for people, JSON/CSV for programs, and the Triton
//! launch dictionary (`--format triton`), for one shape or a batch, plus the `--explain`
//! walk-through in the style of seed 000 appendix A.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::hw::resolve::{Resolved, Tier};
use crate::hw::schema::PARAM_NAMES;
use crate::model::latency::default_group_m;
use crate::model::select::{Ranked, Selection, Selector};
use crate::model::{Config, Problem};

/// The keys a Triton launch takes, for one config.
pub fn triton_launch(c: &Config) -> Value {
    json!({
        "BLOCK_SIZE_M": c.block_m,
        "BLOCK_SIZE_N": c.block_n,
        "BLOCK_SIZE_K": c.block_k,
        "GROUP_SIZE_M": c.group_m,
        "num_warps": c.num_warps,
        "num_stages": c.num_stages,
    })
}

fn problem_json(p: &Problem) -> Value {
    json!({"M": p.m, "N": p.n, "K": p.k, "dtype": p.dtype.name()})
}

fn ranked_json(r: &Ranked) -> Value {
    let mut v = triton_launch(&r.config);
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

/// Each parameter with its value and tier.
pub fn params_json(res: &Resolved) -> Value {
    let mut m = serde_json::Map::new();
    for name in PARAM_NAMES {
        let t = &res.tiers[name];
        m.insert(
            name.into(),
            json!({"value": res.params.get(name), "tier": t.label(), "source": t.to_string()}),
        );
    }
    Value::Object(m)
}

/// The constants that differ from the defaults, with their tiers.
pub fn constants_json(res: &Resolved) -> Value {
    let m: serde_json::Map<String, Value> = res
        .constants
        .iter()
        .map(|(k, (v, t))| {
            (
                k.clone(),
                json!({"value": v, "tier": t.label(), "source": t.to_string()}),
            )
        })
        .collect();
    Value::Object(m)
}

/// How the selector scores configs: "latency" (the Origami latency model per tile) or
/// "throughput" (the SM-throughput model per launch).
pub fn scoring_name(s: &Selector<'_>) -> &'static str {
    s.constants.scoring().name()
}

/// Full JSON of one selection.
pub fn selection_json(
    sel: &Selection,
    s: &Selector<'_>,
    res: &Resolved,
    top: usize,
    all: bool,
) -> Value {
    let pick = &sel.pick;
    let n = if all { usize::MAX } else { top };
    let mut v = json!({
        "problem": problem_json(&sel.problem),
        "gpu": {"name": s.gpu.name, "source": res.gpu_source, "sm_count": s.gpu.sm_count, "sm_clock_mhz": s.gpu.sm_clock_mhz},
        "family": s.family.name(),
        "model": s.variant.name(),
        "scoring": scoring_name(s),
        "pick": ranked_json(pick),
        "params": params_json(res),
        "constants": constants_json(res),
        "phase1_group_m": sel.phase1_group_m,
        "phase2": sel.phase2,
        "ranked": s.ranked(sel, n).iter().map(ranked_json).collect::<Vec<_>>(),
        "feasible_configs": s.feasible_count(),
    });
    if all {
        v["rejected"] = sel
            .rejected
            .iter()
            .map(ranked_json)
            .collect::<Vec<_>>()
            .into();
    }
    v
}

/// CSV header of the per-config listing.
pub const CONFIG_CSV_HEADER: &str =
    "rank,BLOCK_SIZE_M,BLOCK_SIZE_N,BLOCK_SIZE_K,GROUP_SIZE_M,num_warps,num_stages,predicted_cycles,predicted_us,smem_bytes,registers,feasible,reason";

fn config_csv_row(rank: Option<usize>, r: &Ranked) -> String {
    let c = &r.config;
    format!(
        "{},{},{},{},{},{},{},{:.1},{:.3},{},{},{},{}",
        rank.map(|x| x.to_string()).unwrap_or_default(),
        c.block_m,
        c.block_n,
        c.block_k,
        c.group_m,
        c.num_warps,
        c.num_stages,
        r.latency_cycles,
        r.latency_us,
        r.smem_bytes,
        r.registers.map(|x| x.to_string()).unwrap_or_default(),
        r.rejected.is_none(),
        r.rejected.as_deref().unwrap_or("").replace(',', ";"),
    )
}

/// CSV of one selection (ranked configs, then rejected ones with `--all`).
pub fn selection_csv(sel: &Selection, s: &Selector<'_>, top: usize, all: bool) -> String {
    let mut out = String::from(CONFIG_CSV_HEADER);
    out.push('\n');
    let n = if all { usize::MAX } else { top };
    for (i, r) in s.ranked(sel, n).iter().enumerate() {
        out.push_str(&config_csv_row(Some(i + 1), r));
        out.push('\n');
    }
    if all {
        for r in &sel.rejected {
            out.push_str(&config_csv_row(None, r));
            out.push('\n');
        }
    }
    out
}

/// Text table of one selection.
pub fn selection_text(
    sel: &Selection,
    s: &Selector<'_>,
    res: &Resolved,
    top: usize,
    all: bool,
) -> String {
    let p = &sel.problem;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "GEMM {}x{}x{} {} on {} ({}), family {}, model {}, {} scoring",
        p.m,
        p.n,
        p.k,
        p.dtype,
        s.gpu.name,
        res.gpu_source,
        s.family.name(),
        s.variant.name(),
        scoring_name(s)
    );
    let pick = &sel.pick;
    let _ = writeln!(
        o,
        "pick: {}  predicted {:.0} cycles = {:.2} us ({} feasible configs)",
        pick.config,
        pick.latency_cycles,
        pick.latency_us,
        s.feasible_count()
    );
    let n = if all { usize::MAX } else { top };
    let _ = writeln!(
        o,
        "{:>4}  {:<22} {:>14} {:>10} {:>8} {:>5}",
        "rank", "config", "cycles", "us", "smem", "regs"
    );
    for (i, r) in s.ranked(sel, n).iter().enumerate() {
        let _ = writeln!(
            o,
            "{:>4}  {:<22} {:>14.0} {:>10.2} {:>8} {:>5}",
            i + 1,
            r.config.to_string(),
            r.latency_cycles,
            r.latency_us,
            r.smem_bytes,
            r.registers
                .map(|x| x.to_string())
                .unwrap_or_else(|| "-".into())
        );
    }
    if all && !sel.rejected.is_empty() {
        let _ = writeln!(o, "rejected ({}):", sel.rejected.len());
        for r in &sel.rejected {
            let _ = writeln!(
                o,
                "   -  {:<22} {:>14.0} {:>10.2}  {}",
                r.config.to_string(),
                r.latency_cycles,
                r.latency_us,
                r.rejected.as_deref().unwrap_or("")
            );
        }
    }
    o
}

fn tier_line(name: &str, res: &Resolved) -> String {
    let t: &Tier = &res.tiers[name];
    format!(
        "  {:<20} = {:<12} [{}]",
        name,
        fmt_num(res.params.get(name).unwrap_or(f64::NAN)),
        t
    )
}

fn fmt_num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.4}")
    }
}

/// The `--explain` walk-through (seed 000 appendix A) for the pick.
pub fn explain_text(sel: &Selection, s: &Selector<'_>, res: &Resolved) -> String {
    let p = &sel.problem;
    let g = &s.gpu;
    let b = &sel.pick_breakdown;
    let pick = &sel.pick.config;
    let k = &s.constants;
    let mut o = String::new();
    let _ = writeln!(o, "== Hardware parameters ({}) ==", res.gpu_source);
    let _ = writeln!(
        o,
        "  N_SM = {}, L2 = {} bytes, SMEM = {} bytes, SM clock {} MHz",
        g.sm_count, g.l2_bytes, g.smem_per_block_optin_bytes, g.sm_clock_mhz
    );
    let atom = s.family.mma_atom(p.dtype);
    let _ = writeln!(
        o,
        "  MMA atom = m{}n{}k{}, TC_per_SM = {}",
        atom.m, atom.n, atom.k, g.tensor_cores_per_sm
    );
    for name in PARAM_NAMES {
        let _ = writeln!(o, "{}", tier_line(name, res));
    }
    let overridden: Vec<String> = res
        .constants
        .iter()
        .map(|(n, (v, t))| format!("{n}={v} [{t}]"))
        .collect();
    if !overridden.is_empty() {
        let _ = writeln!(o, "  constants overridden: {}", overridden.join(", "));
    }
    let _ = writeln!(
        o,
        "\n== Phase 1: score {} feasible configs of family {} (model {}) ==",
        s.feasible_count(),
        s.family.name(),
        s.variant.name()
    );
    let _ = writeln!(
        o,
        "  default GROUP_SIZE_M = ceil(sqrt({})) = {}",
        g.sm_count,
        default_group_m(g.sm_count)
    );
    let _ = writeln!(
        o,
        "  winner: ({}, {}, {}) with predicted latency {:.0} cycles",
        pick.block_m,
        pick.block_n,
        pick.block_k,
        if s.throughput_model() {
            sel.pick.latency_cycles
        } else {
            b.l_total
        }
    );
    let _ = writeln!(o, "\n[Algorithm 3] Compute latency");
    let _ = writeln!(
        o,
        "  N_MMA = ceil({}/{}) x ceil({}/{}) x ceil({}/{}) = {}",
        pick.block_m, atom.m, pick.block_n, atom.n, pick.block_k, atom.k, b.n_mma
    );
    let _ = writeln!(
        o,
        "  L_MI = mma_latency / TC_per_SM = {:.2} cycles",
        b.l_mma_per_instr
    );
    let _ = writeln!(o, "  L_compute = {:.1} cycles", b.l_compute);
    let _ = writeln!(o, "\n[Algorithm 4] Occupancy");
    let _ = writeln!(
        o,
        "  grid_M = {}, grid_N = {}, total_tiles = {}, active_SMs = {}, num_waves = {}",
        b.grid_m, b.grid_n, b.total_tiles, b.active_sms, b.num_waves
    );
    let _ = writeln!(o, "\n[Algorithm 5] L2 hit rate");
    let _ = writeln!(
        o,
        "  super-group {} x {} tiles, local hit {:.3}, working set {:.0} bytes, L2_hit = {:.3}",
        b.l2.l2_tile_m, b.l2.l2_tile_n, b.l2.local_hit, b.l2.working_set_bytes, b.l2.hit
    );
    let _ = writeln!(o, "\n[Algorithm 7] Memory latency");
    let _ = writeln!(
        o,
        "  load_A = {:.0} B, load_B = {:.0} B, per_SM = {:.0} B, total_load = {:.0} B",
        b.load_a_bytes, b.load_b_bytes, b.per_sm_load_bytes, b.total_load_bytes
    );
    let _ = writeln!(
        o,
        "  L2 path:   fraction {:.3}, L_L2 = {:.0} cycles",
        b.l2_bw_fraction, b.l_l2
    );
    let _ = writeln!(
        o,
        "  DRAM path: fraction {:.3}, load_DRAM = {:.0} B (resident footprint {:.0} B), L_DRAM = {:.0} cycles",
        b.dram_bw_fraction, b.load_dram_bytes, b.resident_footprint_bytes, b.l_dram
    );
    let bound = if b.l_l2 >= b.l_dram {
        "L2-bandwidth-bound"
    } else {
        "DRAM-bound"
    };
    let _ = writeln!(o, "  L_mem = {:.0} cycles ({bound})", b.l_mem);
    let _ = writeln!(
        o,
        "\n[Work utilization]  utilization = {:.6}, penalty = {:.4}",
        b.utilization, b.penalty
    );
    let _ = writeln!(o, "\n[Algorithm 8] Tile latency");
    let _ = writeln!(
        o,
        "  L_prologue = {} x L_mem x penalty x {}^{} = {:.0}",
        k.prologue_factor, k.occupancy_decay, k.occupancy, b.l_prologue
    );
    let _ = writeln!(
        o,
        "  output_bytes = {:.0}, L_epilogue = {:.0}",
        b.output_bytes, b.l_epilogue
    );
    let _ = writeln!(
        o,
        "  num_iter = {}, K-pad penalty = {:.0}",
        b.num_iter, b.k_pad_penalty
    );
    let steady = if b.l_compute >= b.l_mem {
        "compute-bound"
    } else {
        "memory-bound"
    };
    let _ = writeln!(o, "  L_steady = {:.0} ({steady})", b.l_steady);
    let _ = writeln!(
        o,
        "  L_tile = {:.0} x {} + {:.0} + {:.0} x {} + {} + {} x {} = {:.0} cycles",
        b.l_steady,
        b.num_iter,
        b.l_prologue,
        b.l_epilogue,
        k.epilogue_count,
        k.setup_cycles,
        k.loop_overhead_cycles,
        b.num_iter,
        b.l_tile
    );
    let _ = writeln!(
        o,
        "\n[Algorithm 9] L_total = {:.0} x {} waves = {:.0} cycles",
        b.l_tile, b.num_waves, b.l_total
    );
    if let Some(t) = s.throughput_breakdown(
        p,
        &Config {
            group_m: default_group_m(g.sm_count),
            ..*pick
        },
    ) {
        let _ = writeln!(
            o,
            "\n[Throughput model] (throughput_model = 1: this scored every launch; the latency model above is shown for reference)"
        );
        let _ = writeln!(
            o,
            "  launch w{} s{}: {} blocks resident per SM, {} tiles, {} on the busiest SM, {} K iterations",
            pick.num_warps,
            pick.num_stages,
            t.blocks_per_sm,
            t.tiles,
            t.blocks_on_busiest_sm,
            t.k_iters
        );
        let _ = writeln!(
            o,
            "  one iteration of the resident blocks: tensor {:.0}, smem {:.0}, L2 {:.0}, warp chain {:.0}, pipeline {:.0} cycles; bound: {}",
            t.iter_tensor, t.iter_smem, t.iter_l2, t.iter_warp, t.iter_pipeline, t.iter_bound
        );
        let _ = writeln!(
            o,
            "  SM {:.0} cycles, DRAM {:.0} bytes = {:.0} cycles; x tp_time_scale {} = {:.0} cycles",
            t.sm_cycles, t.dram_bytes, t.dram_cycles, k.tp_time_scale, t.total
        );
    } else if sel.pick.latency_cycles != b.l_total {
        let _ = writeln!(
            o,
            "  launch w{} s{} (pipeline depth, tensor-core path): {:.0} cycles",
            pick.num_warps, pick.num_stages, sel.pick.latency_cycles
        );
    }
    let ties = if k.phase2_tie().prefers_larger() {
        "largest"
    } else {
        "smallest"
    };
    let _ = writeln!(
        o,
        "\n== Phase 2: GROUP_SIZE_M (minimum footprint, ties to the {ties}) =="
    );
    let _ = writeln!(o, "  {:>5} {:>6} {:>6} {:>10}", "G", "rows", "cols", "cost");
    for r in &sel.phase2 {
        let mark = if r.group_m == pick.group_m {
            "  <-"
        } else {
            ""
        };
        let _ = writeln!(
            o,
            "  {:>5} {:>6} {:>6} {:>10}{mark}",
            r.group_m, r.unique_rows, r.unique_cols, r.cost
        );
    }
    let _ = writeln!(o, "\n== Pick ==");
    let _ = writeln!(
        o,
        "  BLOCK_M={}, BLOCK_N={}, BLOCK_K={}, GROUP_SIZE_M={}, num_warps={}, num_stages={}",
        pick.block_m, pick.block_n, pick.block_k, pick.group_m, pick.num_warps, pick.num_stages
    );
    let _ = writeln!(
        o,
        "  predicted {:.0} cycles = {:.2} us",
        sel.pick.latency_cycles, sel.pick.latency_us
    );
    o
}

/// Header of the batch CSV (one row per shape).
pub const BATCH_CSV_HEADER: &str =
    "M,N,K,dtype,BLOCK_SIZE_M,BLOCK_SIZE_N,BLOCK_SIZE_K,GROUP_SIZE_M,num_warps,num_stages,predicted_cycles,predicted_us";

/// One batch CSV row.
pub fn batch_csv_row(sel: &Selection) -> String {
    let p = &sel.problem;
    let r = &sel.pick;
    let c = &r.config;
    format!(
        "{},{},{},{},{},{},{},{},{},{},{:.1},{:.3}",
        p.m,
        p.n,
        p.k,
        p.dtype,
        c.block_m,
        c.block_n,
        c.block_k,
        c.group_m,
        c.num_warps,
        c.num_stages,
        r.latency_cycles,
        r.latency_us
    )
}

/// One batch JSON object (pick and prediction).
pub fn batch_json(sel: &Selection) -> Value {
    json!({"problem": problem_json(&sel.problem), "pick": ranked_json(&sel.pick)})
}
