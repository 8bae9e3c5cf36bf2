//! Energy of one GEMM launch and its speed under a power limit (issue 15, section 3; the
//! CUTLASS tuning study with energy, docs/sources.md, measures configs' energy across power
//! limits). A launch's energy is the static power of the awake GPU over its time plus the
//! dynamic energy of what it does, each count taken from the kernel's tiles:
//!
//! - tensor-core FLOP as executed: every K iteration of every tile, padding included
//!   (2 x BM x BN x BK per block iteration);
//! - bytes into shared memory (the tiles' loads) and read out of it by the warps (the
//!   fragments: `LaunchStatic::fragment_bytes`);
//! - bytes from L2 to the SMs: the tiles' loads plus C's (or the split-K partials') writes;
//! - bytes from DRAM: the throughput model's DRAM traffic (compulsory, or re-reads when A
//!   and B do not fit in L2), each of which also crosses L2.
//!
//! Under a power limit P_lim the GPU lowers its clock until it draws no more: with the
//! dynamic energy fixed per operation (first order: the study's power-limit axis, and the
//! issue's "energy divided by the power limit"), a launch whose power at full clock
//! P = P_static + E_dyn / t exceeds P_lim runs in t' = E_dyn / (P_lim - P_static) and
//! draws P_lim; otherwise it keeps t. The costs are `hw::energy::EnergyCosts`.

use serde::Serialize;

use crate::hw::energy::EnergyCosts;

use super::inputs::output_bytes_per_element;
use super::problem::Problem;
use super::throughput::{LaunchStatic, ThroughputBreakdown};

/// What one launch does, counted from its tiles.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Traffic {
    pub tensor_flop: f64,
    pub smem_bytes: f64,
    pub l2_bytes: f64,
    pub dram_bytes: f64,
}

impl Traffic {
    /// The counts of a launch from its static numbers and the throughput model's
    /// breakdown of it (tiles, K iterations per tile, DRAM bytes).
    pub fn of_launch(p: &Problem, l: &LaunchStatic, b: &ThroughputBreakdown) -> Traffic {
        let iters = b.tiles as f64 * b.k_iters as f64;
        let runs = l.split_k.max(1) as f64;
        let c_bytes = (p.m * p.n) as f64 * output_bytes_per_element(p.dtype);
        // split-K: each run writes an fp32 partial tile and the reduction reads them back
        let partial = if runs > 1.0 {
            2.0 * (p.m * p.n) as f64 * 4.0 * runs
        } else {
            0.0
        };
        let loads = iters * l.load_bytes;
        Traffic {
            tensor_flop: iters * 2.0 * (l.bm * l.bn * l.bk) as f64,
            smem_bytes: loads + iters * l.fragment_bytes,
            l2_bytes: loads + c_bytes + partial,
            dram_bytes: b.dram_bytes,
        }
    }
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
    let pj = traffic.tensor_flop * costs.pj_per_flop
        + traffic.smem_bytes * costs.pj_per_smem_byte
        + (traffic.l2_bytes + traffic.dram_bytes) * costs.pj_per_l2_byte
        + traffic.dram_bytes * costs.pj_per_dram_byte;
    let dynamic_mj = pj * 1e-9;
    let t = time_us.max(0.0);
    // mJ / us = kW
    let dynamic_w = if t > 0.0 { dynamic_mj / t * 1e3 } else { 0.0 };
    let full_clock_w = costs.static_w + dynamic_w;
    let headroom = power_limit_w - costs.static_w;
    let capped = full_clock_w > power_limit_w && headroom > 0.0;
    let sustained_us = if capped {
        dynamic_mj / headroom * 1e3
    } else {
        t
    };
    let energy_mj = costs.static_w * sustained_us * 1e-3 + dynamic_mj;
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
            power_limit_w: 700.0,
            source: "test".into(),
        }
    }

    #[test]
    fn energy_is_static_power_over_time_plus_each_count_at_its_cost() {
        let t = Traffic {
            tensor_flop: 1e12,
            smem_bytes: 1e9,
            l2_bytes: 1e9,
            dram_bytes: 1e8,
        };
        // 0.5 J + 1 mJ + (1.1e9 x 2 pJ = 2.2 mJ) + 1 mJ = 504.2 mJ dynamic
        let e = predict(&costs(), &t, 2000.0, 700.0);
        assert!((e.dynamic_mj - 504.2).abs() < 1e-9, "{e:?}");
        // 504.2 mJ over 2 ms: 252.1 W dynamic, 452.1 W in all: below the limit
        assert!(!e.capped);
        assert!((e.full_clock_w - 452.1).abs() < 1e-9);
        assert_eq!(e.sustained_us, 2000.0);
        assert!((e.energy_mj - (400.0 + 504.2)).abs() < 1e-9);
        assert!((e.power_w - 452.1).abs() < 1e-9);
    }

    #[test]
    fn above_the_limit_the_launch_slows_to_what_the_limit_allows() {
        let t = Traffic {
            tensor_flop: 1e12,
            smem_bytes: 0.0,
            l2_bytes: 0.0,
            dram_bytes: 0.0,
        };
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
    }
}
