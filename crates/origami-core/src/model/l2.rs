//! Algorithm 5, L2 hit rate from the super-group of tiles that run at once (the NVIDIA port
//! report, section 3.3; Origami `estimate_l2_hit`, `compute_l2_hit_rate_global`), in two
//! variants:
//!
//! - `seed`: the NVIDIA port report's model as written: the super-group spans GROUP_SIZE_M
//!   tile *columns* (`l2_tile_n = min(WGM, grid_N)`), and the hit rate is capped at 0.5
//!   when one full pass of A and B tiles, (grid_M BM BK + grid_N BK BN) x bytes, exceeds
//!   L2.
//! - `origami`: oriented like the kernel's launch order (Triton's grouping: GROUP_SIZE_M
//!   tile *rows*, M fastest), bounded by the global hit rate of one full pass (0.1 when it
//!   overflows L2, as gemm.cpp), and a result of exactly 0 becomes the 0.5 floor.

use super::inputs::ceil_div;
use crate::constants::ModelConstants;

/// Inputs of the hit-rate estimate, all in tiles or bytes.
#[derive(Debug, Clone, Copy)]
pub struct L2Input {
    pub grid_m: u64,
    pub grid_n: u64,
    pub active_sms: u64,
    pub group_m: u64,
    /// Bytes of one A tile (BM x BK) and one B tile (BK x BN).
    pub a_tile_bytes: f64,
    pub b_tile_bytes: f64,
    pub l2_bytes: f64,
}

/// The estimate with its intermediate numbers (for `--explain`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct L2Estimate {
    /// Super-group shape in tiles, after wrap-around and shrinking to fit L2.
    pub l2_tile_m: u64,
    pub l2_tile_n: u64,
    /// Hit rate from the super-group alone.
    pub local_hit: f64,
    /// One full pass of A and B tiles, bytes (the "total working set").
    pub working_set_bytes: f64,
    /// The hit rate the model uses.
    pub hit: f64,
    /// Unique A and B tile bytes of the resident tiles in the kernel's launch order
    /// (origami variant; 0 in the seed variant, which does not use it).
    pub resident_footprint_bytes: f64,
}

/// Super-group shape (rows, columns of tiles) before shrinking, with the wrap-around rule.
/// `along` is the extent of the grouped direction, `across` the other one; returns
/// (grouped, other).
#[inline(always)]
fn super_group(group: u64, along: u64, across: u64, active: u64) -> (u64, u64) {
    let mut g = group.min(along);
    let mut o = ceil_div(active, g.max(1));
    if o > across {
        let wraps = o / across.max(1);
        g += wraps * group;
        o = across;
    }
    (g.clamp(1, along.max(1)), o.clamp(1, across.max(1)))
}

/// Hit rate from a super-group of `tm` x `tn` tiles: A tiles are reused by `tn` columns,
/// B tiles by `tm` rows.
#[inline(always)]
fn local_hit(tm: u64, tn: u64, a: f64, b: f64) -> f64 {
    let (tm, tn) = (tm as f64, tn as f64);
    let uncached = tm * a + tn * b;
    let total = (tm * a * tn + tn * b * tm).max(1.0);
    ((total - uncached) / total).clamp(0.0, 1.0)
}

#[inline(always)]
fn shrink_to_fit(mut tm: u64, mut tn: u64, i: &L2Input) -> (u64, u64) {
    let fp = |tm: u64, tn: u64| tm as f64 * i.a_tile_bytes + tn as f64 * i.b_tile_bytes;
    while fp(tm, tn) > i.l2_bytes {
        if tm > 1 && tm >= tn {
            tm -= 1;
        } else if tn > 1 {
            tn -= 1;
        } else {
            break;
        }
    }
    (tm, tn)
}

/// The `seed` variant's hit rate, the NVIDIA port report's as published (WGM along N, 0.5
/// cap on overflow).
#[inline(always)]
pub fn hit_seed(i: &L2Input, k: &ModelConstants) -> L2Estimate {
    let (tn, tm) = super_group(i.group_m, i.grid_n, i.grid_m, i.active_sms);
    let (tm, tn) = shrink_to_fit(tm, tn, i);
    let local = local_hit(tm, tn, i.a_tile_bytes, i.b_tile_bytes);
    let ws = i.grid_m as f64 * i.a_tile_bytes + i.grid_n as f64 * i.b_tile_bytes;
    let hit = if ws > i.l2_bytes {
        local.min(k.l2_hit_floor)
    } else {
        local
    };
    L2Estimate {
        l2_tile_m: tm,
        l2_tile_n: tn,
        local_hit: local,
        working_set_bytes: ws,
        hit,
        resident_footprint_bytes: 0.0,
    }
}

