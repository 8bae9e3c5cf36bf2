//! Algorithms 3, 4, 7, 8, 9 of the Origami model (the NVIDIA port report, section 3; the
//! tritonBLAS paper, section IV; Origami `gemm.cpp`): compute latency, occupancy, memory
//! latency, work utilization, tile latency and total latency of one tile configuration,
//! with every intermediate number kept for `--explain`.
//!
//! Two variants differ where the NVIDIA port report departs from the C++ source:
//! - `seed` (the report's model as published): DRAM traffic (1 - hit) x load; K-padding
//!   penalty added once to L_tile.
//! - `origami`: DRAM traffic max((1 - hit) x load, unique footprint of the resident
//!   tiles); the K-padding penalty inside the epilogue (so it counts twice).

use serde::Serialize;

use crate::dtype::Dtype;

use super::family::MmaAtom;
use super::inputs::{ceil_div, dram_bw_fraction, output_bytes_per_element};
use super::l2::{hit_origami, hit_seed, resident_footprint_bytes, L2Estimate, L2Input};
use super::problem::Problem;
use crate::constants::ModelConstants;

pub use super::inputs::{ModelInputs, Variant};

/// Every intermediate number of one prediction (cycles unless named otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Breakdown {
    // Algorithm 3
    pub n_mma: u64,
    pub l_mma_per_instr: f64,
    pub l_compute: f64,
    // Algorithm 4
    pub grid_m: u64,
    pub grid_n: u64,
    pub total_tiles: u64,
    pub active_sms: u64,
    pub num_waves: u64,
    // Algorithm 5
    pub l2: L2Estimate,
    // Algorithm 7
    pub load_a_bytes: f64,
    pub load_b_bytes: f64,
    pub per_sm_load_bytes: f64,
    pub total_load_bytes: f64,
    pub l2_bw_fraction: f64,
    pub l_l2: f64,
    pub dram_bw_fraction: f64,
    pub load_dram_bytes: f64,
    pub resident_footprint_bytes: f64,
    pub l_dram: f64,
    pub l_mem: f64,
    // Work utilization
    pub utilization: f64,
    pub penalty: f64,
    // Algorithm 8
    pub l_prologue: f64,
    pub output_bytes: f64,
    pub l_epilogue: f64,
    pub num_iter: u64,
    pub k_pad_penalty: f64,
    pub l_steady: f64,
    pub l_tile: f64,
    // Algorithm 9
    pub l_total: f64,
}

fn round_up(x: f64, q: f64) -> f64 {
    (x / q).ceil() * q
}

/// The problem-independent numbers of one tile: Algorithm 3 and the bytes each SM loads
/// per K iteration. A selector computes them once per tile.
#[derive(Debug, Clone, Copy)]
pub struct TileStatic {
    pub bm: u64,
    pub bn: u64,
    pub bk: u64,
    pub n_mma: u64,
    pub l_mma_per_instr: f64,
    pub l_compute: f64,
    pub a_tile_bytes: f64,
    pub b_tile_bytes: f64,
    pub load_a_bytes: f64,
    pub load_b_bytes: f64,
    /// Output rows per tile as written (the origami variant rounds BM to 128 bytes).
    pub out_m: f64,
}

impl TileStatic {
    pub fn new(
        tile: (u32, u32, u32),
        dtype: Dtype,
        atom: MmaAtom,
        hw: &ModelInputs<'_>,
    ) -> TileStatic {
        let k = hw.constants;
        let (bm, bn, bk) = (u64::from(tile.0), u64::from(tile.1), u64::from(tile.2));
        let bytes = dtype.bytes();
        // Algorithm 3: compute latency of one K iteration.
        let n_mma = ceil_div(bm, u64::from(atom.m))
            * ceil_div(bn, u64::from(atom.n))
            * ceil_div(bk, u64::from(atom.k));
        let l_mma_per_instr = hw.params.mma_latency / f64::from(hw.gpu.tensor_cores_per_sm.max(1));
        let a_tile_bytes = (bm * bk) as f64 * bytes;
        let b_tile_bytes = (bk * bn) as f64 * bytes;
        TileStatic {
            bm,
            bn,
            bk,
            n_mma,
            l_mma_per_instr,
            l_compute: l_mma_per_instr * n_mma as f64,
            a_tile_bytes,
            b_tile_bytes,
            load_a_bytes: round_up(a_tile_bytes, k.transaction_bytes),
            load_b_bytes: round_up(b_tile_bytes, k.transaction_bytes),
            out_m: match hw.variant {
                Variant::Seed => bm as f64,
                Variant::Origami => round_up(bm as f64 * bytes, k.transaction_bytes) / bytes,
            },
        }
    }
}

