//! Energy of one GEMM launch and its speed under a power limit (issue 15, section 3; the
//! CUTLASS tuning study with energy, docs/sources.md, measures configs' energy across power
//! limits). A launch's energy is the static power of the awake GPU over its time plus the
//! dynamic energy of what it does, each count taken from the kernel's tiles:
//!
//! - tensor-core FLOP as executed: every K iteration of every tile, padding included
//!   (2 x BM x BN x BK per block iteration, however split-K or Stream-K cuts the work), at
//!   wgmma's cost (its shared-memory operand reads included) or mma.sync's (tf32's own when
//!   measured) plus the warps' fragment reads from shared memory; the FLOP beyond the
//!   problem's 2MNK multiply zero-filled rows and cost the zero-operand price when measured;
//! - the tiles' loads from L2 into shared memory, at TMA's cost or the SM load path's (L2
//!   to the SM plus the shared-memory write), for the rows and K columns inside A and B
//!   only: a TMA box's rows past M or N (or K) are zero-filled by the copy engine without
//!   a read (`EnergyCosts::pj_per_tma_zero_byte`, measured with boxes outside their
//!   tensor), a masked copy's are not read either (the shared-memory write alone);
//! - bytes from DRAM (the throughput model's DRAM traffic: compulsory, or re-reads when A
//!   and B do not fit in L2, without its charge for zero-filled box rows) at the cost
//!   beyond their L2 crossing, of the same path;
//! - C's (or the split-K partials') writes through L2.
//!
//! Besides the static power of the awake GPU, SMs that hold work draw the active power of
//! schedulers issuing (`energy_active_w`, measured with every SM full of spinning warps)
//! over the launch's time, for the share of SMs with a CTA; the operations' costs are
//! taken above it where their microbenchmark kept the SMs that busy
//! (`hw::energy::EnergyCosts`).
//!
//! Under a power limit P_lim the GPU lowers its clock until it draws no more. The dynamic
//! power (operations and active SMs) scales as x^a with the clock fraction x (a =
//! `dvfs_exponent`: P = C V^2 f with V following f gives 3; the issue's first-order rule,
//! energy per operation fixed, is a = 1), the static power does not: a launch whose power at
//! full clock P = P_static + P_dyn exceeds P_lim runs at x = ((P_lim - P_static) /
//! P_dyn)^(1/a), in t / x, with dynamic energy x^(a-1) of its full-clock value, drawing
//! P_lim; otherwise it keeps t. The launch's cycles are taken as fixed (a memory-bound
//! launch slows less: not modelled).

use serde::Serialize;

use crate::hw::energy::EnergyCosts;

use super::inputs::output_bytes_per_element;
use super::problem::Problem;
use super::throughput::{tile_rows, LaunchStatic, ThroughputBreakdown};

/// What one launch does, counted from its tiles, and the hardware path it takes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Traffic {
    /// Tensor-core FLOP as executed (padding included).
    pub tensor_flop: f64,
    /// Of those, the problem's own (2 M N K); the rest multiply zero-filled rows past M, N
    /// or K (`EnergyCosts::pj_per_flop_zero` when measured).
    pub real_flop: f64,
    /// Bytes the tiles' loads move from L2 into shared memory (the rows and K columns
    /// inside A and B).
    pub load_bytes: f64,
    /// Bytes of the tiles' loads past A's or B's edges: zero-filled in shared memory, read
    /// from nowhere.
    pub zero_fill_bytes: f64,
    /// Bytes the warps read from shared memory as MMA fragments (mma.sync; wgmma reads
    /// its operands itself, priced with its FLOP).
    pub fragment_bytes: f64,
    /// Bytes written back through L2: C, or split-K's fp32 partials and their reduction.
    pub store_bytes: f64,
    /// Bytes from DRAM (each also crosses L2).
    pub dram_bytes: f64,
    /// The MMAs are wgmma (shared-memory operands).
    pub wgmma: bool,
    /// The MMAs are mma.sync on TF32 (fp32 data): `EnergyCosts::pj_per_flop_tf32` when
    /// measured.
    pub tf32: bool,
    /// The loads are TMA box copies (L2 to shared memory, no registers).
    pub tma: bool,
    /// The share of the GPU's SMs that hold work (CTAs over SMs, at most 1): they draw
    /// the active power (`EnergyCosts::active_w`) while the launch runs.
    pub active_sms: f64,
    /// The share of the launch's time those SMs draw the active power: 1 on the SM load
    /// path (its load costs were measured with every SM issuing, above the active power);
    /// with TMA loads, the share spent on their own tensor-core and shared-memory work
    /// (`issue_busy`): while they wait on a TMA copy, an L2 or DRAM transfer or a
    /// latency they draw the static power and the loads' own costs.
    pub issue_busy: f64,
}

