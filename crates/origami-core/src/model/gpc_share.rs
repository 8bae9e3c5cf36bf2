//! The share of a persistent launch's tensor-descriptor boxes that reach the L2 once per GPC
//! (this project; issue 11). Nsight Compute on an H100 counts fewer L2 sectors read than
//! the boxes of Triton's persistent matmul ask for (0.46-0.90 of them, moving with the tile,
//! the grid and GROUP_SIZE_M: docs/triton-tma.md); counting each box once per GPC among
//! the programs that run it at the same time, with the GPC of each program from the measured
//! block placement (`hw::topology`), follows those counts (docs/throughput.md, "GPC merge").
//!
//! Program p of P = min(tiles, SMs) walks tiles p, p + P, ... in Triton's grouped order
//! (`group::grouped_tile`); round r runs tiles rP .. rP + P at once. Per round and GPC the
//! distinct rows of tiles (A's boxes) and distinct columns (B's), over the programs that ran
//! (one A and one B box each), over up to [`ROUNDS`] rounds spread over the launch.

use super::group::grouped_tile;
use crate::hw::topology::SmTopology;

/// Rounds sampled per launch (evenly spread; all of them when fewer).
pub const ROUNDS: u64 = 4;

/// Distinct boxes per GPC over the boxes asked for, of each operand (1: none shared inside a
/// GPC).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistinctShare {
    /// A's boxes (tile rows).
    pub a: f64,
    /// B's boxes (tile columns).
    pub b: f64,
}

/// [`DistinctShare`] of a `grid_m` x `grid_n` grid in grouped order at `group_m`, with one
/// program per block of a launch of min(tiles, SMs) blocks placed as `topology` measured.
/// `None` when the topology has no launch of that size or the grid is empty.
pub fn distinct_share(
    topology: &SmTopology,
    grid_m: u64,
    grid_n: u64,
    group_m: u32,
) -> Option<DistinctShare> {
    let tiles = grid_m.checked_mul(grid_n)?;
    if tiles == 0 {
        return None;
    }
    let programs = tiles.min(topology.max_blocks());
    let gpcs = topology.block_gpcs(programs)?;
    let rounds = tiles.div_ceil(programs);
    let sampled = rounds.min(ROUNDS);
    let g = u64::from(group_m.max(1));
    let (mut rows_seen, mut cols_seen, mut ran) = (0usize, 0usize, 0usize);
    let mut rows: Vec<(u16, u64)> = Vec::with_capacity(gpcs.len());
    let mut cols: Vec<(u16, u64)> = Vec::with_capacity(gpcs.len());
    for i in 0..sampled {
        let round = i * rounds / sampled;
        rows.clear();
        cols.clear();
        for (p, &gpc) in gpcs.iter().enumerate() {
            let t = round * programs + p as u64;
            if t >= tiles {
                break;
            }
            let (m, n) = grouped_tile(t, grid_m, grid_n, g);
            rows.push((gpc, m));
            cols.push((gpc, n));
        }
        ran += rows.len();
        rows_seen += count_distinct(&mut rows);
        cols_seen += count_distinct(&mut cols);
    }
    (ran > 0).then(|| DistinctShare {
        a: rows_seen as f64 / ran as f64,
        b: cols_seen as f64 / ran as f64,
    })
}

fn count_distinct(v: &mut [(u16, u64)]) -> usize {
    v.sort_unstable();
    v.iter()
        .enumerate()
        .filter(|&(i, x)| i == 0 || v[i - 1] != *x)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sms` SMs in GPCs of `per_gpc`, every launch of P blocks filling GPC 0 first, then 1, ...
    fn contiguous(sms: u32, per_gpc: u32) -> SmTopology {
        let gpc: Vec<Option<u16>> = (0..sms).map(|s| Some((s / per_gpc) as u16)).collect();
        let launches: Vec<Vec<u32>> = (1..=sms).map(|p| (0..p).collect()).collect();
        SmTopology::from_parts(&gpc, &launches).unwrap()
    }

    fn share(t: &SmTopology, gm: u64, gn: u64, g: u32) -> (f64, f64) {
        let d = distinct_share(t, gm, gn, g).unwrap();
        (d.a, d.b)
    }

    #[test]
    fn one_gpc_per_program_shares_nothing() {
        let t = contiguous(8, 1);
        assert_eq!(share(&t, 4, 2, 1), (1.0, 1.0));
    }

    #[test]
    fn one_gpc_reads_each_row_and_column_once() {
        // 8 programs in one GPC on a 4 x 2 grid: 4 A rows and 2 B columns for 8 tiles
        let t = contiguous(8, 8);
        assert_eq!(share(&t, 4, 2, 4), (0.5, 0.25));
    }

    #[test]
    fn the_group_decides_who_shares() {
        // 4 programs in GPCs of two on a 2 x 2 grid. Group 1 (a row at a time): GPC 0 runs
        // (0,0),(0,1): one A row, two B columns; GPC 1 the same on row 1. Group 2 (a column at
        // a time): GPC 0 runs (0,0),(1,0): two rows, one column.
        let t = contiguous(4, 2);
        assert_eq!(share(&t, 2, 2, 1), (0.5, 1.0));
        assert_eq!(share(&t, 2, 2, 2), (1.0, 0.5));
    }

    #[test]
    fn rounds_and_a_short_last_round_are_counted() {
        // 10 tiles on 4 programs: rounds of 4, 4 and 2 tiles, all sampled; every round's
        // tiles in distinct rows of one column
        let t = contiguous(4, 4);
        assert_eq!(share(&t, 10, 1, 1), (1.0, 3.0 / 10.0));
    }

    #[test]
    fn empty_grids_and_missing_launches_give_none() {
        let t = contiguous(4, 2);
        assert_eq!(distinct_share(&t, 0, 3, 8), None);
        // more tiles than SMs: the launch of all 4 blocks is used
        assert!(distinct_share(&t, 100, 100, 8).is_some());
    }

    #[test]
    fn the_h100_placement_gives_the_counts_of_the_counter_fit() {
        // the same numbers as scripts/triton/gpc_merge_fit.py (python/tests pins them too)
        let doc = crate::hw::presets::preset("h100-sxm").unwrap();
        let t = SmTopology::for_gpu(&doc.gpu).unwrap();
        // 4096^3 in 128 x 64 tiles: 32 x 64, four rounds of 132 programs
        assert_eq!(share(t, 32, 64, 8), (256.0 / 528.0, 76.0 / 528.0));
        // 4100x576x7168 in 128 x 256 tiles: 33 x 3, one round of 99
        assert_eq!(share(t, 33, 3, 8), (83.0 / 99.0, 18.0 / 99.0));
    }
}