/// Predict the latency of one tile (BM, BN, BK) with launch grouping `group_m` (phase 1
/// uses ceil(sqrt(SMs))).
pub fn predict(
    p: &Problem,
    tile: (u32, u32, u32),
    group_m: u32,
    atom: MmaAtom,
    hw: &ModelInputs<'_>,
) -> Breakdown {
    predict_with(&TileStatic::new(tile, p.dtype, atom, hw), p, group_m, hw)
}

/// `predict` with the tile's static numbers precomputed (the selector's hot path).
#[inline(always)]
pub fn predict_with(t: &TileStatic, p: &Problem, group_m: u32, hw: &ModelInputs<'_>) -> Breakdown {
    let k = hw.constants;
    let prm = hw.params;
    let (bm, bn, bk) = (t.bm, t.bn, t.bk);
    let sms = u64::from(hw.gpu.sm_count.max(1));
    let (n_mma, l_mma_per_instr, l_compute) = (t.n_mma, t.l_mma_per_instr, t.l_compute);

    // Algorithm 4: occupancy.
    let grid_m = ceil_div(p.m, bm);
    let grid_n = ceil_div(p.n, bn);
    let total_tiles = grid_m * grid_n;
    let active_sms = total_tiles.min(sms);
    let num_waves = total_tiles.div_ceil(sms);

    // Algorithm 5: L2 hit rate.
    let l2_in = L2Input {
        grid_m,
        grid_n,
        active_sms,
        group_m: u64::from(group_m.max(1)),
        a_tile_bytes: t.a_tile_bytes,
        b_tile_bytes: t.b_tile_bytes,
        l2_bytes: hw.gpu.l2_bytes as f64,
    };
    let l2 = match hw.variant {
        Variant::Seed => hit_seed(&l2_in, k),
        Variant::Origami => hit_origami(&l2_in, k),
    };

    // Algorithm 7: memory latency of one K iteration.
    let (load_a_bytes, load_b_bytes) = (t.load_a_bytes, t.load_b_bytes);
    let per_sm_load_bytes = (load_a_bytes + load_b_bytes).max(k.min_load_per_sm_bytes);
    let active = active_sms as f64;
    let total_load_bytes = per_sm_load_bytes * active;
    let l2_bw_fraction = active / sms as f64;
    let l_l2 = total_load_bytes / (prm.l2_perf_ratio * l2_bw_fraction);
    let dram_bw_fraction = dram_bw_fraction(prm.dram_bw_coeff, active_sms);
    let dram_bw = prm.dram_perf_ratio * dram_bw_fraction;
    let miss_bytes = (1.0 - l2.hit) * total_load_bytes;
    let resident = match hw.variant {
        Variant::Origami => l2.resident_footprint_bytes,
        Variant::Seed => resident_footprint_bytes(&l2_in),
    };
    let load_dram_bytes = match hw.variant {
        Variant::Seed => miss_bytes,
        Variant::Origami => miss_bytes.max(resident),
    };
    let l_dram = if load_dram_bytes > 0.0 {
        load_dram_bytes / dram_bw + prm.hbm_latency_penalty
    } else {
        0.0
    };
    let l_mem = l_l2.max(l_dram);

    // Work utilization.
    let utilization = work_utilization(p.m, p.n, p.k, (bm, bn, bk));
    let penalty = 1.0 / utilization;

    // Algorithm 8: tile latency.
    let occ = occupancy_discount(k);
    let l_prologue = k.prologue_factor * l_mem * penalty * occ;
    let output_bytes = active * t.out_m * bn as f64 * output_bytes_per_element(p.dtype);
    let num_iter = ceil_div(p.k, bk).saturating_sub(1).max(1);
    // K mod BK without a division: K minus the whole iterations before the last.
    let k_rem = p.k - (ceil_div(p.k, bk) - 1) * bk;
    let k_rem = if k_rem == bk { 0 } else { k_rem };
    let k_pad_penalty = if k_rem != 0 {
        (k_rem as f64 / p.k as f64) * k.k_padding_cycles
    } else {
        0.0
    };
    let mut l_epilogue = (output_bytes / dram_bw + l_compute * penalty) * occ;
    if hw.variant == Variant::Origami {
        l_epilogue += k_pad_penalty;
    }
    let l_steady = l_compute.max(l_mem) * penalty;
    let iters = num_iter as f64;
    let mut l_tile = l_steady * iters
        + l_prologue
        + l_epilogue * k.epilogue_count
        + k.setup_cycles
        + k.loop_overhead_cycles * iters;
    if hw.variant == Variant::Seed {
        l_tile += k_pad_penalty;
    }

    // Algorithm 9.
    let l_total = l_tile * num_waves as f64;

    Breakdown {
        n_mma,
        l_mma_per_instr,
        l_compute,
        grid_m,
        grid_n,
        total_tiles,
        active_sms,
        num_waves,
        l2,
        load_a_bytes,
        load_b_bytes,
        per_sm_load_bytes,
        total_load_bytes,
        l2_bw_fraction,
        l_l2,
        dram_bw_fraction,
        load_dram_bytes,
        resident_footprint_bytes: resident,
        l_dram,
        l_mem,
        utilization,
        penalty,
        l_prologue,
        output_bytes,
        l_epilogue,
        num_iter,
        k_pad_penalty,
        l_steady,
        l_tile,
        l_total,
    }
}