impl Traffic {
    /// The counts of a launch from its static numbers and the throughput model's
    /// breakdown of it (tiles, K iterations per tile, DRAM bytes); `wgmma` and `tma` from
    /// the family.
    pub fn of_launch(
        p: &Problem,
        l: &LaunchStatic,
        b: &ThroughputBreakdown,
        wgmma: bool,
        tma: bool,
        sms: u32,
    ) -> Traffic {
        // every tile's K iterations, however split-K or Stream-K shares them out
        let iters = b.iterations_total as f64;
        let runs = l.split_k.max(1) as f64;
        let c_bytes = (p.m * p.n) as f64 * output_bytes_per_element(p.dtype);
        // split-K: each run writes an fp32 partial tile and the reduction reads them back
        let partial = if runs > 1.0 {
            2.0 * (p.m * p.n) as f64 * 4.0 * runs
        } else {
            0.0
        };
        let loaded = iters * l.load_bytes;
        let inside = loaded * inside_share(&p.transposed_if(l.swap), l);
        Traffic {
            tensor_flop: iters * 2.0 * (l.bm * l.bn * l.bk) as f64,
            real_flop: 2.0 * p.m as f64 * p.n as f64 * p.k as f64,
            load_bytes: inside,
            zero_fill_bytes: loaded - inside,
            fragment_bytes: if wgmma { 0.0 } else { iters * l.fragment_bytes },
            store_bytes: c_bytes + partial,
            dram_bytes: (b.dram_bytes - b.padding_dram_bytes).max(0.0),
            wgmma,
            tf32: p.dtype == crate::dtype::Dtype::Tf32,
            tma,
            active_sms: (b.work_items as f64 / f64::from(sms.max(1))).min(1.0),
            issue_busy: if tma { issue_busy(b) } else { 1.0 },
        }
    }
}

