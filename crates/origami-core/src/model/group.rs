//! Phase 2 of the selection (the NVIDIA port report, section 2.2): GROUP_SIZE_M from the
//! footprint of the tiles that run at once. The grouped launch order is Triton's
//! (GROUP_SIZE_M rows of tiles, M fastest), the order the `triton` and `origami` kernels
//! use. For each candidate group size the first `active` program ids are mapped to tiles, and
//! cost = unique tile rows x BLOCK_M + unique tile columns x BLOCK_N.
//! The minimum wins. On a tie the smallest GROUP_SIZE_M wins (the NVIDIA port report's
//! rule, which its published picks follow), or the largest when the calibration constant
//! `phase2_prefer_larger_group` is 1: ties happen when every candidate covers the same rows
//! and columns (often the whole grid is resident), and on the H200 Triton measurements the
//! larger group was faster among tied ones (results/h200/triton/group_ties.txt). A family
//! whose kernel was measured to want consecutive CTAs on the larger operand's tile when
//! the whole grid is resident (`KernelFamily::one_wave_groups_by_operand`: the hopper
//! kernel) breaks that tie by the operands instead (`Selector::phase2`).

use serde::Serialize;

/// Candidate group sizes (the NVIDIA port report, section 2.2).
pub const GROUP_SIZES: [u32; 8] = [1, 2, 3, 4, 5, 6, 8, 16];

/// Tile (row, column) of program `pid` in Triton's grouped order.
pub fn grouped_tile(pid: u64, grid_m: u64, grid_n: u64, group_m: u64) -> (u64, u64) {
    let width = group_m * grid_n;
    let group_id = pid / width;
    let first_m = group_id * group_m;
    let gsz = (grid_m - first_m).min(group_m);
    let local = pid % width;
    (first_m + local % gsz, local / gsz)
}

/// One row of the phase-2 table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GroupCost {
    pub group_m: u32,
    pub unique_rows: u64,
    pub unique_cols: u64,
    pub cost: u64,
}

/// Footprint cost of one group size, in closed form. The first `n` program ids fill
/// q = n / (G grid_N) whole groups, which cover min(q G, grid_M) rows and every column,
/// then `rem` ids of group q, which cover min(rows of group q, rem) rows and, when no whole
/// group precedes, ceil(rem / rows of group q) columns.
pub fn group_cost(
    grid_m: u64,
    grid_n: u64,
    active: u64,
    block_m: u32,
    block_n: u32,
    group_m: u32,
) -> GroupCost {
    let g = u64::from(group_m).max(1);
    let n = active.min(grid_m * grid_n);
    let width = g * grid_n;
    let (q, rem) = (n / width, n % width);
    let full_rows = (q * g).min(grid_m);
    let (mut rows, mut cols) = (full_rows, if q > 0 { grid_n } else { 0 });
    if rem > 0 {
        let gsz = (grid_m - q * g).min(g);
        rows += gsz.min(rem);
        if q == 0 {
            cols = rem.div_ceil(gsz).min(grid_n);
        }
    }
    GroupCost {
        group_m,
        unique_rows: rows,
        unique_cols: cols,
        cost: rows * u64::from(block_m) + cols * u64::from(block_n),
    }
}

/// The same cost by walking the launch order (the definition; used to test the closed form).
pub fn group_cost_simulated(
    grid_m: u64,
    grid_n: u64,
    active: u64,
    block_m: u32,
    block_n: u32,
    group_m: u32,
) -> GroupCost {
    let g = u64::from(group_m).max(1);
    let n = active.min(grid_m * grid_n);
    let (mut rows, mut cols): (Vec<u64>, Vec<u64>) = (0..n)
        .map(|pid| grouped_tile(pid, grid_m, grid_n, g))
        .unzip();
    rows.sort_unstable();
    rows.dedup();
    cols.sort_unstable();
    cols.dedup();
    let (ur, uc) = (rows.len() as u64, cols.len() as u64);
    GroupCost {
        group_m,
        unique_rows: ur,
        unique_cols: uc,
        cost: ur * u64::from(block_m) + uc * u64::from(block_n),
    }
}

/// The phase-2 table and the winner among the group sizes a family's kernel takes
/// (`sizes`; an empty list means [`GROUP_SIZES`]): minimum cost; ties to the smallest
/// group size, or to the largest with `prefer_larger`.
pub fn choose_group(
    sizes: &[u32],
    grid_m: u64,
    grid_n: u64,
    active: u64,
    block_m: u32,
    block_n: u32,
    prefer_larger: bool,
) -> (u32, Vec<GroupCost>) {
    let sizes = if sizes.is_empty() {
        &GROUP_SIZES[..]
    } else {
        sizes
    };
    let table: Vec<GroupCost> = sizes
        .iter()
        .map(|&g| group_cost(grid_m, grid_n, active, block_m, block_n, g))
        .collect();
    let mut best = table[0];
    for row in &table[1..] {
        if row.cost < best.cost || (prefer_larger && row.cost == best.cost) {
            best = *row;
        }
    }
    (best.group_m, table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triton_order_goes_down_the_group_first() {
        // grid 4 x 3, group 2: pids 0..5 cover rows 0-1 of all 3 columns, M fastest.
        let order: Vec<_> = (0..6).map(|p| grouped_tile(p, 4, 3, 2)).collect();
        assert_eq!(order, vec![(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]);
        // Last group has one row when grid_m is odd.
        assert_eq!(grouped_tile(12, 5, 3, 2), (4, 0));
    }

    #[test]
    fn every_tile_visited_once() {
        let (gm, gn) = (7, 5);
        for g in GROUP_SIZES {
            let mut seen: Vec<_> = (0..gm * gn)
                .map(|p| grouped_tile(p, gm, gn, u64::from(g)))
                .collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len() as u64, gm * gn, "group {g}");
        }
    }

    #[test]
    fn closed_form_matches_the_launch_order() {
        for gm in 1..=20u64 {
            for gn in 1..=20u64 {
                for active in [1u64, 3, 7, 16, 33, 100, 132, 500] {
                    for g in GROUP_SIZES {
                        assert_eq!(
                            group_cost(gm, gn, active, 64, 32, g),
                            group_cost_simulated(gm, gn, active, 64, 32, g),
                            "grid {gm}x{gn} active {active} g {g}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn square_8192_with_256_tiles_picks_8() {
        // 32 x 32 tiles, 128 active: g1 covers 4 rows x 32 columns (cost 9216); g8 and
        // g16 cover 8 x 16 and 16 x 8 (6144 each): the tie goes to 8.
        let (g, table) = choose_group(&GROUP_SIZES, 32, 32, 128, 256, 256, false);
        assert_eq!(g, 8);
        assert_eq!(table[0].cost, 9216);
        assert_eq!(table.iter().find(|r| r.group_m == 16).unwrap().cost, 6144);
    }

    #[test]
    fn tie_goes_to_smallest() {
        // All 128 tiles run at once: every group size costs the same; 1 wins.
        let (g, table) = choose_group(&GROUP_SIZES, 16, 8, 128, 128, 256, false);
        assert_eq!(g, 1);
        assert!(table.iter().all(|r| r.cost == table[0].cost));
        // With the larger-group rule the same tie goes to 16; a strict minimum is kept.
        assert_eq!(choose_group(&GROUP_SIZES, 16, 8, 128, 128, 256, true).0, 16);
        assert_eq!(
            choose_group(&GROUP_SIZES, 32, 32, 128, 256, 256, true).0,
            16
        );
        assert_eq!(
            choose_group(&GROUP_SIZES, 32, 32, 128, 256, 256, false).0,
            8
        );
    }
}