/// The Origami hit rate, super-group oriented like Triton's GROUP_SIZE_M (rows, M fastest).
#[inline(always)]
pub fn hit_origami(i: &L2Input, k: &ModelConstants) -> L2Estimate {
    let (gm, gn) = super_group(i.group_m, i.grid_m, i.grid_n, i.active_sms);
    let resident = gm as f64 * i.a_tile_bytes + gn as f64 * i.b_tile_bytes;
    let (tm, tn) = shrink_to_fit(gm, gn, i);
    let local = local_hit(tm, tn, i.a_tile_bytes, i.b_tile_bytes);
    let ws = i.grid_m as f64 * i.a_tile_bytes + i.grid_n as f64 * i.b_tile_bytes;
    let global = if ws > i.l2_bytes {
        k.l2_global_overflow_hit
    } else {
        local_hit(i.grid_m, i.grid_n, i.a_tile_bytes, i.b_tile_bytes)
    };
    let mut hit = local.min(global);
    if hit == 0.0 {
        hit = k.l2_hit_floor;
    }
    L2Estimate {
        l2_tile_m: tm,
        l2_tile_n: tn,
        local_hit: local,
        working_set_bytes: ws,
        hit,
        resident_footprint_bytes: resident,
    }
}

/// Unique bytes of the A and B tiles that the concurrently resident tiles need per K step
/// (the origami variant's floor on DRAM traffic): the super-group before shrinking.
#[inline(always)]
pub fn resident_footprint_bytes(i: &L2Input) -> f64 {
    let (tm, tn) = super_group(i.group_m, i.grid_m, i.grid_n, i.active_sms);
    tm as f64 * i.a_tile_bytes + tn as f64 * i.b_tile_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_appendix_a_hit_rate() {
        // 2048^3 fp16, 128x256x64 on the RTX 4090: grid 16 x 8, 128 SMs, WGM 12.
        let i = L2Input {
            grid_m: 16,
            grid_n: 8,
            active_sms: 128,
            group_m: 12,
            a_tile_bytes: 128.0 * 64.0 * 2.0,
            b_tile_bytes: 64.0 * 256.0 * 2.0,
            l2_bytes: 75_497_472.0,
        };
        let e = hit_seed(&i, &ModelConstants::default());
        assert_eq!((e.l2_tile_m, e.l2_tile_n), (16, 8));
        assert!((e.hit - 0.9167).abs() < 1e-4, "{}", e.hit);
        assert_eq!(e.working_set_bytes, 524_288.0);
    }

    #[test]
    fn origami_floor_applies_only_to_zero() {
        // One tile: nothing is reused, the hit rate is 0 and becomes the 0.5 floor.
        let i = L2Input {
            grid_m: 1,
            grid_n: 1,
            active_sms: 1,
            group_m: 12,
            a_tile_bytes: 4096.0,
            b_tile_bytes: 4096.0,
            l2_bytes: 1e9,
        };
        let e = hit_origami(&i, &ModelConstants::default());
        assert_eq!(e.local_hit, 0.0);
        assert_eq!(e.hit, 0.5);
    }

    #[test]
    fn orientation_differs_between_variants() {
        // 16 x 16 tiles, 32 active, group 4: Triton's order covers 4 rows x 8 columns; the
        // `seed` variant's super-group spans 4 columns x 8 rows.
        let i = L2Input {
            grid_m: 16,
            grid_n: 16,
            active_sms: 32,
            group_m: 4,
            a_tile_bytes: 1.0,
            b_tile_bytes: 1.0,
            l2_bytes: 1e9,
        };
        let s = hit_seed(&i, &ModelConstants::default());
        let o = hit_origami(&i, &ModelConstants::default());
        assert_eq!((s.l2_tile_m, s.l2_tile_n), (8, 4));
        assert_eq!((o.l2_tile_m, o.l2_tile_n), (4, 8));
        assert_eq!(resident_footprint_bytes(&i), 12.0);
        // Wrap-around: a 2-row grid, group 8, 32 active: 2 rows x 16 columns.
        let w = L2Input {
            grid_m: 2,
            grid_n: 64,
            ..i
        };
        let o = hit_origami(&w, &ModelConstants::default());
        assert_eq!((o.l2_tile_m, o.l2_tile_n), (2, 16));
    }

    #[test]
    fn shrinks_to_fit_l2() {
        let i = L2Input {
            grid_m: 100,
            grid_n: 100,
            active_sms: 100,
            group_m: 10,
            a_tile_bytes: 100.0,
            b_tile_bytes: 100.0,
            l2_bytes: 1000.0,
        };
        let e = hit_origami(&i, &ModelConstants::default());
        assert!(e.l2_tile_m as f64 * 100.0 + e.l2_tile_n as f64 * 100.0 <= 1000.0);
    }
}