/// The share of a launch's tile loads that lies inside A and B (on the kernel's problem):
/// a tile's rows of A and B averaged over the grid (M / grid_m of BLOCK_M, N / grid_n of
/// BLOCK_N, weighted by their bytes per K step) times the share of its K steps' columns
/// inside K.
pub fn inside_share(p: &Problem, l: &LaunchStatic) -> f64 {
    let (grid_m, grid_n) = (p.m.div_ceil(l.bm.max(1)), p.n.div_ceil(l.bn.max(1)));
    let (rows, whole) = tile_rows(p, l, grid_m, grid_n);
    let k_steps = p.k.div_ceil(l.bk.max(1)).max(1);
    let share = rows / whole.max(1.0) * p.k as f64 / (k_steps * l.bk.max(1)) as f64;
    if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// The share of a launch's cycles (SM or DRAM bound) its busiest SM works rather than waits:
/// 1 less its iterations' and fills' waiting (`memory_wait_cycles`) and the DRAM time
/// beyond the SMs', in [0, 1]; 1 when the breakdown has no cycles or did not count the
/// waiting (`throughput::predict_on`).
pub fn issue_busy(b: &ThroughputBreakdown) -> f64 {
    let Some(wait) = b.memory_wait_cycles else {
        return 1.0;
    };
    let launch = b.sm_cycles.max(b.dram_cycles) + b.padding_cycles;
    let waiting = wait + (b.dram_cycles - b.sm_cycles).max(0.0) + b.padding_cycles;
    if launch > 0.0 && waiting.is_finite() {
        (1.0 - waiting / launch).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// Dynamic energy of `t`, picojoules: each count at the cost of the path it takes (wgmma
/// and TMA where the kernel uses them and the costs were measured; else mma.sync and the
/// SM's load path: L2 into the SM, then the shared-memory write).
pub fn dynamic_pj(costs: &EnergyCosts, t: &Traffic) -> f64 {
    dynamic_parts_pj(costs, t).iter().sum()
}

/// [`dynamic_pj`] by what it pays for, picojoules: tensor-core FLOP (with mma.sync's
/// fragment reads), the tiles' loads, DRAM beyond L2, C's stores.
pub fn dynamic_parts_pj(costs: &EnergyCosts, t: &Traffic) -> [f64; 4] {
    let mma_sync = match (t.tf32, costs.pj_per_flop_tf32) {
        (true, Some(e)) => e,
        _ => costs.pj_per_flop,
    };
    // the problem's FLOP at the path's cost, the zero-filled rows' at its zero-operand cost
    // when measured (tf32's zero cost is not: its FLOP all at the tf32 cost)
    let real = t.real_flop.min(t.tensor_flop);
    let padded = t.tensor_flop - real;
    let tensor = match (t.wgmma, costs.pj_per_flop_wgmma) {
        (true, Some(e)) => real * e + padded * costs.pj_per_flop_wgmma_zero.unwrap_or(e),
        _ => {
            let zero = if t.tf32 { None } else { costs.pj_per_flop_zero };
            real * mma_sync
                + padded * zero.unwrap_or(mma_sync)
                + t.fragment_bytes * costs.pj_per_smem_byte
        }
    };
    let (loads, dram) = match (t.tma, costs.pj_per_tma_l2_byte, costs.pj_per_tma_dram_byte) {
        (true, Some(l2), Some(dram)) => (t.load_bytes * l2, t.dram_bytes * dram),
        _ => (
            t.load_bytes * (costs.pj_per_l2_byte + costs.pj_per_smem_byte),
            t.dram_bytes * costs.pj_per_dram_byte,
        ),
    };
    // the zero-filled part of the loads: nothing read; the copy engine's fill when measured,
    // else the shared-memory write
    let zero = match (t.tma, costs.pj_per_tma_zero_byte) {
        (true, Some(z)) => z,
        _ => costs.pj_per_smem_byte,
    };
    let loads = loads + t.zero_fill_bytes * zero;
    [tensor, loads, dram, t.store_bytes * costs.pj_per_l2_byte]
}

/// The active power's energy over `time_us` (full clock), millijoules: the SMs with work,
/// for their busy share ([`Traffic::issue_busy`]).
pub fn active_mj(costs: &EnergyCosts, traffic: &Traffic, time_us: f64) -> f64 {
    (costs.active_w.unwrap_or(costs.static_w) - costs.static_w).max(0.0)
        * traffic.active_sms.clamp(0.0, 1.0)
        * if traffic.issue_busy.is_finite() {
            traffic.issue_busy.clamp(0.0, 1.0)
        } else {
            1.0
        }
        * time_us.max(0.0)
        * 1e-3
}

/// Predicted energy and sustained speed of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EnergyPrediction {
    /// The time the energy is priced at (full clock), microseconds.
    pub time_us: f64,
    /// Dynamic energy, millijoules.
    pub dynamic_mj: f64,
    /// Power at full clock (static plus dynamic over the time), W.
    pub full_clock_w: f64,
    /// The power limit applied, W.
    pub power_limit_w: f64,
    /// Whether the limit binds (the clock falls).
    pub capped: bool,
    /// Time per launch under the limit, microseconds.
    pub sustained_us: f64,
    /// Energy per launch under the limit, millijoules.
    pub energy_mj: f64,
    /// Average power under the limit, W.
    pub power_w: f64,
    /// The SM clock under the limit over the full clock (time at full clock over the
    /// sustained time: the launch's cycles are the same, only slower; 1 when uncapped).
    pub clock_fraction: f64,
}

impl EnergyPrediction {
    /// Energy-delay product under the limit, mJ x us.
    pub fn edp(&self) -> f64 {
        self.energy_mj * self.sustained_us
    }
}

/// Price `traffic` done in `time_us` (at full clock) under `power_limit_w`.
pub fn predict(
    costs: &EnergyCosts,
    traffic: &Traffic,
    time_us: f64,
    power_limit_w: f64,
) -> EnergyPrediction {
    let t = time_us.max(0.0);
    // the SMs' active power over the static, for the share of SMs with work, scales with
    // the clock as the operations' energy does: part of the dynamic energy
    let dynamic_mj = dynamic_pj(costs, traffic) * 1e-9 + active_mj(costs, traffic, t);
    // mJ / us = kW
    let dynamic_w = if t > 0.0 { dynamic_mj / t * 1e3 } else { 0.0 };
    let full_clock_w = costs.static_w + dynamic_w;
    let headroom = power_limit_w - costs.static_w;
    let capped = full_clock_w > power_limit_w && headroom > 0.0 && dynamic_w > 0.0;
    // under the limit the clock falls to x of full, the dynamic power to x^a of its
    // full-clock value (`EnergyCosts::dvfs_exponent`), the time grows to t / x
    let (x, sustained_us) = if capped {
        let x = (headroom / dynamic_w).powf(1.0 / costs.dvfs_exponent.max(1.0));
        (x, t / x)
    } else {
        (1.0, t)
    };
    let energy_mj = costs.static_w * sustained_us * 1e-3
        + dynamic_mj * x.powf(costs.dvfs_exponent.max(1.0) - 1.0);
    EnergyPrediction {
        time_us: t,
        dynamic_mj,
        full_clock_w,
        power_limit_w,
        capped,
        sustained_us,
        energy_mj,
        power_w: if sustained_us > 0.0 {
            energy_mj / sustained_us * 1e3
        } else {
            costs.static_w
        },
        clock_fraction: x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn costs() -> EnergyCosts {
        EnergyCosts {
            static_w: 200.0,
            pj_per_flop: 0.5,
            pj_per_smem_byte: 1.0,
            pj_per_l2_byte: 2.0,
            pj_per_dram_byte: 10.0,
            pj_per_flop_wgmma: None,
            pj_per_flop_tf32: None,
            pj_per_flop_zero: None,
            pj_per_flop_wgmma_zero: None,
            pj_per_tma_l2_byte: None,
            pj_per_tma_dram_byte: None,
            pj_per_tma_zero_byte: None,
            active_w: None,
            dvfs_exponent: 1.0,
            power_limit_w: 700.0,
            source: "test".into(),
        }
    }

    fn traffic(flop: f64, load: f64, frag: f64, store: f64, dram: f64) -> Traffic {
        Traffic {
            tensor_flop: flop,
            real_flop: flop,
            load_bytes: load,
            zero_fill_bytes: 0.0,
            fragment_bytes: frag,
            store_bytes: store,
            dram_bytes: dram,
            wgmma: false,
            tf32: false,
            tma: false,
            active_sms: 1.0,
            issue_busy: 1.0,
        }
    }

    #[test]
    fn flop_on_zero_filled_rows_at_the_zero_operand_cost_when_measured() {
        let mut c = costs();
        let mut t = traffic(1e9, 0.0, 0.0, 0.0, 0.0);
        t.real_flop = 0.25e9; // three quarters of the tile's rows are past M
                              // not measured: every executed FLOP at the full cost
        assert!((dynamic_pj(&c, &t) - 0.5e9).abs() < 1e-3);
        c.pj_per_flop_zero = Some(0.1);
        assert!((dynamic_pj(&c, &t) - (0.25e9 * 0.5 + 0.75e9 * 0.1)).abs() < 1e-3);
        // wgmma: its own pair
        t.wgmma = true;
        c.pj_per_flop_wgmma = Some(0.4);
        c.pj_per_flop_wgmma_zero = Some(0.05);
        assert!((dynamic_pj(&c, &t) - (0.25e9 * 0.4 + 0.75e9 * 0.05)).abs() < 1e-3);
        // tf32 has no zero cost measured: all of its FLOP at the tf32 cost
        t.wgmma = false;
        t.tf32 = true;
        c.pj_per_flop_tf32 = Some(1.0);
        assert!((dynamic_pj(&c, &t) - 1e9).abs() < 1e-3);
    }

    #[test]
    fn zero_filled_load_bytes_cost_the_fill_not_a_read() {
        let mut c = costs();
        let mut t = traffic(0.0, 1e6, 0.0, 0.0, 0.0);
        t.zero_fill_bytes = 3e6;
        // the SM path: the read bytes at L2 + shared memory, the zero-filled ones at the
        // shared-memory write
        assert!((dynamic_pj(&c, &t) - (1e6 * 3.0 + 3e6 * 1.0)).abs() < 1e-3);
        // TMA: its L2 cost for the read bytes, its measured fill for the others
        t.tma = true;
        c.pj_per_tma_l2_byte = Some(1.5);
        c.pj_per_tma_dram_byte = Some(5.0);
        assert!((dynamic_pj(&c, &t) - (1e6 * 1.5 + 3e6 * 1.0)).abs() < 1e-3);
        c.pj_per_tma_zero_byte = Some(0.5);
        assert!((dynamic_pj(&c, &t) - (1e6 * 1.5 + 3e6 * 0.5)).abs() < 1e-3);
    }

    #[test]
    fn the_loads_inside_a_and_b_are_their_rows_and_k_columns_over_the_grid() {
        let l = |c: &str| {
            crate::model::throughput::LaunchStatic::new(
                &crate::model::problem::parse_config(c).unwrap(),
                (2, 1),
                1,
                crate::dtype::Dtype::Fp16,
                crate::model::family::mma_sync_atom(crate::dtype::Dtype::Fp16),
                1.0,
                0.0,
            )
        };
        let p = |m: u64, n: u64, k: u64| Problem::new(m, n, k, crate::dtype::Dtype::Fp16).unwrap();
        // whole tiles: everything inside
        assert_eq!(
            inside_share(&p(256, 512, 1024), &l("128x256x64,w12,s4")),
            1.0
        );
        // one row of A in a 64-row box, N whole: (1 + 192) of (64 + 192) rows
        let s = inside_share(&p(1, 6144, 4096), &l("64x192x64,w8,s4"));
        assert!((s - 193.0 / 256.0).abs() < 1e-12, "{s}");
        // K = 4100 in 65 steps of 64: 4100 / 4160 of the columns
        let s = inside_share(&p(128, 128, 4100), &l("128x128x64,w12,s4"));
        assert!((s - 4100.0 / 4160.0).abs() < 1e-12, "{s}");
    }

    #[test]
    fn tf32_flop_at_its_own_cost_when_measured() {
        let mut c = costs();
        let mut t = traffic(1e9, 0.0, 2e6, 0.0, 0.0);
        t.tf32 = true;
        // not measured: the f16 cost
        assert!((dynamic_pj(&c, &t) - (0.5e9 + 2e6)).abs() < 1e-3);
        c.pj_per_flop_tf32 = Some(1.25);
        assert!((dynamic_pj(&c, &t) - (1.25e9 + 2e6)).abs() < 1e-3);
        // an f16 launch keeps the f16 cost
        t.tf32 = false;
        assert!((dynamic_pj(&c, &t) - (0.5e9 + 2e6)).abs() < 1e-3);
    }

    #[test]
    fn each_path_is_priced_at_its_own_cost() {
        let mut c = costs();
        let mut t = traffic(1e9, 1e6, 2e6, 1e5, 1e4);
        t.wgmma = true;
        t.tma = true;
        // without wgmma/TMA costs: mma.sync and the SM path
        // 1e9 x 0.5 + 2e6 x 1 + 1e6 x (2 + 1) + 1e4 x 10 + 1e5 x 2
        let sm_path = 0.5e9 + 2e6 + 3e6 + 1e5 + 2e5;
        assert!((dynamic_pj(&c, &t) - sm_path).abs() < 1e-3);
        c.pj_per_flop_wgmma = Some(0.25);
        c.pj_per_tma_l2_byte = Some(1.5);
        c.pj_per_tma_dram_byte = Some(5.0);
        // wgmma: FLOP only (fragments included); TMA: loads and DRAM at its costs
        let fast = 0.25e9 + 2e6 * 0.0 + 1e6 * 1.5 + 1e4 * 5.0 + 1e5 * 2.0;
        assert!(
            (dynamic_pj(&c, &t) - fast).abs() < 1e-3,
            "{}",
            dynamic_pj(&c, &t)
        );
        // a kernel on the SM path keeps the SM path's costs whatever was measured
        t.wgmma = false;
        t.tma = false;
        assert!((dynamic_pj(&c, &t) - sm_path).abs() < 1e-3);
    }

    #[test]
    fn energy_is_static_power_over_time_plus_each_count_at_its_cost() {
        // 1e12 FLOP x 0.5 pJ, 1e9 fragment bytes x 1 pJ, 1e9 loads x (2 + 1) pJ, 1e8 DRAM
        // bytes x 10 pJ, 1e8 stores x 2 pJ
        let t = traffic(1e12, 1e9, 1e9, 1e8, 1e8);
        // 500 + 1 (fragments) + 3 (loads) + 1 (DRAM) + 0.2 (stores) = 505.2 mJ dynamic
        let e = predict(&costs(), &t, 2000.0, 700.0);
        assert!((e.dynamic_mj - 505.2).abs() < 1e-9, "{e:?}");
        // 505.2 mJ over 2 ms: 252.6 W dynamic, 452.6 W in all: below the limit
        assert!(!e.capped);
        assert!((e.full_clock_w - 452.6).abs() < 1e-9);
        assert_eq!(e.sustained_us, 2000.0);
        assert!((e.energy_mj - (400.0 + 505.2)).abs() < 1e-9);
        assert!((e.power_w - 452.6).abs() < 1e-9);
    }

    #[test]
    fn above_the_limit_the_launch_slows_to_what_the_limit_allows() {
        let t = traffic(1e12, 0.0, 0.0, 0.0, 0.0);
        // 500 mJ dynamic in 0.5 ms: 1000 W + 200 W static > 700 W
        let e = predict(&costs(), &t, 500.0, 700.0);
        assert!(e.capped);
        // 500 mJ at 500 W of headroom: 1 ms, drawing exactly the limit
        assert!((e.sustained_us - 1000.0).abs() < 1e-9, "{e:?}");
        assert!((e.power_w - 700.0).abs() < 1e-9);
        assert!((e.energy_mj - 700.0).abs() < 1e-9);
        // a lower limit: slower, and more static energy per launch
        let low = predict(&costs(), &t, 500.0, 450.0);
        assert!(low.sustained_us > e.sustained_us && low.energy_mj > e.energy_mj);
        // a limit at or below the static power cannot be met by slowing down: uncapped
        let none = predict(&costs(), &t, 500.0, 150.0);
        assert!(!none.capped && none.sustained_us == 500.0);
        assert!((e.edp() - 700.0 * 1000.0).abs() < 1e-6);
        // the same cycles in twice the time: half the clock
        assert!((e.clock_fraction - 0.5).abs() < 1e-12);
    }

    #[test]
    fn with_voltage_following_the_clock_the_cap_costs_less_time() {
        let mut c = costs();
        c.dvfs_exponent = 3.0;
        let t = traffic(1e12, 0.0, 0.0, 0.0, 0.0);
        // 1000 W dynamic at full clock, 500 W of headroom: x = 0.5^(1/3)
        let e = predict(&c, &t, 500.0, 700.0);
        let x = 0.5f64.powf(1.0 / 3.0);
        assert!((e.clock_fraction - x).abs() < 1e-12, "{e:?}");
        assert!((e.sustained_us - 500.0 / x).abs() < 1e-9);
        // it draws the limit: static + dynamic energy x^2 of full over t / x
        assert!((e.power_w - 700.0).abs() < 1e-9, "{e:?}");
        assert!((e.energy_mj - 700.0 * e.sustained_us * 1e-3).abs() < 1e-9);
    }

    #[test]
    fn active_sms_draw_the_active_power_for_their_share_and_their_busy_share() {
        let mut c = costs();
        c.active_w = Some(400.0);
        let mut t = traffic(0.0, 0.0, 0.0, 0.0, 0.0);
        let energy = |t: &Traffic| predict(&c, t, 1000.0, 700.0);
        t.active_sms = 0.5;
        // 200 W static + (400 - 200) x 0.5 over 1 ms
        let e = energy(&t);
        assert!((e.energy_mj - 300.0).abs() < 1e-9, "{e:?}");
        assert!((e.dynamic_mj - 100.0).abs() < 1e-9);
        // the TMA path's busy share: 200 W static + (400 - 200) x 0.5 x 0.25 over 1 ms
        t.issue_busy = 0.25;
        assert!((energy(&t).energy_mj - 225.0).abs() < 1e-9);
        // an undefined share counts as busy (the whole active power), never as NaN
        t.issue_busy = f64::NAN;
        assert!((energy(&t).energy_mj - 300.0).abs() < 1e-9);
    }
}
