//! The `--explain` walk-through of one selection, in the order of the NVIDIA port report's
//! algorithms 3 to 9 (compute, occupancy, L2 hit rate, memory, tile and total latency),
//! with the tier of every hardware parameter and the phase-2 GROUP_SIZE_M table.

use std::fmt::Write as _;

use crate::hw::resolve::{Resolved, Tier};
use crate::hw::schema::PARAM_NAMES;
use crate::model::latency::default_group_m;
use crate::model::select::{Selection, Selector};
use crate::model::Config;

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

/// The `--explain` walk-through for the pick: the hardware parameters with their tiers,
/// every algorithm's numbers for the picked tile, the throughput model where it scored the
/// launch, and the phase-2 table.
pub fn walkthrough(sel: &Selection, s: &Selector<'_>, res: &Resolved) -> String {
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
        s.feasible_count_for(&sel.problem),
        s.family.name(),
        s.variant.name()
    );
    if let Some(note) = s.variant_note(&sel.problem) {
        let _ = writeln!(o, "  compiled variant: {note}");
    }
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
        if k.tp_resident_round_trip_share != 1.0
            && crate::model::throughput::operands_fit_l2(p, g.l2_bytes)
        {
            let _ = writeln!(
                o,
                "  A, B and C fit in L2 together: the pipeline's round trip at tp_resident_round_trip_share {} of tp_load_latency_cycles",
                k.tp_resident_round_trip_share
            );
        }
        if t.edge_tile_cycles > 0.0 {
            let _ = writeln!(
                o,
                "  the tiles at M's and N's edges copy their zero-filled rows at tp_zero_row_copy_weight {} real rows: +{:.0} cycles to the busiest program (in the SM's)",
                k.tp_zero_row_copy_weight, t.edge_tile_cycles
            );
        }
        // the terms added after the overlap of the SM's and DRAM's cycles
        let mut in_series = String::new();
        if t.padding_cycles > 0.0 {
            let _ = write!(
                in_series,
                " + zero-filled box rows {:.0} cycles in series",
                t.padding_cycles
            );
        }
        if t.exposed_epilogue_cycles > 0.0 {
            let _ = write!(
                in_series,
                " + the last epilogue {:.0} cycles in series (out of the SM's)",
                t.exposed_epilogue_cycles
            );
        }
        let _ = writeln!(
            o,
            "  SM {:.0} cycles, DRAM {:.0} bytes = {:.0} cycles{}; x tp_time_scale {} = {:.0} cycles",
            t.sm_cycles, t.dram_bytes, t.dram_cycles, in_series, k.tp_time_scale, t.total
        );
        if let Some(c) = s.correction() {
            let model = sel.pick.model_us * s.gpu.sm_clock_mhz;
            let _ = writeln!(
                o,
                "  learned correction ({}, docs/correction.md): {} trees fitted on {} launches of {} {} shapes ({}); \
                 this launch's model time {:.0} cycles x {:.4} = {:.0} cycles; the pick is taken among the \
                 launches the model predicts within its tie band{} of its best (--no-correction: the model alone)",
                c.path,
                c.trees(),
                c.fit.rows,
                c.fit.shapes,
                c.fit.dtype,
                c.fit.fit_sets.join(", "),
                model,
                sel.pick.latency_cycles / model.max(f64::MIN_POSITIVE),
                sel.pick.latency_cycles,
                if c.guard > 0.0 {
                    format!(" and a further {:.0} %", c.guard * 100.0)
                } else {
                    String::new()
                }
            );
        }
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
        "  BLOCK_M={}, BLOCK_N={}, BLOCK_K={}, GROUP_SIZE_M={}, num_warps={}, num_stages={}{}",
        pick.block_m,
        pick.block_n,
        pick.block_k,
        pick.group_m,
        pick.num_warps,
        pick.num_stages,
        switch_words(pick)
    );
    if pick.split_k > 1 {
        let _ = writeln!(o, "  split-K: {} runs of K", pick.split_k);
    }
    if pick.stream_k {
        let _ = writeln!(
            o,
            "  Stream-K (phase 3): whole rounds, then the last two rounds' K iterations in one range per CTA; the model prices it below the same launch's whole-tile grid"
        );
    }
    let _ = writeln!(
        o,
        "  predicted {:.0} cycles = {:.2} us",
        sel.pick.latency_cycles, sel.pick.latency_us
    );
    o
}