/// Total latency of one launch of a tile: the tile's breakdown adjusted for the launch's
/// pipeline depth (`stage_latency_cycles`) and tensor-core path (`compute_scale`
/// multiplies L_compute: 1 for the family's base MMA, 1 / wgmma_speedup on wgmma). With the
/// pipeline model off and a scale of 1 this is `b.l_total`.
pub fn launch_total(b: &Breakdown, stages: u32, compute_scale: f64, k: &ModelConstants) -> f64 {
    if k.stage_latency_cycles <= 0.0 && compute_scale == 1.0 {
        return b.l_total;
    }
    let lc = b.l_compute * compute_scale;
    let mut steady = lc.max(b.l_mem);
    if k.stage_latency_cycles > 0.0 {
        let in_flight = f64::from(stages.max(2) - 1);
        steady = steady.max((k.stage_latency_cycles + b.l_mem + lc) / in_flight);
    }
    let occ = occupancy_discount(k);
    let iters = b.num_iter as f64;
    let d_steady = (steady * b.penalty - b.l_steady) * iters;
    let d_epilogue = (lc - b.l_compute) * b.penalty * occ * k.epilogue_count;
    (b.l_tile + d_steady + d_epilogue) * b.num_waves as f64
}

/// Default phase-1 GROUP_SIZE_M: ceil(sqrt(SMs)) (the NVIDIA port report, section 2.2).
pub fn default_group_m(sm_count: u32) -> u32 {
    (f64::from(sm_count)).sqrt().ceil() as u32
}

/// Work utilization M N K / (launched M x launched N x launched K) of a tile (BM, BN, BK)
/// (the NVIDIA port report, section 3.5).
#[inline]
pub fn work_utilization(m: u64, n: u64, k: u64, tile: (u64, u64, u64)) -> f64 {
    let (bm, bn, bk) = tile;
    let launched = (ceil_div(m, bm) * bm) as f64
        * (ceil_div(n, bn) * bn) as f64
        * (ceil_div(k, bk) * bk) as f64;
    m as f64 * n as f64 * k as f64 / launched
}