/// The pick's switches that are on, as ", flatten, epilogue_subtile" (nothing when none).
fn switch_words(c: &Config) -> String {
    c.switches.to_string().replace(',', ", ")
}

/// The account of a family set's choice (`triton-auto`), after the chosen family's
/// walk-through: every member with its pick and predicted time, or why it did not run.
pub fn choice_section(a: &super::AutoSummary) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n== Kernel choice ({}): the lowest compared time (the predicted time through the family's fitted map) among the kernels that can run the shape ==",
        a.set
    );
    for e in &a.entrants {
        let mark = if e.family == a.chosen { "  <-" } else { "" };
        let _ = match &e.outcome {
            Ok(r) => writeln!(
                o,
                "  {:<10} pick {}  predicted {:.0} cycles = {:.2} us, compared {:.2} us ({} scoring){mark}",
                e.family,
                r.config,
                r.latency_cycles,
                r.latency_us,
                e.compared_us.unwrap_or(r.latency_us),
                e.scoring.map_or("-", |s| s.name())
            ),
            Err(why) => writeln!(o, "  {:<10} not run: {why}", e.family),
        };
    }
    o
}

/// The energy model's account of the pick (`--explain` with `--objective`, `--power-limit`
/// or `--energy-costs`): its counts, the SMs with work and their busy share, each part of
/// its energy at full clock, and what the limit makes of it (model::energy). Empty when
/// the pick has no energy prediction or the selector no counts for it.
pub fn energy_section(
    s: &Selector<'_>,
    p: &crate::model::Problem,
    pick: &crate::model::select::Ranked,
    plan: &crate::model::objective::EnergyPlan,
) -> String {
    use crate::model::energy::{active_mj, dynamic_parts_pj};
    let (Some(e), Some(t)) = (pick.energy, s.traffic(p, &pick.config)) else {
        return String::new();
    };
    let c = &plan.costs;
    let mut o = String::new();
    let _ = writeln!(o, "\n== Energy of the pick (costs: {}) ==", c.source);
    let yes = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(
        o,
        "  counts: tensor FLOP {:.3e} (the problem's 2MNK {:.3e}), loads into shared memory {:.3e} B (and {:.3e} B zero-filled past A's and B's edges), DRAM {:.3e} B, stores {:.3e} B; wgmma {}, TMA {}",
        t.tensor_flop,
        t.real_flop,
        t.load_bytes,
        t.zero_fill_bytes,
        t.dram_bytes,
        t.store_bytes,
        yes(t.wgmma),
        yes(t.tma)
    );
    let _ = writeln!(
        o,
        "  SMs with work: {:.3} of {}; busy share {:.3} (the rest of the launch they wait on loads or latency; 1 on the SM load path)",
        t.active_sms, s.gpu.sm_count, t.issue_busy
    );
    let [tensor, loads, dram, stores] = dynamic_parts_pj(c, &t).map(|pj| pj * 1e-9);
    let static_mj = c.static_w * e.time_us * 1e-3;
    let _ = writeln!(
        o,
        "  at full clock, {:.2} us: static {:.1} W x t = {:.4} mJ; active {:.4} mJ; tensor {:.4} mJ; loads {:.4} mJ; DRAM {:.4} mJ; stores {:.4} mJ; {:.1} W",
        e.time_us,
        c.static_w,
        static_mj,
        active_mj(c, &t, e.time_us),
        tensor,
        loads,
        dram,
        stores,
        e.full_clock_w
    );
    let _ = writeln!(
        o,
        "  under {:.0} W: {}; {:.2} us sustained, {:.4} mJ, {:.1} W",
        e.power_limit_w,
        if e.capped {
            format!("capped, SM clock x{:.2}", e.clock_fraction)
        } else {
            "not capped".to_string()
        },
        e.sustained_us,
        e.energy_mj,
        e.power_w
    );
    o
}