/// The occupancy discount of prologue and epilogue: occupancy_decay ^ occupancy
/// (gemm.cpp).
#[inline]
fn occupancy_discount(k: &ModelConstants) -> f64 {
    if k.occupancy == 1.0 {
        k.occupancy_decay
    } else {
        k.occupancy_decay.powf(k.occupancy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;
    use crate::model::family::mma_sync_atom;

    #[test]
    fn seed_appendix_a_worked_example() {
        let doc = preset("rtx4090").unwrap();
        let k = ModelConstants::default();
        let hw = ModelInputs {
            gpu: &doc.gpu,
            params: &doc.params,
            constants: &k,
            variant: Variant::Seed,
        };
        let p = Problem::new(2048, 2048, 2048, Dtype::Fp16).unwrap();
        let b = predict(
            &p,
            (128, 256, 64),
            default_group_m(128),
            mma_sync_atom(Dtype::Fp16),
            &hw,
        );
        assert_eq!(default_group_m(128), 12);
        assert_eq!(b.n_mma, 1024);
        assert_eq!(b.l_compute, 8448.0);
        assert_eq!(
            (b.grid_m, b.grid_n, b.total_tiles, b.active_sms, b.num_waves),
            (16, 8, 128, 128, 1)
        );
        assert!((b.l2.hit - 0.917).abs() < 5e-4, "{}", b.l2.hit);
        assert_eq!(b.load_a_bytes, 16_384.0);
        assert_eq!(b.load_b_bytes, 32_768.0);
        assert_eq!(b.total_load_bytes, 6_291_456.0);
        assert_eq!(b.l_l2.round(), 3318.0);
        assert!((b.load_dram_bytes - 524_288.0).abs() < 1.0);
        assert_eq!(b.l_dram.round(), 2152.0);
        assert_eq!(b.l_mem.round(), 3318.0);
        assert_eq!(b.l_prologue.round(), 4729.0);
        assert_eq!(b.output_bytes, 8_388_608.0);
        assert_eq!(b.l_epilogue.round(), 31_266.0);
        assert_eq!(b.num_iter, 31);
        assert_eq!(b.l_steady, 8448.0);
        assert!((b.l_tile - 344_650.0).abs() <= 1.0, "{}", b.l_tile);
        assert_eq!(b.l_total, b.l_tile);
    }

    #[test]
    fn origami_reference_work_utilization() {
        let t = (256, 256, 64);
        // 0.998 to 3 places.
        assert_eq!((work_utilization(4351, 3839, 959, t) * 1e3).round(), 998.0);
        // 3000 / 4194304 = 7.1526e-4: the reference prints 7.152e-4 (4 digits, truncated).
        let u = work_utilization(10, 20, 15, t);
        assert_eq!((u * 1e7).floor(), 7152.0, "{u}");
        assert_eq!(work_utilization(128, 81920, 1024, t), 0.5);
    }

    #[test]
    fn launch_total_reduces_to_the_tile_when_off_and_orders_stages_when_on() {
        let doc = preset("h200").unwrap();
        let mut k = ModelConstants::default();
        let p = Problem::new(8192, 8192, 8192, Dtype::Fp16).unwrap();
        let at = |k: &ModelConstants| {
            let hw = ModelInputs {
                gpu: &doc.gpu,
                params: &doc.params,
                constants: k,
                variant: Variant::Origami,
            };
            predict(&p, (128, 128, 64), 12, mma_sync_atom(Dtype::Fp16), &hw)
        };
        let b = at(&k);
        assert_eq!(launch_total(&b, 2, 1.0, &k), b.l_total);
        k.stage_latency_cycles = 5000.0;
        let b = at(&k);
        let (s2, s3, s4) = (
            launch_total(&b, 2, 1.0, &k),
            launch_total(&b, 3, 1.0, &k),
            launch_total(&b, 4, 1.0, &k),
        );
        assert!(
            s2 > s3 && s3 >= s4 && s4 >= b.l_total,
            "{s2} {s3} {s4} {}",
            b.l_total
        );
        // A faster tensor-core path never predicts more time.
        assert!(launch_total(&b, 4, 0.5, &k) <= s4);
    }
}
