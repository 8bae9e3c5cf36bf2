//! SM-throughput model of one launch (this project). The Origami latency model
//! (`latency.rs`) sees a tile and one block per SM; it cannot tell launches of one tile
//! apart, and it misses how many blocks share an SM. This model prices one launch:
//!
//! - blocks resident per SM `o` from the occupancy rules (`occupancy.rs`) with the
//!   family's compiled registers and shared memory;
//! - per K iteration a block asks its SM for tensor-core time (MMA atoms x
//!   `tp_mma_cycles`, scaled by the config's tensor-core path, plus `tp_iter_cycles` and
//!   `tp_warp_iter_cycles` per warp), shared-memory time (the copies' writes plus the warps'
//!   fragment reads (BM x WARPS_N + BN x WARPS_M) x BK elements, weighted by
//!   `tp_fragment_read_weight`, over `tp_smem_bytes_per_cycle`) and L2 time (its tiles'
//!   bytes over the SM's share of l2_perf_ratio, larger when fewer SMs than the GPU has
//!   run blocks: `tp_l2_active_exponent`, and smaller for tiles whose rows are 32 or 64
//!   contiguous bytes: `tp_l2_row_efficiency_32b` / `_64b`, measured by `origami-calibrate
//!   --only l2-rows`); `c` resident blocks ask for `c` times that;
//! - a block cannot iterate faster than one warp's MMA chain (MMAs per warp x
//!   `tp_warp_mma_cycles` + `tp_iter_latency_cycles`) nor than its pipeline delivers:
//!   (load round trip + its L2 time) / (S - 1)^`tp_stage_exponent` (Little's law with
//!   S - 1 stages in flight);
//! - an iteration of `c` blocks costs the largest of those (or their p-norm,
//!   `tp_smooth_exponent`); a block costs K iterations, the fill (`tp_prologue_loads` round
//!   trips plus `tp_prologue_transfer` stages' bytes over the SM's L2 share), the epilogue
//!   and its setup;
//! - an SM runs ceil(tiles / SMs) blocks, `o` at a time (the last round with the rest); a
//!   persistent program's last epilogue can be taken out of the overlap below and added
//!   after it (`tp_exposed_epilogue`), and the tiles at M's and N's edges, whose boxes hold
//!   zero-filled rows, can lengthen the programs that run them (`tp_zero_row_copy_weight`);
//!   when A, B and C fit in L2 together (a sweep's repeated launches keep them there) the
//!   pipeline's round trip can be a share of its own (`tp_resident_round_trip_share`);
//! - the launch cannot beat DRAM: compulsory A + B + C bytes when A and B fit in L2, else
//!   each round of resident blocks re-reads its group's A rows and B columns (A's and B's
//!   bytes at the share of the DRAM rate rows of 32 or 64 bytes get:
//!   `tp_dram_row_efficiency_32b` / `_64b`, `origami-calibrate --only dram-rows`).
//!
//! Its constants live in `ModelConstants` (`tp_*`); values fitted to a measured sweep go
//! into a calibration file (`origami-bench refit`, `calibrations/fitted/`), never into code.

use serde::Serialize;

use crate::constants::ModelConstants;
use crate::dtype::Dtype;

use super::family::{MmaAtom, PersistentLoop};
use super::gpc_share;
use super::inputs::{ceil_div, dram_bw_fraction, output_bytes_per_element, ModelInputs};
use super::problem::{Config, Problem};
use crate::hw::topology::SmTopology;

/// The problem-independent numbers of one launch (a selector computes them once).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LaunchStatic {
    pub bm: u64,
    pub bn: u64,
    pub bk: u64,
    pub warps: u32,
    pub stages: u32,
    /// Blocks resident per SM (at least 1).
    pub blocks_per_sm: u32,
    /// MMA atoms per block and K iteration.
    pub mma_per_iter: f64,
    /// Tensor-core time multiplier of the config's path (1 / wgmma_speedup on wgmma).
    pub compute_scale: f64,
    /// Bytes a block copies from global memory per K iteration.
    pub load_bytes: f64,
    /// Bytes the warps read from shared memory as fragments per K iteration.
    pub fragment_bytes: f64,
    /// A persistent tile loop (then one block per SM), if the kernel has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistent: Option<PersistentLoop>,
    /// The loads are whole tensor-descriptor boxes (rows past the edge zero-filled).
    pub whole_boxes: bool,
    /// Split-K factor asked for (1: none); the kernel makes every run non-empty
    /// ([`split_runs`]).
    pub split_k: u64,
    /// Stream-K ([`TileGrid::stream`]).
    pub stream_k: bool,
    /// CTAs in pairs sharing A's or B's loads by multicast ([`TileGrid::cluster`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cluster: bool,
    /// The kernel computes C^T = B A^T (`swap`): every prediction prices the transposed
    /// problem (`Problem::transposed_if`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub swap: bool,
}

impl LaunchStatic {
    /// `min_mma_n`: the narrowest N a tensor-core instruction of this config costs (0: the
    /// atom's; `tp_wgmma_min_n` for configs on wgmma, whose m64nNk16 instructions do not
    /// get cheaper below some N).
    pub fn new(
        c: &Config,
        warp_grid: (u32, u32),
        blocks_per_sm: u32,
        dtype: Dtype,
        atom: MmaAtom,
        compute_scale: f64,
        min_mma_n: f64,
    ) -> LaunchStatic {
        let (bm, bn, bk) = (
            u64::from(c.block_m),
            u64::from(c.block_n),
            u64::from(c.block_k),
        );
        let b = dtype.bytes();
        let (wm, wn) = (u64::from(warp_grid.0), u64::from(warp_grid.1));
        LaunchStatic {
            bm,
            bn,
            bk,
            warps: c.num_warps,
            stages: c.num_stages,
            blocks_per_sm: blocks_per_sm.max(1),
            mma_per_iter: (ceil_div(bm, u64::from(atom.m))
                * ceil_div(bn.max(min_mma_n as u64), u64::from(atom.n))
                * ceil_div(bk, u64::from(atom.k))) as f64,
            compute_scale,
            load_bytes: ((bm + bn) * bk) as f64 * b,
            fragment_bytes: ((bm * wn + bn * wm) * bk) as f64 * b,
            persistent: None,
            whole_boxes: false,
            split_k: u64::from(c.split_k.max(1)),
            stream_k: c.stream_k,
            cluster: c.switches.cluster,
            swap: c.switches.swap,
        }
    }

    /// The same launch, loading whole tensor-descriptor boxes when `whole_boxes`.
    pub fn with_whole_boxes(self, whole_boxes: bool) -> LaunchStatic {
        LaunchStatic {
            whole_boxes,
            ..self
        }
    }

    /// The same launch with its shared-memory operand reads counted as wgmma makes them
    /// (`tp_wgmma_operand_reads`): each m64nNk16 instruction reads its 64 rows of A and
    /// all of its warpgroup's B columns, so A's rows are read once per warpgroup along N
    /// (`warpgroups_n`) and B's columns once per 64 rows of BLOCK_M, whatever the
    /// warpgroups along M.
    pub fn with_wgmma_operand_reads(self, warpgroups_n: u32, dtype: Dtype) -> LaunchStatic {
        let m64_blocks = (self.bm / 64).max(1);
        LaunchStatic {
            fragment_bytes: ((self.bm * u64::from(warpgroups_n.max(1)) + self.bn * m64_blocks)
                * self.bk) as f64
                * dtype.bytes(),
            ..self
        }
    }

    /// The same launch as a persistent kernel's: one program (block) per SM.
    pub fn with_persistent(self, persistent: Option<PersistentLoop>) -> LaunchStatic {
        match persistent {
            Some(_) => LaunchStatic {
                blocks_per_sm: 1,
                persistent,
                ..self
            },
            None => self,
        }
    }
}

/// Every intermediate number of one prediction (cycles unless named otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ThroughputBreakdown {
    pub tiles: u64,
    pub blocks_per_sm: u32,
    /// Blocks the busiest SM runs.
    pub blocks_on_busiest_sm: u64,
    /// K iterations of one work item (a tile's, a split-K run's or a Stream-K range's).
    pub k_iters: u64,
    /// The launch's K iterations over all its tiles (tiles x the tile's K iterations,
    /// however split-K or Stream-K cuts them) and its work items (CTAs' worth of work:
    /// tiles, split-K runs, Stream-K ranges): what the energy model counts.
    pub iterations_total: u64,
    pub work_items: u64,
    /// One K iteration of `blocks_per_sm` blocks, by resource.
    pub iter_tensor: f64,
    pub iter_smem: f64,
    pub iter_l2: f64,
    pub iter_warp: f64,
    pub iter_pipeline: f64,
    /// Which of those bounds the iteration.
    pub iter_bound: &'static str,
    pub sm_cycles: f64,
    /// Of the busiest SM's cycles, those it waits rather than works: each K iteration's
    /// time beyond its own tensor-core and shared-memory work (what the L2, pipeline and
    /// warp-latency terms add) and the fills' load round trips (the energy model's idle
    /// share, `energy::Traffic::issue_busy`). Counted by [`predict_with`]; `None` from
    /// [`predict_on`], the selection's hot loop, which reads only `total`.
    pub memory_wait_cycles: Option<f64>,
    pub dram_bytes: f64,
    /// Of `dram_bytes`, those charged for the zero-filled rows of whole boxes
    /// (`tp_box_padding_weight` and `tp_box_padding_serial`): a time the copies take, not
    /// bytes DRAM moves.
    pub padding_dram_bytes: f64,
    pub dram_cycles: f64,
    /// The DRAM time of the zero-filled rows charged in series (`tp_box_padding_serial`),
    /// added to the overlap of `sm_cycles` and `dram_cycles`; their bytes are in
    /// `padding_dram_bytes`.
    pub padding_cycles: f64,
    /// Of `sm_cycles`, the persistent program's last epilogue taken out of the overlap and
    /// added after it (`tp_exposed_epilogue`; 0 otherwise).
    pub exposed_epilogue_cycles: f64,
    /// Of `sm_cycles`, what the tiles at M's and N's edges add to the busiest program: their
    /// zero-filled box rows copied at `tp_zero_row_copy_weight` real rows each
    /// ([`edge_tile_cycles`]; 0 otherwise).
    pub edge_tile_cycles: f64,
    pub total: f64,
}

struct Rates {
    mma: f64,
    warp_mma: f64,
    load_latency: f64,
    l2_per_sm: f64,
}

fn rates(hw: &ModelInputs<'_>) -> Rates {
    let k = hw.constants;
    let p = hw.params;
    let or = |v: f64, d: f64| if v > 0.0 { v } else { d };
    Rates {
        mma: or(
            k.tp_mma_cycles,
            p.mma_latency / f64::from(hw.gpu.tensor_cores_per_sm.max(1)),
        ),
        warp_mma: or(k.tp_warp_mma_cycles, p.mma_latency),
        load_latency: or(k.tp_load_latency_cycles, p.hbm_latency_penalty),
        l2_per_sm: p.l2_perf_ratio / f64::from(hw.gpu.sm_count.max(1)) * k.tp_l2_sm_share,
    }
}

/// The largest of `terms` when `p` is 0; else their p-norm (the bounds overlap imperfectly:
/// a resource near its limit still slows the others a little).
/// (The selection's hot path: p = 4 needs no division, other integers use `powi`,
/// half-integers `powi` and `sqrt`.)
fn combine(terms: &[f64], p: f64) -> f64 {
    if p == 4.0 {
        return terms
            .iter()
            .map(|t| {
                let t2 = t * t;
                t2 * t2
            })
            .sum::<f64>()
            .sqrt()
            .sqrt();
    }
    let m = terms.iter().cloned().fold(0.0, f64::max);
    if p <= 0.0 || m <= 0.0 {
        return m;
    }
    let sum: f64 = if p.fract() == 0.0 && p <= 64.0 {
        terms.iter().map(|t| (t / m).powi(p as i32)).sum()
    } else if p.fract() == 0.5 && p <= 64.0 {
        // x^(n + 1/2) = x^n sqrt(x): the fitted Hopper constants' 2.5 without `powf`
        let n = p.floor() as i32;
        terms
            .iter()
            .map(|t| {
                let x = t / m;
                x.powi(n) * x.sqrt()
            })
            .sum()
    } else {
        terms.iter().map(|t| (t / m).powf(p)).sum()
    };
    m * sum.powf(1.0 / p)
}

/// (S - 1)^exponent for S stages (at least one in flight), without `powf` for the common
/// exponents.
fn stages_in_flight(stages: u32, exponent: f64) -> f64 {
    let n = f64::from(stages.max(2) - 1);
    if exponent == 1.0 || n == 1.0 {
        n
    } else {
        n.powf(exponent)
    }
}

/// The problem-independent costs of one block of a launch, per K iteration and per block
/// (a selector computes them once per launch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockCosts {
    /// Per block and iteration, shared by the resident blocks: tensor/issue, shared memory,
    /// L2.
    pub tensor: f64,
    pub smem: f64,
    pub l2: f64,
    /// Per iteration, not shared: one warp's MMA chain, the pipeline (a load round trip
    /// and the stage's L2 time, over the stages in flight; the L2 part is `pipeline_l2`).
    pub warp: f64,
    pub pipeline: f64,
    pub pipeline_l2: f64,
    /// The fill's round trips plus the block setup.
    pub fixed: f64,
    /// The fill's round trips alone (`tp_prologue_loads` load latencies).
    pub fill: f64,
    /// Per resident block: the fill's stage transfers and the epilogue (the transfers'
    /// part is `fill_transfer`).
    pub per_block: f64,
    pub fill_transfer: f64,
}

impl BlockCosts {
    pub fn new(l: &LaunchStatic, hw: &ModelInputs<'_>) -> BlockCosts {
        let k = hw.constants;
        let r = rates(hw);
        let l2_one = l.load_bytes / r.l2_per_sm / row_efficiency(l, k);
        let in_flight = stages_in_flight(l.stages, k.tp_stage_exponent);
        BlockCosts {
            tensor: l.mma_per_iter * r.mma * l.compute_scale
                + k.tp_iter_cycles
                + k.tp_warp_iter_cycles * f64::from(l.warps),
            smem: (k.tp_fragment_read_weight * l.fragment_bytes + l.load_bytes)
                / k.tp_smem_bytes_per_cycle,
            l2: l2_one,
            warp: l.mma_per_iter / f64::from(l.warps.max(1)) * r.warp_mma * l.compute_scale
                + k.tp_iter_latency_cycles,
            pipeline: (r.load_latency + l2_one) / in_flight,
            pipeline_l2: l2_one / in_flight,
            fixed: k.tp_prologue_loads * r.load_latency + k.tp_block_setup_cycles,
            fill: k.tp_prologue_loads * r.load_latency,
            per_block: k.tp_prologue_transfer * l2_one
                + k.tp_epilogue_cycles * (l.bm * l.bn) as f64 / 4096.0,
            fill_transfer: k.tp_prologue_transfer * l2_one,
        }
    }

    /// The same costs with the pipeline's load round trip at `share` of its own (A, B and C
    /// resident in L2: `tp_resident_round_trip_share`); the stage's L2 time and the fill
    /// stay as they are.
    fn with_round_trip_share(&self, share: f64) -> BlockCosts {
        BlockCosts {
            pipeline: self.pipeline_l2 + share * (self.pipeline - self.pipeline_l2),
            ..*self
        }
    }

    /// The same costs when each active SM gets `speedup` times its L2 share (fewer SMs
    /// than the GPU has split the L2 bandwidth: `tp_l2_active_exponent`).
    fn with_l2_speedup(&self, speedup: f64) -> BlockCosts {
        if speedup == 1.0 {
            return *self;
        }
        let saved = 1.0 - 1.0 / speedup;
        BlockCosts {
            l2: self.l2 / speedup,
            pipeline: self.pipeline - self.pipeline_l2 * saved,
            pipeline_l2: self.pipeline_l2 / speedup,
            per_block: self.per_block - self.fill_transfer * saved,
            fill_transfer: self.fill_transfer / speedup,
            ..*self
        }
    }

    /// A block's epilogue: its per-block cost less the fill's stage transfers.
    fn epilogue(&self) -> f64 {
        self.per_block - self.fill_transfer
    }

    /// Whether every cost is a finite number at least 0 and each part at most its whole
    /// (then an L2 speedup leaves every cost at least 0: [`lower_bound`] holds).
    pub fn bounded_below(&self) -> bool {
        let all = [
            self.tensor,
            self.smem,
            self.l2,
            self.warp,
            self.pipeline,
            self.pipeline_l2,
            self.fixed,
            self.fill,
            self.per_block,
            self.fill_transfer,
        ];
        all.iter().all(|x| x.is_finite() && *x >= 0.0)
            && self.pipeline_l2 <= self.pipeline
            && self.fill_transfer <= self.per_block
            && self.fill <= self.fixed
    }

    /// One K iteration of `c` resident blocks, by resource.
    fn iteration(&self, c: f64) -> [f64; 5] {
        [
            c * self.tensor,
            c * self.smem,
            c * self.l2,
            self.warp,
            self.pipeline,
        ]
    }
}

/// Whether A, B and C fit in an L2 of `l2_bytes` together (then a sweep's repeated launches
/// keep them there: `tp_resident_round_trip_share`).
pub fn operands_fit_l2(p: &Problem, l2_bytes: u64) -> bool {
    let eb = p.dtype.bytes();
    let ab = p.m as f64 * p.k as f64 * eb + p.n as f64 * p.k as f64 * eb;
    let c = (p.m * p.n) as f64 * output_bytes_per_element(p.dtype);
    ab + c <= l2_bytes as f64
}

/// Bytes of the zero-filled rows of every box a launch loads: each tile row's A box past
/// M (loaded once per tile, so once per tile column) and each tile column's B box past N.
/// The copy engine fills them without reading memory, yet on the H100 a decode shape's
/// time grows with them as if they were read (docs/triton-tma.md); 0 for masked loads.
fn box_padding_bytes(p: &Problem, l: &LaunchStatic, grid_m: u64, grid_n: u64) -> f64 {
    if !l.whole_boxes {
        return 0.0;
    }
    let pad_rows_a = (grid_m * l.bm).saturating_sub(p.m) * grid_n;
    let pad_rows_b = (grid_n * l.bn).saturating_sub(p.n) * grid_m;
    (pad_rows_a + pad_rows_b) as f64 * p.k as f64 * p.dtype.bytes()
}

/// A tile's rows of A and B inside the matrices, averaged over the grid (M / grid_m of
/// BLOCK_M plus N / grid_n of BLOCK_N), and all its rows (BLOCK_M + BLOCK_N): what a K
/// step of it loads, in rows (the energy model's reads, `energy::inside_share`, too).
pub fn tile_rows(p: &Problem, l: &LaunchStatic, grid_m: u64, grid_n: u64) -> (f64, f64) {
    (
        p.m as f64 / grid_m.max(1) as f64 + p.n as f64 / grid_n.max(1) as f64,
        (l.bm + l.bn) as f64,
    )
}

/// `tp_masked_rows`: a tile's A and B bytes over those of its real rows (at least 1),
/// the real rows averaged over the grid (M / grid_m of BM, N / grid_n of BN); 1 when the
/// switch is off or the kernel loads whole boxes.
fn masked_rows_speedup(
    p: &Problem,
    l: &LaunchStatic,
    grid_m: u64,
    grid_n: u64,
    k: &ModelConstants,
) -> f64 {
    if k.tp_masked_rows != 1.0 || l.whole_boxes {
        return 1.0;
    }
    let (real, whole) = tile_rows(p, l, grid_m, grid_n);
    if real > 0.0 && real < whole {
        whole / real
    } else {
        1.0
    }
}

/// Cycles per 128 bytes of box that A's and B's boxes cost the copy engine when their row
/// pitch (K elements) is not a multiple of 128 bytes: `tp_box_row_cycles_16b` / `_32b` /
/// `_64b` for a pitch aligned to 16, 32 or 64 bytes at best; 0 for 128-byte rows and for
/// kernels that do not load whole boxes. (TMA needs 16-byte pitches; the family refuses
/// others.) Per byte, not per row: at 3000^3 128x128x128 runs no faster than 128x128x64.
fn misaligned_row_cycles(p: &Problem, l: &LaunchStatic, k: &ModelConstants) -> f64 {
    if !l.whole_boxes {
        return 0.0;
    }
    let pitch = (p.k as f64 * p.dtype.bytes()) as u64;
    if pitch % 128 == 0 {
        0.0
    } else if pitch % 64 == 0 {
        k.tp_box_row_cycles_64b
    } else if pitch % 32 == 0 {
        k.tp_box_row_cycles_32b
    } else {
        k.tp_box_row_cycles_16b
    }
}

/// The share of a rate that rows of `row_bytes` contiguous bytes get: `share_32` at most
/// 32 bytes, `share_64` at most 64, 1 above (a share that is not positive and finite: 1).
fn row_share(row_bytes: f64, share_32: f64, share_64: f64) -> f64 {
    let share = if row_bytes <= 32.0 {
        share_32
    } else if row_bytes <= 64.0 {
        share_64
    } else {
        1.0
    };
    if share > 0.0 && share.is_finite() {
        share
    } else {
        1.0
    }
}

/// The contiguous bytes of each operand row `l`'s tile reads per K iteration: BLOCK_K
/// elements (A is M x K and B is N x K in every family: K-contiguous); `None` for kernels
/// that load whole tensor-descriptor boxes (the copy engine's path, not measured so).
fn tile_row_bytes(l: &LaunchStatic) -> Option<f64> {
    let elements = ((l.bm + l.bn) * l.bk) as f64;
    (!l.whole_boxes && elements > 0.0).then(|| l.bk as f64 * l.load_bytes / elements)
}

/// The share of the L2 rate `l`'s loads get for the length of the rows they read (the next
/// row a pitch away): `tp_l2_row_efficiency_32b` / `_64b` for rows of at most 32 / 64
/// bytes, 1 for longer ones and for whole boxes.
pub fn row_efficiency(l: &LaunchStatic, k: &ModelConstants) -> f64 {
    tile_row_bytes(l).map_or(1.0, |b| {
        row_share(b, k.tp_l2_row_efficiency_32b, k.tp_l2_row_efficiency_64b)
    })
}

/// The same for the DRAM rate of A's and B's bytes when they stream from DRAM:
/// `tp_dram_row_efficiency_32b` / `_64b` (a tile walks its rows along K, one row segment
/// per iteration).
pub fn dram_row_efficiency(l: &LaunchStatic, k: &ModelConstants) -> f64 {
    tile_row_bytes(l).map_or(1.0, |b| {
        row_share(
            b,
            k.tp_dram_row_efficiency_32b,
            k.tp_dram_row_efficiency_64b,
        )
    })
}

/// The share of a launch's A and B box bytes the L2 does not serve again because
/// neighbouring programs load the same boxes at the same time (consecutive tile indices run
/// together): B's boxes when the grouped order walks down a tile column (a group of at least
/// two tile rows: `tp_l2_neighbour_share_b` of B's share of the tile's bytes), A's when
/// consecutive tiles walk one tile row (`tp_l2_neighbour_share_a` of A's share; the grid
/// needs two tile columns). 0 for kernels that do not load whole boxes. `group_m`: `None`
/// gives the larger of the two (what any GROUP_SIZE_M could save, for [`lower_bound`]).
fn neighbour_saving(
    l: &LaunchStatic,
    grid_m: u64,
    grid_n: u64,
    group_m: Option<u32>,
    k: &ModelConstants,
) -> f64 {
    let off = k.tp_l2_neighbour_share_b == 0.0 && k.tp_l2_neighbour_share_a == 0.0;
    if off || !l.whole_boxes || l.bm + l.bn == 0 {
        return 0.0;
    }
    let b_share = l.bn as f64 / (l.bm + l.bn) as f64;
    let down_column = if grid_m >= 2 {
        k.tp_l2_neighbour_share_b * b_share
    } else {
        0.0
    };
    let along_row = if grid_n >= 2 {
        k.tp_l2_neighbour_share_a * (1.0 - b_share)
    } else {
        0.0
    };
    let saving = match group_m {
        None => down_column.max(along_row),
        Some(g) if u64::from(g.max(1)).min(grid_m) >= 2 => down_column,
        Some(_) => along_row,
    };
    if saving.is_finite() {
        saving.clamp(0.0, 0.99)
    } else {
        0.0
    }
}

/// The share of a persistent launch's box bytes the L2 does not serve again because
/// programs of one GPC load the same boxes together: A's bytes times `tp_l2_gpc_merge_a` x
/// (1 - d_A) plus B's times `tp_l2_gpc_merge_b` x (1 - d_B), over both, d from
/// [`gpc_share::distinct_share`] at the kernel's own grouped order on the measured block
/// placement (`SmTopology::for_gpu`). 0 when both shares are 0, for kernels that do not load
/// whole boxes in a grouped persistent order, or on a GPU without a measured topology.
fn gpc_merge_saving(l: &LaunchStatic, grid_m: u64, grid_n: u64, hw: &ModelInputs<'_>) -> f64 {
    let k = hw.constants;
    let (ca, cb) = (k.tp_l2_gpc_merge_a, k.tp_l2_gpc_merge_b);
    if (ca <= 0.0 && cb <= 0.0) || !l.whole_boxes || l.bm + l.bn == 0 {
        return 0.0;
    }
    let Some(group) = l.persistent.and_then(|pl| pl.grouped_order) else {
        return 0.0;
    };
    let Some(topology) = SmTopology::for_gpu(hw.gpu) else {
        return 0.0;
    };
    gpc_share::distinct_share(topology, grid_m, grid_n, group).map_or(0.0, |d| {
        let saved = l.bm as f64 * ca.clamp(0.0, 1.0) * (1.0 - d.a)
            + l.bn as f64 * cb.clamp(0.0, 1.0) * (1.0 - d.b);
        (saved / (l.bm + l.bn) as f64).clamp(0.0, 0.99)
    })
}

/// Two savings of independent causes on the same bytes: 1 - (1 - a)(1 - b).
fn both_savings(a: f64, b: f64) -> f64 {
    1.0 - (1.0 - a) * (1.0 - b)
}

/// Predict one launch at GROUP_SIZE_M `group_m`.
pub fn predict(
    p: &Problem,
    l: &LaunchStatic,
    group_m: u32,
    hw: &ModelInputs<'_>,
) -> ThroughputBreakdown {
    predict_with(p, l, &BlockCosts::new(l, hw), group_m, hw)
}

/// What a problem fixes for every launch of one tile shape: the grid, the K iterations,
/// the busiest SM's tiles, the L2 share of the active SMs and the boxes' extra costs. A
/// selector computes it once per tile and problem, then prices each launch of the tile
/// ([`predict_on`]); the launches of one tile differ in warps, stages and residency only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TileGrid {
    bm: u64,
    bn: u64,
    bk: u64,
    grid_m: u64,
    grid_n: u64,
    tiles: u64,
    k_iters: u64,
    /// Tiles the busiest SM runs.
    busiest: u64,
    /// Each active SM's L2 share over the whole GPU's per-SM share (`tp_l2_active_exponent`),
    /// times the whole tile's bytes over its real rows' bytes (`tp_masked_rows`);
    /// `None`: neither applies.
    l2_speedup: Option<f64>,
    /// The `tp_masked_rows` part of `l2_speedup` (1: whole tiles).
    masked_speedup: f64,
    /// `misaligned_row_cycles`.
    row_cycles: f64,
    /// `box_padding_bytes` times `tp_box_padding_weight`: what the zero-filled rows cost
    /// in DRAM bytes.
    padding_dram_bytes: f64,
    /// `box_padding_bytes` times `tp_box_padding_serial`: the zero-filled rows' bytes whose
    /// DRAM time is added in series.
    padding_serial_bytes: f64,
    /// A's and B's bytes, and whether together they fit in L2.
    ab_bytes: f64,
    ab_fit_l2: bool,
    /// A, B and C stay in L2 between launches (`tp_l2_resident_inputs`): no DRAM bytes.
    l2_resident: bool,
    /// A, B and C fit in L2 together (`tp_resident_round_trip_share` applies).
    operands_fit_l2: bool,
    /// The bytes the launch writes: C's, or a split-K launch's partial tiles.
    output_bytes: f64,
    /// C's bytes.
    c_bytes: f64,
    /// Made for a launch that computes the transposed problem (`LaunchStatic::swap`).
    swap: bool,
    /// One split-K run's fp32 partial tiles over the whole of C (M x N x 4 bytes).
    partial_bytes_per_run: f64,
    /// DRAM bytes per cycle at this grid's active SMs.
    dram_bw: f64,
    /// The share of that rate A's and B's rows get ([`dram_row_efficiency`]).
    dram_row_share: f64,
    /// The largest [`neighbour_saving`] any GROUP_SIZE_M gives this grid (for
    /// [`lower_bound`]).
    max_neighbour_saving: f64,
    /// [`gpc_merge_saving`] of this grid (0: off).
    gpc_saving: f64,
}

impl TileGrid {
    /// The grid of `l`'s tile for `p` (any launch of the tile with the same `swap` gives the
    /// same grid; with `swap` it is the transposed problem's).
    pub fn new(p: &Problem, l: &LaunchStatic, hw: &ModelInputs<'_>) -> TileGrid {
        let p = &p.transposed_if(l.swap);
        let k = hw.constants;
        let sms = u64::from(hw.gpu.sm_count.max(1));
        let grid_m = ceil_div(p.m, l.bm);
        let grid_n = ceil_div(p.n, l.bn);
        let tiles = grid_m * grid_n;
        let active = tiles.min(sms).max(1);
        let eb = p.dtype.bytes();
        let ab_bytes = p.m as f64 * p.k as f64 * eb + p.n as f64 * p.k as f64 * eb;
        let c_bytes = (p.m * p.n) as f64 * output_bytes_per_element(p.dtype);
        let operands_fit = operands_fit_l2(p, hw.gpu.l2_bytes);
        let share = if k.tp_l2_active_exponent > 0.0 && active < sms {
            let ratio = sms as f64 / active as f64;
            if k.tp_l2_active_exponent == 1.0 {
                ratio
            } else {
                ratio.powf(k.tp_l2_active_exponent)
            }
        } else {
            1.0
        };
        // Fewer bytes per tile cross from L2 when rows past M and N are not copied: an L2
        // "speedup" of the whole tile's bytes over the real rows' bytes.
        let masked = masked_rows_speedup(p, l, grid_m, grid_n, k);
        let l2_speedup = (share * masked != 1.0).then_some(share * masked);
        let padding = box_padding_bytes(p, l, grid_m, grid_n);
        TileGrid {
            bm: l.bm,
            bn: l.bn,
            bk: l.bk,
            grid_m,
            grid_n,
            tiles,
            k_iters: ceil_div(p.k, l.bk),
            busiest: tiles.div_ceil(sms),
            l2_speedup,
            masked_speedup: masked,
            row_cycles: misaligned_row_cycles(p, l, k),
            padding_dram_bytes: padding * k.tp_box_padding_weight,
            padding_serial_bytes: padding * k.tp_box_padding_serial,
            ab_bytes,
            ab_fit_l2: ab_bytes < hw.gpu.l2_bytes as f64,
            l2_resident: k.tp_l2_resident_inputs == 1.0 && operands_fit,
            operands_fit_l2: operands_fit,
            output_bytes: c_bytes,
            c_bytes,
            swap: l.swap,
            partial_bytes_per_run: (p.m * p.n) as f64 * 4.0,
            dram_bw: hw.params.dram_perf_ratio
                * dram_bw_fraction(hw.params.dram_bw_coeff, tiles.min(sms)),
            dram_row_share: dram_row_efficiency(l, k),
            max_neighbour_saving: neighbour_saving(l, grid_m, grid_n, None, k),
            gpc_saving: gpc_merge_saving(l, grid_m, grid_n, hw),
        }
    }

    /// The cycles the zero-filled rows charged in series add to a launch of this grid
    /// (`tp_box_padding_serial`): their bytes at the DRAM rate, scaled as the DRAM term is;
    /// 0 when A, B and C stay in L2 (`tp_l2_resident_inputs`).
    fn padding_cycles(&self, k: &ModelConstants) -> f64 {
        if self.l2_resident || self.padding_serial_bytes == 0.0 {
            0.0
        } else {
            k.tp_dram_scale * self.padding_serial_bytes / self.dram_bw
        }
    }
}

/// The tile id of tile row `pm` and column `pn` in the grouped order of the persistent
/// kernels (`_tile_coords` in python/origami_gemm/kernels/triton_tma.py): GROUP_SIZE_M rows
/// at a time, M fastest inside a group, the last group with the rows left.
fn grouped_tile_id(pm: u64, pn: u64, grid_m: u64, grid_n: u64, group_m: u64) -> u64 {
    let g = group_m.max(1);
    let first = pm / g * g;
    let rows = (grid_m - first).min(g);
    first * grid_n + pn * rows + (pm - first)
}

/// `tp_zero_row_copy_weight` (w > 1): what the tiles at M's and N's edges add to the busiest
/// persistent program. An edge tile's boxes hold zero-filled rows (past M in A's box, past N
/// in B's); the copy engine writes them without reading memory, yet on the H200 tile-pair
/// probe a 128x128 tile with 120 of its 128 A rows past M slowed its program where 128x256
/// and 64x256 tiles with as many or more zero rows did not: the zero rows cost the copies
/// more than the real rows they replace, which shows only where a K step has little else to
/// hide them behind. So an edge tile's K step is priced with its boxes' L2 time scaled by
/// (BM + BN + (w - 1) x zero rows) / (BM + BN) (`BlockCosts::with_l2_speedup`), each edge
/// tile adds K x (that step - a full tile's `it`) to the program that runs it (tile t on
/// program t mod programs, in the grouped order), and the launch grows by the most any
/// program then exceeds the busiest count of full tiles (`tile` cycles each). 0 when w <= 1,
/// for loads that are not whole boxes, and for a grid without edge rows.
#[allow(clippy::too_many_arguments)]
fn edge_tile_cycles(
    p: &Problem,
    l: &LaunchStatic,
    grid: &TileGrid,
    group_m: u32,
    sms: u64,
    costs: &BlockCosts,
    it: f64,
    tile: f64,
    k: &ModelConstants,
) -> f64 {
    let w = k.tp_zero_row_copy_weight;
    if w <= 1.0 || !l.whole_boxes || grid.tiles == 0 {
        return 0.0;
    }
    let (gm, gn) = (grid.grid_m, grid.grid_n);
    let pad_a = (gm * l.bm).saturating_sub(p.m);
    let pad_b = (gn * l.bn).saturating_sub(p.n);
    if pad_a == 0 && pad_b == 0 {
        return 0.0;
    }
    let rows = (l.bm + l.bn) as f64;
    let extra = |zero_rows: u64| -> f64 {
        if zero_rows == 0 {
            return 0.0;
        }
        let ratio = 1.0 + (w - 1.0) * zero_rows as f64 / rows;
        let step = combine(
            &costs.with_l2_speedup(1.0 / ratio).iteration(1.0),
            k.tp_smooth_exponent,
        );
        (grid.k_iters as f64 * (step - it)).max(0.0)
    };
    let (extra_a, extra_b) = (extra(pad_a), extra(pad_b));
    let extra_ab = if pad_a > 0 && pad_b > 0 {
        extra(pad_a + pad_b)
    } else {
        0.0
    };
    if extra_a == 0.0 && extra_b == 0.0 && extra_ab == 0.0 {
        return 0.0;
    }
    let programs = grid.tiles.min(sms).max(1);
    // on the stack for the GPUs there are (up to 256 SMs), on the heap beyond
    let mut stack = [0.0; 256];
    let mut heap = Vec::new();
    let per_program: &mut [f64] = if programs <= 256 {
        &mut stack[..programs as usize]
    } else {
        heap.resize(programs as usize, 0.0);
        &mut heap
    };
    add_edge_tiles(
        per_program,
        gm,
        gn,
        u64::from(group_m),
        pad_a > 0,
        pad_b > 0,
        (extra_a, extra_b, extra_ab),
    );
    // programs below `last` run the busiest count of tiles, the others one fewer
    let last = grid.tiles - (grid.busiest - 1) * programs;
    per_program
        .iter()
        .enumerate()
        .map(|(i, c)| if (i as u64) < last { *c } else { c - tile })
        .fold(0.0, f64::max)
}

/// Adds `cycles` to the program of each of `count` tile ids `start + j x step` (program = id
/// mod the programs, `per_program.len()`), in at most as many steps as there are programs:
/// the programs repeat with a period of programs / gcd(step, programs).
fn add_progression(per_program: &mut [f64], start: u64, step: u64, count: u64, cycles: f64) {
    let programs = per_program.len() as u64;
    if count == 0 || cycles == 0.0 || programs == 0 {
        return;
    }
    let step = step % programs;
    let period = if step == 0 {
        1
    } else {
        programs / gcd(step, programs)
    };
    let start = start % programs;
    for j in 0..count.min(period) {
        let times = (count - 1 - j) / period + 1;
        per_program[((start + j * step) % programs) as usize] += times as f64 * cycles;
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The edge tiles' extra cycles `(a, b, corner)` added to the programs that run them
/// ([`add_progression`]): the last tile row's (`a` when rows pass M), the last tile
/// column's (`b` when columns pass N), the tile in both (`corner`), in the grouped order
/// ([`grouped_tile_id`]). The work is at most about the programs times the smaller of the
/// group size and the groups, whatever the grid.
fn add_edge_tiles(
    per_program: &mut [f64],
    gm: u64,
    gn: u64,
    group_m: u64,
    past_m: bool,
    past_n: bool,
    (a, b, corner): (f64, f64, f64),
) {
    let g = group_m.max(1);
    if past_m {
        // the last row: one group's ids, `rows` apart
        let first = (gm - 1) / g * g;
        let start = grouped_tile_id(gm - 1, 0, gm, gn, g);
        let rows = (gm - first).min(g);
        add_progression(per_program, start, rows, gn - u64::from(past_n), a);
        if past_n {
            add_progression(
                per_program,
                grouped_tile_id(gm - 1, gn - 1, gm, gn, g),
                0,
                1,
                corner,
            );
        }
    }
    if past_n {
        // the last column: in each full group `g` consecutive ids, groups g x gn ids apart;
        // then the last, partial group's rows; the corner left out when it was counted above
        let full = gm / g;
        let rest = gm - full * g;
        let corner_in_full = past_m && rest == 0;
        let first_id = grouped_tile_id(0, gn - 1, gm, gn, g);
        if full <= g {
            for group in 0..full {
                let count = g - u64::from(corner_in_full && group + 1 == full);
                add_progression(per_program, first_id + group * g * gn, 1, count, b);
            }
        } else {
            for i in 0..g {
                let count = full - u64::from(corner_in_full && i + 1 == g);
                add_progression(per_program, first_id + i, g * gn, count, b);
            }
        }
        if rest > 0 {
            let start = grouped_tile_id(full * g, gn - 1, gm, gn, g);
            add_progression(per_program, start, 1, rest - u64::from(past_m), b);
        }
    }
}

/// (K iterations per run, runs) of a split-K factor over `k_iters` K iterations, as the
/// kernel cuts them (csrc/hopper_gemm.cu): runs of ceil(k_iters / split) iterations, so
/// that every run is non-empty (8 iterations split 3 ways: runs of 3, 3 and 2; 4 split 3
/// ways: 2 runs of 2).
pub fn split_runs(k_iters: u64, split_k: u64) -> (u64, u64) {
    let per = k_iters.div_ceil(split_k.max(1)).max(1);
    (per, k_iters.div_ceil(per).max(1))
}

impl TileGrid {
    /// The L2 speedup of this tile's launch on `active` SMs: the active SMs' share
    /// (`tp_l2_active_exponent`) times the masked rows' (`tp_masked_rows`), as
    /// [`TileGrid::new`] has it for the tiles' own launch.
    fn l2_speedup_at(&self, active: u64, hw: &ModelInputs<'_>) -> Option<f64> {
        let k = hw.constants;
        let sms = u64::from(hw.gpu.sm_count.max(1));
        let share = if k.tp_l2_active_exponent > 0.0 && active < sms {
            (sms as f64 / active as f64).powf(k.tp_l2_active_exponent)
        } else {
            1.0
        };
        let both = share * self.masked_speedup;
        (both != 1.0).then_some(both)
    }

    /// The grid of a split-K launch of the same tile: every tile's K iterations in `runs`
    /// work items of `per` iterations spread over the SMs, each writing an fp32 partial
    /// tile (the kernel's workspace) instead of C; C's bytes move to the reduction
    /// ([`reduction_cycles`]). A and B are still read once per tile and K iteration.
    pub fn split(&self, split_k: u64, hw: &ModelInputs<'_>) -> (TileGrid, u64) {
        let (per, runs) = split_runs(self.k_iters, split_k);
        if runs <= 1 {
            return (*self, 1);
        }
        let sms = u64::from(hw.gpu.sm_count.max(1));
        let work = self.tiles * runs;
        let active = work.min(sms).max(1);
        let grid = TileGrid {
            k_iters: per,
            busiest: work.div_ceil(sms),
            l2_speedup: self.l2_speedup_at(active, hw),
            dram_bw: hw.params.dram_perf_ratio * dram_bw_fraction(hw.params.dram_bw_coeff, active),
            output_bytes: self.partial_bytes_per_run * runs as f64,
            ..*self
        };
        (grid, runs)
    }
}

/// How a clustered launch pairs its tiles (csrc/hopper_gemm.cu, HG_CLUSTER 2): along M (two
/// tile rows of one column share B's slice, `along_n` false) or along N (two tile columns of
/// one row share A's), whichever leaves the fewer pairs (a last odd row or column is paired
/// with one past the edge); on a tie, the one that shares the wider operand slice (B when
/// BN >= BM). The kernel's `pair_n` argument and the tensor maps' half boxes follow it; one
/// rule for the runner and the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterPairing {
    pub along_n: bool,
    /// Pairs of tiles (the clustered launch's work items).
    pub pairs: u64,
}

/// The pairing of a `grid_m` x `grid_n` grid of `bm` x `bn` tiles ([`ClusterPairing`]).
pub fn cluster_pairing(grid_m: u64, grid_n: u64, bm: u64, bn: u64) -> ClusterPairing {
    let along_m = grid_m.div_ceil(2) * grid_n;
    let along_n = grid_m * grid_n.div_ceil(2);
    if along_n < along_m || (along_n == along_m && bm > bn) {
        ClusterPairing {
            along_n: true,
            pairs: along_n,
        }
    } else {
        ClusterPairing {
            along_n: false,
            pairs: along_m,
        }
    }
}

impl TileGrid {
    /// The grid of a clustered launch of the same tile (csrc/hopper_gemm.cu, HG_CLUSTER 2):
    /// pairs of CTAs take pairs of tiles ([`cluster_pairing`]: two tile rows of one column,
    /// or two columns of one row), at most one pair per two SMs, so the busiest CTA runs
    /// ceil(pairs / (SMs / 2)) tiles; each CTA reads its own operand slice and half of the
    /// shared one from L2 and gets the other half from its peer's multicast: the L2 bytes
    /// per K iteration fall from (BM + BN) BK to (BM + BN / 2) BK (pairs along M) or
    /// (BM / 2 + BN) BK (along N), an L2 speedup of their ratio.
    pub fn cluster(&self, hw: &ModelInputs<'_>) -> TileGrid {
        let sms = u64::from(hw.gpu.sm_count.max(2));
        let pairing = cluster_pairing(self.grid_m, self.grid_n, self.bm, self.bn);
        let (bm, bn) = (self.bm as f64, self.bn as f64);
        let share = if pairing.along_n {
            (bm + bn) / (bm / 2.0 + bn)
        } else {
            (bm + bn) / (bm + bn / 2.0)
        };
        TileGrid {
            busiest: pairing.pairs.div_ceil(sms / 2),
            l2_speedup: Some(self.l2_speedup.unwrap_or(1.0) * share),
            ..*self
        }
    }
}

/// What a Stream-K range costs its CTA beyond its iterations: the tiles it touches (each
/// an epilogue, `segments`), and the fix-up of a tile shared with later CTAs (their fp32
/// partial tiles, `contributors` of them, read back through L2 by the tile's first CTA;
/// the CTA's own partial tile written once when its range starts inside a tile).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamShare {
    pub segments: u64,
    pub contributors: u64,
    /// Whether ranges and tiles line up (every CTA holds whole tiles: no hand-over).
    pub aligned: bool,
}

/// The first tile of a Stream-K launch's ranges (csrc/hopper_gemm.cu's
/// `WorkIter::stream_k_first_tile`, the same rule): the tiles before it run whole, in
/// rounds of `ctas`; the ranges take the last partial round and one whole round before it
/// (every tile with fewer than two rounds, none with a whole number of rounds).
pub fn stream_k_first_tile(tiles: u64, ctas: u64) -> u64 {
    let ctas = ctas.max(1);
    if tiles % ctas == 0 {
        tiles
    } else {
        (tiles / ctas).saturating_sub(1) * ctas
    }
}

/// How a Stream-K launch shares its work out: its CTAs, the whole rounds each runs first,
/// the iterations of the ranges after them and the most a CTA's range holds.
struct StreamRounds {
    ctas: u64,
    rounds: u64,
    ranged: u64,
    per: u64,
}

impl TileGrid {
    /// The grid of a Stream-K launch of the same tile (csrc/hopper_gemm.cu's `WorkIter`):
    /// min(SMs, iterations) CTAs run the tiles before [`stream_k_first_tile`] whole, in
    /// rounds, then the rest's K iterations cut into ranges of at most ceil(iterations /
    /// CTAs); the busiest CTA runs its rounds' and its range's iterations, over
    /// [`StreamShare::segments`] tiles. A and B are read as by the tiles' launch.
    pub fn stream(&self, hw: &ModelInputs<'_>) -> (TileGrid, StreamShare) {
        let StreamRounds {
            ctas,
            rounds,
            ranged,
            per,
        } = self.stream_rounds(hw);
        let kt = self.k_iters.max(1);
        let aligned = ranged % ctas == 0 && per % kt == 0;
        let share = StreamShare {
            segments: rounds + per.div_ceil(kt) + u64::from(!aligned),
            contributors: if aligned { 0 } else { kt.div_ceil(per) },
            aligned,
        };
        let grid = TileGrid {
            k_iters: rounds * kt + per,
            busiest: 1,
            l2_speedup: self.l2_speedup_at(ctas, hw),
            dram_bw: hw.params.dram_perf_ratio * dram_bw_fraction(hw.params.dram_bw_coeff, ctas),
            ..*self
        };
        (grid, share)
    }

    fn stream_rounds(&self, hw: &ModelInputs<'_>) -> StreamRounds {
        let sms = u64::from(hw.gpu.sm_count.max(1));
        let kt = self.k_iters.max(1);
        let ctas = (self.tiles * kt).min(sms).max(1);
        let first = stream_k_first_tile(self.tiles, ctas);
        let ranged = (self.tiles - first) * kt;
        StreamRounds {
            ctas,
            rounds: first / ctas,
            ranged,
            per: ranged.div_ceil(ctas),
        }
    }

    /// The share of the busiest Stream-K CTA's iterations that its range holds (the rest
    /// are the whole tiles of the rounds before it): 0 with whole rounds only, 1 with fewer
    /// than two rounds.
    pub fn stream_range_share(&self, hw: &ModelInputs<'_>) -> f64 {
        let r = self.stream_rounds(hw);
        let all = r.rounds * self.k_iters.max(1) + r.per;
        if all == 0 {
            0.0
        } else {
            r.per as f64 / all as f64
        }
    }
}

/// Stream-K's cycles on the busiest CTA beyond one tile's epilogue: the other segments'
/// epilogues, its own partial tile written (an epilogue in fp32: twice a 16-bit tile's
/// bytes) and the contributors' partial tiles read at its L2 rate.
fn stream_cycles(share: &StreamShare, l: &LaunchStatic, costs: &BlockCosts) -> f64 {
    let epilogue = costs.epilogue();
    let extra_segments = share.segments.saturating_sub(1) as f64 * costs.per_block;
    if share.aligned {
        return extra_segments;
    }
    let partial_bytes = (l.bm * l.bn) as f64 * 4.0;
    let l2_per_byte = if l.load_bytes > 0.0 {
        costs.l2 / l.load_bytes
    } else {
        0.0
    };
    extra_segments + 2.0 * epilogue + share.contributors as f64 * partial_bytes * l2_per_byte
}

/// The reduction of a split-K launch, cycles: a second kernel reads the `runs` fp32 partial
/// tiles and writes C at the whole GPU's DRAM rate (`dram_perf_ratio`, without the GEMM's
/// effective `tp_dram_scale`: a streaming kernel moves its bytes at the measured rate),
/// plus `tp_splitk_reduce_cycles` for its launch and the wait between the two kernels; 0
/// without a split.
fn reduction_cycles(grid: &TileGrid, runs: u64, hw: &ModelInputs<'_>) -> f64 {
    if runs <= 1 {
        return 0.0;
    }
    let k = hw.constants;
    let full_bw = hw.params.dram_perf_ratio
        * dram_bw_fraction(hw.params.dram_bw_coeff, u64::from(hw.gpu.sm_count.max(1)));
    let bytes = grid.partial_bytes_per_run * runs as f64 + grid.c_bytes;
    bytes / full_bw + k.tp_splitk_reduce_cycles
}

/// A lower bound on [`predict_on`]'s total for every launch of a tile on `grid`, given the
/// least over those launches of max(tensor, smem) (`floor_core`) and of the L2 time
/// (`floor_l2`) of a block per iteration, and of the fill and setup a launch pays at
/// least once (`floor_fixed`, `BlockCosts::fixed`: an L2 speedup leaves it as it is).
/// Why it holds: an iteration of `c` resident
/// blocks costs at least `c` times each of those terms (a p-norm is at least its largest
/// term), the busiest SM runs `busiest` blocks of `k_iters` iterations in all, it pays the
/// fill and setup at least once (a round of blocks, or a persistent CTA's first fill and
/// setup), and every other term (epilogue, further fills, pipeline) adds; the active SMs' L2 speedup divides
/// the L2 term at most by `l2_speedup`, the misaligned rows only add to it; DRAM moves at
/// least A + B (compulsory, priced at their rows' share of the rate as the prediction
/// prices them) plus C and the boxes' padding (nothing when they stay in L2:
/// `tp_l2_resident_inputs`); the final p-norm grows with
/// each of its terms, and the padding charged in series (`tp_box_padding_serial`) is added
/// after it as in the prediction; the last epilogue the prediction moves out of the p-norm
/// and adds after it (`tp_exposed_epilogue`) only lengthens it (Minkowski), so it is left
/// out. It needs the costs non-negative (`BlockCosts::bounded_below`) and the constants of
/// [`bound_holds`].
pub fn lower_bound(
    grid: &TileGrid,
    floor_core: f64,
    floor_l2: f64,
    floor_fixed: f64,
    hw: &ModelInputs<'_>,
) -> f64 {
    let k = hw.constants;
    let saving = both_savings(grid.max_neighbour_saving, grid.gpc_saving);
    let l2 = floor_l2 / grid.l2_speedup.unwrap_or(1.0) * (1.0 - saving);
    let sm = grid.busiest as f64 * grid.k_iters as f64 * floor_core.max(l2) + floor_fixed;
    // A's and B's bytes at their rows' share of the rate, as `predict_on` prices them
    let dram_time_bytes = if grid.l2_resident {
        0.0
    } else {
        grid.ab_bytes / grid.dram_row_share + grid.output_bytes + grid.padding_dram_bytes
    };
    let dram = k.tp_dram_scale * dram_time_bytes / grid.dram_bw;
    k.tp_time_scale * (combine(&[sm, dram], k.tp_smooth_exponent) + grid.padding_cycles(k))
}

/// Whether the constants keep [`lower_bound`] a bound: positive time and DRAM scales, an
/// L2 speedup of at least 1 and no negative cost for a misaligned box row.
pub fn bound_holds(k: &ModelConstants) -> bool {
    k.tp_time_scale > 0.0
        && k.tp_dram_scale >= 0.0
        && k.tp_l2_active_exponent >= 0.0
        && k.tp_box_row_cycles_16b >= 0.0
        && k.tp_box_row_cycles_32b >= 0.0
        && k.tp_box_row_cycles_64b >= 0.0
        && (k.tp_smooth_exponent == 0.0 || k.tp_smooth_exponent >= 1.0)
}

/// Predict one launch at GROUP_SIZE_M `group_m` from its block costs.
pub fn predict_with(
    p: &Problem,
    l: &LaunchStatic,
    costs: &BlockCosts,
    group_m: u32,
    hw: &ModelInputs<'_>,
) -> ThroughputBreakdown {
    predict_on_counting::<true>(p, &TileGrid::new(p, l, hw), l, costs, group_m, hw)
}

/// Predict one launch at GROUP_SIZE_M `group_m` on its tile's grid (`grid` made from a
/// launch of the same tile and the same problem), without the waiting cycles. Inlined: a
/// caller that reads only `total` (the selection's hot loop) pays for nothing else.
#[inline]
pub fn predict_on(
    p: &Problem,
    grid: &TileGrid,
    l: &LaunchStatic,
    costs: &BlockCosts,
    group_m: u32,
    hw: &ModelInputs<'_>,
) -> ThroughputBreakdown {
    predict_on_counting::<false>(p, grid, l, costs, group_m, hw)
}

/// [`predict_on`], counting the waiting cycles (`memory_wait_cycles`) when `WAIT`.
#[inline(always)]
fn predict_on_counting<const WAIT: bool>(
    p: &Problem,
    grid: &TileGrid,
    l: &LaunchStatic,
    costs: &BlockCosts,
    group_m: u32,
    hw: &ModelInputs<'_>,
) -> ThroughputBreakdown {
    debug_assert_eq!(
        (grid.bm, grid.bn, grid.bk, grid.swap),
        (l.bm, l.bn, l.bk, l.swap)
    );
    let p = &p.transposed_if(l.swap);
    let k = hw.constants;
    let sms = u64::from(hw.gpu.sm_count.max(1));
    let split;
    let (grid, runs) = if l.split_k > 1 {
        split = grid.split(l.split_k, hw);
        (&split.0, split.1)
    } else {
        (grid, 1)
    };
    let streamed;
    let (grid, stream) = if l.stream_k {
        streamed = grid.stream(hw);
        (&streamed.0, Some(streamed.1))
    } else {
        (grid, None)
    };
    let clustered;
    let grid = if l.cluster {
        clustered = grid.cluster(hw);
        &clustered
    } else {
        grid
    };
    let TileGrid {
        grid_m,
        grid_n,
        tiles,
        k_iters,
        busiest,
        ..
    } = *grid;
    let iterations_total = tiles * ceil_div(p.k, l.bk);
    let work_items = if stream.is_some() {
        iterations_total.min(sms).max(1)
    } else {
        tiles * runs
    };
    let o = u64::from(l.blocks_per_sm);
    let mut adjusted = grid.l2_speedup.map(|s| costs.with_l2_speedup(s));
    let saving = both_savings(
        neighbour_saving(l, grid_m, grid_n, Some(group_m), k),
        grid.gpc_saving,
    );
    if saving > 0.0 {
        adjusted = Some(
            adjusted
                .unwrap_or(*costs)
                .with_l2_speedup(1.0 / (1.0 - saving)),
        );
    }
    if grid.row_cycles > 0.0 {
        let mut c = adjusted.unwrap_or(*costs);
        c.l2 += l.load_bytes / 128.0 * grid.row_cycles;
        adjusted = Some(c);
    }
    if k.tp_resident_round_trip_share != 1.0 && grid.operands_fit_l2 {
        adjusted = Some(
            adjusted
                .unwrap_or(*costs)
                .with_round_trip_share(k.tp_resident_round_trip_share),
        );
    }
    if runs > 1 {
        // a run's epilogue writes its fp32 partial tile: twice a 16-bit C tile's bytes
        let mut c = adjusted.unwrap_or(*costs);
        c.per_block += c.epilogue();
        adjusted = Some(c);
    }
    let costs = adjusted.as_ref().unwrap_or(costs);

    // One K iteration of a round (the p-norm of its terms), and with `WAIT` its time beyond
    // the SM's own work (tensor cores, shared memory): what the energy model counts as
    // waiting.
    let iteration = |terms: &[f64; 5]| -> (f64, f64) {
        let it = combine(terms, k.tp_smooth_exponent);
        let wait = if WAIT {
            (it - terms[0].max(terms[1])).max(0.0)
        } else {
            0.0
        };
        (it, wait)
    };
    let block_rounds =
        |it: f64, c: f64| -> f64 { k_iters as f64 * it + costs.fixed + c * costs.per_block };
    let mut memory_wait_cycles = 0.0;
    let (full_rounds, rest) = if o == 1 {
        (busiest, 0)
    } else {
        (busiest / o, busiest % o)
    };
    let mut sm_cycles = 0.0;
    let mut edge_cycles = 0.0;
    // The terms of the largest round (reported in the breakdown).
    let mut terms = [0.0; 5];
    if let Some(pl) = l.persistent {
        // One program per SM: its tiles in turn, each K iterations, the epilogue and (unless
        // the loop is flattened) the fill; the set-up and the first fill once.
        terms = costs.iteration(1.0);
        let (it, wait) = iteration(&terms);
        let fills = if pl.overlapped_fill { 1 } else { busiest };
        memory_wait_cycles = busiest as f64 * k_iters as f64 * wait + fills as f64 * costs.fill;
        let tile = k_iters as f64 * it + costs.per_block;
        if stream.is_none() && runs == 1 && !l.cluster {
            edge_cycles = edge_tile_cycles(p, l, grid, group_m, sms, costs, it, tile, k);
        }
        sm_cycles = busiest as f64 * tile
            + edge_cycles
            + fills as f64 * costs.fill
            + (costs.fixed - costs.fill)
            + stream.map_or(0.0, |s| stream_cycles(&s, l, costs));
    } else if full_rounds > 0 {
        terms = costs.iteration(o as f64);
        let (it, wait) = iteration(&terms);
        sm_cycles += full_rounds as f64 * block_rounds(it, o as f64);
        memory_wait_cycles += full_rounds as f64 * (k_iters as f64 * wait + costs.fill);
    }
    if rest > 0 {
        let t = costs.iteration(rest as f64);
        let (it, wait) = iteration(&t);
        sm_cycles += block_rounds(it, rest as f64);
        memory_wait_cycles += k_iters as f64 * wait + costs.fill;
        if full_rounds == 0 {
            terms = t;
        }
    }

    // A persistent program's last epilogue (`tp_exposed_epilogue`): nothing follows it to
    // overlap with; its store is the tiles' real share of C.
    let exposed_epilogue_cycles =
        if k.tp_exposed_epilogue > 0.0 && l.persistent.is_some() && stream.is_none() && runs == 1 {
            let real = p.m as f64 * p.n as f64 / (tiles.max(1) as f64 * (l.bm * l.bn) as f64);
            (k.tp_exposed_epilogue * costs.epilogue() * real.min(1.0))
                .clamp(0.0, sm_cycles.max(0.0))
        } else {
            0.0
        };

    // DRAM: compulsory traffic, or per round of resident blocks the A rows and B columns
    // of its group when A and B do not fit in L2.
    let ab = grid.ab_bytes;
    let input_bytes = if grid.ab_fit_l2 {
        ab
    } else {
        let resident = tiles.min(sms * o).max(1);
        let gm = u64::from(group_m.max(1)).min(grid_m).min(resident);
        let gn = grid_n.min(resident.div_ceil(gm));
        let rounds = tiles.div_ceil(resident);
        let per_round = (gm * l.bm + gn * l.bn) as f64 * p.k as f64 * p.dtype.bytes();
        ab.max(rounds as f64 * per_round)
    };
    let (dram_bytes, padding_dram_bytes) = if grid.l2_resident {
        (0.0, 0.0)
    } else {
        let padding = grid.padding_dram_bytes + grid.padding_serial_bytes;
        (input_bytes + grid.output_bytes + padding, padding)
    };
    // the rate A's and B's rows get is a share of the contiguous one; the bytes are the same
    let dram_time_bytes = if grid.l2_resident {
        0.0
    } else {
        input_bytes / grid.dram_row_share + grid.output_bytes + grid.padding_dram_bytes
    };
    let dram_cycles = k.tp_dram_scale * dram_time_bytes / grid.dram_bw;
    let padding_cycles = grid.padding_cycles(k);

    const NAMES: [&str; 5] = ["tensor", "smem", "l2", "warp", "pipeline"];
    let bound = (0..5)
        .max_by(|a, b| terms[*a].total_cmp(&terms[*b]))
        .map(|i| NAMES[i])
        .unwrap_or("tensor");
    ThroughputBreakdown {
        tiles,
        blocks_per_sm: l.blocks_per_sm,
        blocks_on_busiest_sm: busiest,
        k_iters,
        iterations_total,
        work_items,
        iter_tensor: terms[0],
        iter_smem: terms[1],
        iter_l2: terms[2],
        iter_warp: terms[3],
        iter_pipeline: terms[4],
        iter_bound: if dram_cycles > sm_cycles {
            "dram"
        } else {
            bound
        },
        sm_cycles,
        memory_wait_cycles: WAIT.then_some(memory_wait_cycles),
        dram_bytes,
        padding_dram_bytes,
        dram_cycles,
        padding_cycles,
        exposed_epilogue_cycles,
        edge_tile_cycles: edge_cycles,
        total: k.tp_time_scale
            * (combine(
                &[sm_cycles - exposed_epilogue_cycles, dram_cycles],
                k.tp_smooth_exponent,
            ) + exposed_epilogue_cycles
                + padding_cycles
                + reduction_cycles(grid, runs, hw)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constants::{ModelConstants, Scoring};
    use crate::hw::presets::preset;
    use crate::model::family::mma_sync_atom;
    use crate::model::latency::Variant;

    /// The model's inputs for a test: `doc`'s GPU and parameters, the constants `k`.
    fn inputs<'a>(doc: &'a crate::hw::HwDoc, k: &'a ModelConstants) -> ModelInputs<'a> {
        ModelInputs {
            gpu: &doc.gpu,
            params: &doc.params,
            constants: k,
            variant: Variant::Origami,
        }
    }

    fn cfg(text: &str) -> Config {
        crate::model::problem::parse_config(text).unwrap()
    }

    fn launch(c: &Config, o: u32) -> LaunchStatic {
        LaunchStatic::new(
            c,
            (2, 2),
            o,
            Dtype::Fp16,
            mma_sync_atom(Dtype::Fp16),
            1.0,
            0.0,
        )
    }

    #[test]
    fn launch_static_counts() {
        let l = launch(&cfg("128x128x64,w4,s3"), 2);
        assert_eq!(l.mma_per_iter, 512.0); // 8 x 16 x 4 m16n8k16
        assert_eq!(l.load_bytes, 32_768.0);
        // Each of the 2 x 2 warps reads a 64 x 64 A and B fragment of BK = 64.
        assert_eq!(l.fragment_bytes, 4.0 * (64.0 + 64.0) * 64.0 * 2.0);
    }

    #[test]
    fn short_rows_get_their_share_of_the_l2_rate() {
        let mut k = ModelConstants {
            tp_l2_row_efficiency_32b: 0.5,
            tp_l2_row_efficiency_64b: 0.8,
            ..ModelConstants::default()
        };
        // fp16 rows of BLOCK_K elements: 16 -> 32 bytes, 32 -> 64, 64 -> 128
        assert_eq!(
            row_efficiency(&launch(&cfg("128x128x16,w4,s3"), 2), &k),
            0.5
        );
        assert_eq!(
            row_efficiency(&launch(&cfg("128x128x32,w4,s3"), 2), &k),
            0.8
        );
        assert_eq!(
            row_efficiency(&launch(&cfg("128x128x64,w4,s3"), 2), &k),
            1.0
        );
        // whole tensor-descriptor boxes are the copy engine's: not priced so
        let boxes = launch(&cfg("128x128x16,w4,s3"), 2).with_whole_boxes(true);
        assert_eq!(row_efficiency(&boxes, &k), 1.0);
        // the defaults (1) leave every launch at the contiguous rate
        k = ModelConstants::default();
        assert_eq!(
            row_efficiency(&launch(&cfg("128x128x16,w4,s3"), 2), &k),
            1.0
        );
        // the L2 term of one iteration doubles at half the rate
        let doc = preset("h200").unwrap();
        let costs = |k: &ModelConstants| {
            let hw = inputs(&doc, k);
            BlockCosts::new(&launch(&cfg("128x128x16,w4,s3"), 2), &hw).l2
        };
        let half = ModelConstants {
            tp_l2_row_efficiency_32b: 0.5,
            ..ModelConstants::default()
        };
        assert!((costs(&half) - 2.0 * costs(&k)).abs() < 1e-9);
    }

    #[test]
    fn short_rows_from_dram_take_longer_for_the_same_bytes() {
        let doc = preset("h200").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            ..ModelConstants::default()
        };
        let slow = ModelConstants {
            tp_dram_row_efficiency_32b: 0.5,
            tp_dram_row_efficiency_64b: 0.8,
            ..base
        };
        assert_eq!(
            dram_row_efficiency(&launch(&cfg("16x64x16,w4,s3"), 2), &slow),
            0.5
        );
        assert_eq!(
            dram_row_efficiency(&launch(&cfg("16x64x32,w4,s3"), 2), &slow),
            0.8
        );
        assert_eq!(
            dram_row_efficiency(&launch(&cfg("16x64x64,w4,s3"), 2), &slow),
            1.0
        );
        let boxes = launch(&cfg("16x64x16,w4,s3"), 2).with_whole_boxes(true);
        assert_eq!(dram_row_efficiency(&boxes, &slow), 1.0);
        // a decode GEMM streaming B from DRAM: A's and B's bytes take twice the time at half
        // the rate, C's do not; the bytes (which the energy model counts) are the same
        let p = Problem::new(1, 57344, 8192, Dtype::Fp16).unwrap();
        let l = launch(&cfg("16x64x16,w4,s3"), 2);
        let run = |k: &ModelConstants| {
            let hw = inputs(&doc, k);
            let costs = BlockCosts::new(&l, &hw);
            let floor = lower_bound(
                &TileGrid::new(&p, &l, &hw),
                costs.tensor.max(costs.smem),
                costs.l2,
                costs.fixed,
                &hw,
            );
            (predict(&p, &l, 1, &hw), floor)
        };
        let ((b0, lb0), (b1, lb1)) = (run(&base), run(&slow));
        assert_eq!(b0.dram_bytes, b1.dram_bytes);
        let c = (p.m * p.n) as f64 * 2.0;
        let ab = b0.dram_bytes - c;
        let bw = b0.dram_bytes / b0.dram_cycles;
        assert!((b1.dram_cycles - (2.0 * ab + c) / bw).abs() < 1e-6 * b1.dram_cycles);
        // the lower bound stays one
        assert!(lb1 <= b1.total * (1.0 + 1e-9) && lb1 > lb0, "{lb0} {lb1}");
    }

    #[test]
    fn hand_computed_prediction() {
        // One tile (128 x 128, K = 128, two iterations) on an H200 with the derived rates.
        let doc = preset("h200").unwrap();
        let mut k = ModelConstants {
            throughput_model: Scoring::Throughput,
            ..ModelConstants::default()
        };
        k.tp_mma_cycles = 2.0;
        k.tp_warp_mma_cycles = 10.0;
        k.tp_load_latency_cycles = 800.0;
        let hw = inputs(&doc, &k);
        let p = Problem::new(128, 128, 128, Dtype::Fp16).unwrap();
        let l = launch(&cfg("128x128x64,w4,s3"), 2);
        let b = predict(&p, &l, 1, &hw);
        assert_eq!((b.tiles, b.blocks_on_busiest_sm, b.k_iters), (1, 1, 2));
        // Terms for one block: tensor 512 x 2; smem (65536 + 32768) / 128; warp 128 x 10;
        // pipeline (800 + 32768 / l2_per_sm) / 2.
        assert_eq!(b.iter_tensor, 1024.0);
        assert_eq!(b.iter_smem, 768.0);
        assert_eq!(b.iter_warp, 1280.0);
        let l2 = 32_768.0 / (doc.params.l2_perf_ratio / 132.0);
        assert!((b.iter_l2 - l2).abs() < 1e-9);
        assert!((b.iter_pipeline - (800.0 + l2) / 2.0).abs() < 1e-9);
        assert_eq!(b.iter_bound, "warp");
        // Two iterations of 1280 plus the fill of one round trip.
        assert!((b.sm_cycles - (2.0 * 1280.0 + 800.0)).abs() < 1e-9);
        assert!(b.total >= b.sm_cycles);
    }

    #[test]
    fn clusters_pair_along_the_dimension_that_leaves_fewer_pairs() {
        // 33 x 4 tiles: 17 x 4 = 68 pairs along M, 33 x 2 = 66 along N
        assert_eq!(
            cluster_pairing(33, 4, 128, 144),
            ClusterPairing {
                along_n: true,
                pairs: 66
            }
        );
        assert_eq!(cluster_pairing(4, 33, 128, 144).pairs, 66);
        assert!(!cluster_pairing(4, 33, 128, 144).along_n);
        // a tie shares the wider slice: B when BN >= BM, A otherwise
        assert!(!cluster_pairing(32, 4, 128, 144).along_n);
        assert!(cluster_pairing(32, 4, 256, 128).along_n);
        assert_eq!(cluster_pairing(1, 1, 64, 64).pairs, 1);
    }

    #[test]
    fn more_stages_or_blocks_never_slow_a_launch_down() {
        let doc = preset("h200").unwrap();
        let k = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_iter_latency_cycles: 300.0,
            ..ModelConstants::default()
        };
        let hw = inputs(&doc, &k);
        for (m, n, kk) in [(1, 4096, 4096), (4096, 4096, 4096), (333, 57344, 8192)] {
            let p = Problem::new(m, n, kk, Dtype::Fp16).unwrap();
            for (bm, bn, bk) in [(64, 64, 32), (128, 256, 64), (32, 128, 128)] {
                let t = |s: u32, o: u32| {
                    predict(
                        &p,
                        &launch(&cfg(&format!("{bm}x{bn}x{bk},w4,s{s}")), o),
                        8,
                        &hw,
                    )
                    .total
                };
                assert!(
                    t(3, 1) <= t(2, 1) && t(4, 1) <= t(3, 1),
                    "{m}x{n}x{kk} {bm}x{bn}x{bk}"
                );
                // A second resident block never costs more than running the two in turn.
                assert!(
                    t(3, 2) <= t(3, 1) * 1.000_001,
                    "{m}x{n}x{kk} {bm}x{bn}x{bk}"
                );
                assert!(t(3, 1).is_finite() && t(3, 1) > 0.0);
            }
        }
    }

    #[test]
    fn dram_bound_for_a_skinny_problem_when_bandwidth_is_scarce() {
        let doc = preset("h200").unwrap();
        let k = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_dram_scale: 50.0,
            ..ModelConstants::default()
        };
        let hw = inputs(&doc, &k);
        let p = Problem::new(1, 8192, 8192, Dtype::Fp16).unwrap();
        let b = predict(&p, &launch(&cfg("32x64x64,w4,s3"), 4), 1, &hw);
        assert_eq!(b.iter_bound, "dram");
        // B alone (128 MiB) is larger than L2: at least the compulsory bytes move.
        assert!(b.dram_bytes >= (8192.0 * 8192.0 + 8192.0 + 8192.0) * 2.0);
    }

    #[test]
    fn combine_is_the_max_or_a_p_norm() {
        assert_eq!(combine(&[3.0, 5.0, 1.0], 0.0), 5.0);
        let p4 = combine(&[3.0, 5.0, 1.0], 4.0);
        assert!(p4 > 5.0 && p4 < 9.0, "{p4}");
        assert!(combine(&[3.0, 5.0], 64.0) - 5.0 < 1e-3);
        assert_eq!(combine(&[0.0, 0.0], 4.0), 0.0);
        // the half-integer path agrees with powf to rounding
        for p in [0.5, 1.5, 2.5, 3.5] {
            let t = [3.0, 5.0, 1.0, 0.25];
            let m: f64 = 5.0;
            let want = m * t.iter().map(|x| (x / m).powf(p)).sum::<f64>().powf(1.0 / p);
            let got = combine(&t, p);
            assert!((got - want).abs() <= 1e-12 * want, "{p}: {got} vs {want}");
        }
    }

    #[test]
    fn per_warp_cost_and_first_stage_transfer_add_what_they_say() {
        let doc = preset("h200").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_mma_cycles: 2.0,
            tp_warp_mma_cycles: 1.0,
            tp_load_latency_cycles: 10.0,
            ..ModelConstants::default()
        };
        let p = Problem::new(128, 128, 128, Dtype::Fp16).unwrap();
        let l = launch(&cfg("128x128x64,w4,s3"), 2);
        let at = |k: &ModelConstants| {
            let hw = inputs(&doc, k);
            predict(&p, &l, 1, &hw)
        };
        let b0 = at(&base);
        assert_eq!(b0.iter_bound, "tensor");
        // 10 cycles per warp: the tensor term of the one resident block grows by 4 x 10.
        let b1 = at(&ModelConstants {
            tp_warp_iter_cycles: 10.0,
            ..base
        });
        assert_eq!(b1.iter_tensor - b0.iter_tensor, 40.0);
        // One stage's bytes (32 KiB) over the SM's L2 share join the fill.
        let b2 = at(&ModelConstants {
            tp_prologue_transfer: 1.0,
            ..base
        });
        let l2_per_sm = doc.params.l2_perf_ratio / 132.0;
        assert!((b2.sm_cycles - b0.sm_cycles - 32_768.0 / l2_per_sm).abs() < 1e-6);
    }
    #[test]
    fn zero_filled_box_rows_cost_dram_bytes_only_for_whole_box_loads() {
        let doc = preset("h100-sxm").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            ..ModelConstants::default()
        };
        // One token, N = 6144, K = 4096: 48 tiles of 64 x 128 in one tile row; A's box has
        // 63 zero-filled rows, loaded once per tile; N is a multiple of 128 (no B padding).
        let p = Problem::new(1, 6144, 4096, Dtype::Fp16).unwrap();
        let masked = launch(&cfg("64x128x128,w4,s4"), 1);
        let boxes = masked.with_whole_boxes(true);
        assert_eq!(
            box_padding_bytes(&p, &boxes, 1, 48),
            63.0 * 48.0 * 4096.0 * 2.0
        );
        assert_eq!(box_padding_bytes(&p, &masked, 1, 48), 0.0);
        let at = |k: &ModelConstants, l: &LaunchStatic| {
            let hw = inputs(&doc, k);
            predict(&p, l, 8, &hw)
        };
        let weighted = ModelConstants {
            tp_box_padding_weight: 1.0,
            ..base
        };
        // Weight 0 (the default) or masked loads: the compulsory bytes alone.
        assert_eq!(at(&base, &boxes).dram_bytes, at(&base, &masked).dram_bytes);
        assert_eq!(
            at(&weighted, &masked).dram_bytes,
            at(&base, &masked).dram_bytes
        );
        let extra = at(&weighted, &boxes).dram_bytes - at(&base, &boxes).dram_bytes;
        assert_eq!(extra, 63.0 * 48.0 * 4096.0 * 2.0);
        // B past N: 576 columns in tiles of 256 leave 192 zero-filled, per tile row.
        let q = Problem::new(4100, 576, 7168, Dtype::Fp16).unwrap();
        let l = launch(&cfg("128x256x64,w8,s3"), 1).with_whole_boxes(true);
        let pad_a = (33 * 128 - 4100) * 3;
        let pad_b = (3 * 256 - 576) * 33;
        assert_eq!(
            box_padding_bytes(&q, &l, 33, 3),
            ((pad_a + pad_b) * 7168 * 2) as f64
        );
    }

    #[test]
    fn operands_resident_in_l2_shorten_the_pipelines_round_trip_by_the_share() {
        let doc = preset("h100-sxm").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_load_latency_cycles: 4000.0,
            ..ModelConstants::default()
        };
        let half = ModelConstants {
            tp_resident_round_trip_share: 0.5,
            ..base
        };
        let at = |k: &ModelConstants, p: &Problem, l: &LaunchStatic| {
            let hw = inputs(&doc, k);
            predict(p, l, 8, &hw)
        };
        let l = launch(&cfg("64x64x64,w4,s3"), 1);
        // 1024^3: A, B and C 6 MiB, within the H100's 50 MiB of L2
        let small = Problem::new(1024, 1024, 1024, Dtype::Fp16).unwrap();
        let (b0, b1) = (at(&base, &small, &l), at(&half, &small, &l));
        let hw = inputs(&doc, &base);
        let costs = BlockCosts::new(&l, &hw);
        let latency_part = costs.pipeline - costs.pipeline_l2;
        assert!(latency_part > 0.0);
        assert!((b0.iter_pipeline - b1.iter_pipeline - 0.5 * latency_part).abs() < 1e-9);
        // the stage's L2 time and the fill stay: only the pipeline term moved
        assert_eq!(
            (b0.iter_tensor, b0.iter_smem, b0.iter_l2, b0.iter_warp),
            (b1.iter_tensor, b1.iter_smem, b1.iter_l2, b1.iter_warp)
        );
        assert!(b1.total <= b0.total);
        // 8192 x 8192 x 4096: 192 MiB, past L2: nothing changes
        let large = Problem::new(8192, 8192, 4096, Dtype::Fp16).unwrap();
        assert_eq!(at(&base, &large, &l).total, at(&half, &large, &l).total);
        // a share of 1 is the model without the term
        let one = ModelConstants {
            tp_resident_round_trip_share: 1.0,
            ..base
        };
        assert_eq!(at(&one, &small, &l).total, b0.total);
    }

    #[test]
    fn zero_filled_rows_charged_in_series_add_their_dram_time_after_the_overlap() {
        let doc = preset("h100-sxm").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            ..ModelConstants::default()
        };
        let serial = ModelConstants {
            tp_box_padding_serial: 1.0,
            ..base
        };
        let at = |k: &ModelConstants, p: &Problem, l: &LaunchStatic| {
            let hw = inputs(&doc, k);
            predict(p, l, 8, &hw)
        };
        // 2048 x 544: 32 x 3 tiles of 64 x 256, the last tile column 224 rows past N.
        let p = Problem::new(2048, 544, 7168, Dtype::Fp16).unwrap();
        let l = launch(&cfg("64x256x64,w4,s4"), 1).with_whole_boxes(true);
        let (b0, b1) = (at(&base, &p, &l), at(&serial, &p, &l));
        let bytes = ((3 * 256 - 544) * 32 * 7168 * 2) as f64;
        assert_eq!(b1.padding_dram_bytes, bytes);
        assert_eq!(b1.dram_bytes - b0.dram_bytes, bytes);
        // not in the DRAM term: after the overlap, at the DRAM rate the grid has
        assert_eq!(
            (b1.sm_cycles, b1.dram_cycles),
            (b0.sm_cycles, b0.dram_cycles)
        );
        let dram_bw = doc.params.dram_perf_ratio * dram_bw_fraction(doc.params.dram_bw_coeff, 96);
        assert!((b1.padding_cycles - bytes / dram_bw).abs() < 1e-6);
        assert!((b1.total - b0.total - base.tp_time_scale * b1.padding_cycles).abs() < 1e-6);
        // every row real (N = 768, the same grid), or masked loads: nothing added
        let q = Problem::new(2048, 768, 7168, Dtype::Fp16).unwrap();
        assert_eq!(at(&serial, &q, &l).padding_cycles, 0.0);
        assert_eq!(at(&serial, &q, &l).total, at(&base, &q, &l).total);
        let masked = launch(&cfg("64x256x64,w4,s4"), 1);
        assert_eq!(at(&serial, &p, &masked).total, at(&base, &p, &masked).total);
    }

    #[test]
    fn a_persistent_programs_last_epilogue_is_added_after_the_overlap_for_its_real_rows() {
        let doc = preset("h100-sxm").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_epilogue_cycles: 2000.0,
            tp_prologue_transfer: 1.0,
            tp_smooth_exponent: 4.0,
            ..ModelConstants::default()
        };
        let exposed = ModelConstants {
            tp_exposed_epilogue: 1.0,
            ..base
        };
        let persistent = |c: &str| {
            launch(&cfg(c), 1).with_persistent(Some(PersistentLoop {
                overlapped_fill: true,
                grouped_order: Some(8),
            }))
        };
        let at = |k: &ModelConstants, p: &Problem, l: &LaunchStatic| {
            let hw = inputs(&doc, k);
            (predict(p, l, 8, &hw), BlockCosts::new(l, &hw))
        };
        // 128 x 24576 x 1536: 96 programs of one 128 x 256 tile, every row real
        let p = Problem::new(128, 24576, 1536, Dtype::Fp16).unwrap();
        let l = persistent("128x256x64,w8,s3");
        let ((b0, _), (b1, costs)) = (at(&base, &p, &l), at(&exposed, &p, &l));
        let epilogue = costs.epilogue();
        assert!((epilogue - 2000.0 * 8.0).abs() < 1e-9);
        assert_eq!(b0.exposed_epilogue_cycles, 0.0);
        assert!((b1.exposed_epilogue_cycles - epilogue).abs() < 1e-9);
        assert_eq!(
            (b1.sm_cycles, b1.dram_cycles),
            (b0.sm_cycles, b0.dram_cycles)
        );
        let by_hand = combine(&[b1.sm_cycles - epilogue, b1.dram_cycles], 4.0) + epilogue;
        assert!((b1.total - base.tp_time_scale * by_hand).abs() < 1e-6);
        // out of a p-norm and added after it, a term can only lengthen the launch
        assert!(b1.total > b0.total);
        // 40 real rows of the 128: the store is their share of the tile
        let q = Problem::new(40, 24576, 1536, Dtype::Fp16).unwrap();
        let (b, _) = at(&exposed, &q, &l);
        assert!((b.exposed_epilogue_cycles - epilogue * 40.0 / 128.0).abs() < 1e-9);
        // a launch whose blocks are not a persistent program's: nothing exposed
        let plain = launch(&cfg("128x256x64,w8,s3"), 1);
        assert_eq!(
            at(&exposed, &p, &plain).0.total,
            at(&base, &p, &plain).0.total
        );
    }

    #[test]
    fn the_grouped_tile_id_inverts_the_kernels_tile_coordinates() {
        // _tile_coords in python/origami_gemm/kernels/triton_tma.py, for every tile id
        for (grid_m, grid_n, group) in [(5, 3, 2), (33, 12, 8), (1, 7, 8), (9, 4, 1), (8, 5, 8)] {
            for id in 0..grid_m * grid_n {
                let per_group = group * grid_n;
                let first = id / per_group * group;
                let rows = (grid_m - first).min(group);
                let in_group = id % per_group;
                let (pm, pn) = (first + in_group % rows, in_group / rows);
                assert_eq!(grouped_tile_id(pm, pn, grid_m, grid_n, group), id);
            }
        }
    }

    #[test]
    fn edge_tiles_reach_the_programs_the_kernels_order_gives_them() {
        // every tile id walked, (pm, pn) by the kernel's _tile_coords, against the
        // progressions of add_edge_tiles, on grids and program counts of every kind
        let (a, b, corner) = (1.0, 10.0, 100.0);
        for gm in 1..12u64 {
            for gn in 1..12u64 {
                for g in [1u64, 2, 3, 8, 20] {
                    for programs in [1u64, 5, 7, 16, 132] {
                        for (past_m, past_n) in [(true, false), (false, true), (true, true)] {
                            let mut want = vec![0.0; programs as usize];
                            for id in 0..gm * gn {
                                let first = id / (g * gn) * g;
                                let rows = (gm - first).min(g);
                                let in_group = id % (g * gn);
                                let (pm, pn) = (first + in_group % rows, in_group / rows);
                                let (on_m, on_n) = (past_m && pm + 1 == gm, past_n && pn + 1 == gn);
                                let c = match (on_m, on_n) {
                                    (true, true) => corner,
                                    (true, false) => a,
                                    (false, true) => b,
                                    _ => 0.0,
                                };
                                want[(id % programs) as usize] += c;
                            }
                            let mut got = vec![0.0; programs as usize];
                            add_edge_tiles(&mut got, gm, gn, g, past_m, past_n, (a, b, corner));
                            assert_eq!(got, want, "{gm}x{gn} tiles, group {g}, {programs} programs, {past_m} {past_n}");
                        }
                    }
                }
            }
        }
        // a grid of 2^26 tile columns costs as many steps as there are programs
        let mut per = vec![0.0; 132];
        add_edge_tiles(&mut per, 3, 1 << 26, 8, true, false, (1.0, 0.0, 0.0));
        assert_eq!(per.iter().sum::<f64>(), (1u64 << 26) as f64);
    }

    #[test]
    fn edge_tiles_with_zero_filled_rows_lengthen_the_programs_that_run_them() {
        let doc = preset("h100-sxm").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_smooth_exponent: 4.0,
            ..ModelConstants::default()
        };
        let weighted = |w: f64| ModelConstants {
            tp_zero_row_copy_weight: w,
            ..base
        };
        let l = launch(&cfg("128x128x64,w4,s5"), 1)
            .with_whole_boxes(true)
            .with_persistent(Some(PersistentLoop {
                overlapped_fill: true,
                grouped_order: Some(8),
            }));
        let at = |k: &ModelConstants, m: u64, n: u64| {
            let p = Problem::new(m, n, 7168, Dtype::Fp16).unwrap();
            predict(&p, &l, 8, &inputs(&doc, k))
        };
        let step = |k: &ModelConstants, zero_rows: f64| {
            let costs = BlockCosts::new(&l, &inputs(&doc, k));
            let ratio = 1.0 + (k.tp_zero_row_copy_weight - 1.0) * zero_rows / 256.0;
            combine(
                &costs.with_l2_speedup(1.0 / ratio).iteration(1.0),
                k.tp_smooth_exponent,
            )
        };
        let k = weighted(1.75);
        // 4104 x 1536: 33 x 12 = 396 tiles, 3 on every one of 132 programs; the last tile
        // row (120 of its 128 rows past M) runs on programs 120-131, one tile each
        let edge = at(&k, 4104, 1536);
        let delta = 112.0 * (step(&k, 120.0) - step(&k, 0.0));
        assert!(delta > 0.0);
        assert!((edge.edge_tile_cycles - delta).abs() < 1e-6 * delta);
        let off = at(&base, 4104, 1536);
        assert_eq!(off.edge_tile_cycles, 0.0);
        assert!((edge.sm_cycles - off.sm_cycles - delta).abs() < 1e-6 * delta);
        assert!(edge.total > off.total);
        // a weight of at most one row, or a grid without rows past M or N: nothing
        assert_eq!(at(&weighted(1.0), 4104, 1536).edge_tile_cycles, 0.0);
        assert_eq!(at(&k, 4096, 1536).edge_tile_cycles, 0.0);
        // 130 x 12800: 2 x 100 tiles in one group, the odd ids are the last row's; program 1
        // runs tiles 1 and 133, both at the edge, and pays for both
        let two = at(&k, 130, 12800);
        let delta2 = 112.0 * (step(&k, 126.0) - step(&k, 0.0));
        assert!((two.edge_tile_cycles - 2.0 * delta2).abs() < 1e-6 * delta2);
        // loads that are not whole boxes zero-fill nothing
        let masked = launch(&cfg("128x128x64,w4,s5"), 1).with_persistent(l.persistent);
        let p = Problem::new(4104, 1536, 7168, Dtype::Fp16).unwrap();
        assert_eq!(
            predict(&p, &masked, 8, &inputs(&doc, &k)).edge_tile_cycles,
            0.0
        );
    }

    #[test]
    fn fewer_active_sms_share_the_l2_bandwidth_when_asked() {
        let doc = preset("h100-sxm").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_load_latency_cycles: 500.0,
            tp_prologue_transfer: 1.0,
            ..ModelConstants::default()
        };
        let l = launch(&cfg("64x128x128,w4,s4"), 1);
        let at = |k: &ModelConstants, p: &Problem| {
            let hw = inputs(&doc, k);
            predict(p, &l, 8, &hw)
        };
        let split = ModelConstants {
            tp_l2_active_exponent: 1.0,
            ..base
        };
        let half = ModelConstants {
            tp_l2_active_exponent: 0.5,
            ..base
        };
        // 33 tiles on 132 SMs: each active SM gets 4x its share (2x at exponent 0.5).
        let few = Problem::new(64, 33 * 128, 4096, Dtype::Fp16).unwrap();
        let (b0, b1, bh) = (at(&base, &few), at(&split, &few), at(&half, &few));
        assert!((b0.iter_l2 / b1.iter_l2 - 4.0).abs() < 1e-9);
        assert!((b0.iter_l2 / bh.iter_l2 - 2.0).abs() < 1e-9);
        // The pipeline's L2 part shrinks the same way; its latency part does not.
        let in_flight = 3.0;
        assert!(
            ((b0.iter_pipeline - b1.iter_pipeline) - 0.75 * b0.iter_l2 / in_flight).abs() < 1e-6
        );
        // Every SM busy: the exponent changes nothing.
        let full = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        assert_eq!(at(&base, &full), at(&split, &full));
    }

    #[test]
    fn neighbouring_programs_save_the_shared_operands_l2_bytes_by_their_group() {
        let doc = preset("h100-sxm").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_load_latency_cycles: 500.0,
            ..ModelConstants::default()
        };
        let shared = ModelConstants {
            tp_l2_neighbour_share_b: 0.5,
            tp_l2_neighbour_share_a: 0.25,
            ..base
        };
        let p = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        // 128 x 64 tiles: B is a third of a tile's bytes, A two thirds.
        let boxes = launch(&cfg("128x64x64,w4,s4"), 1).with_whole_boxes(true);
        let l2 = |k: &ModelConstants, g: u32| predict(&p, &boxes, g, &inputs(&doc, k)).iter_l2;
        // grouped order (GROUP_SIZE_M 8): neighbours share B, half of B's third is saved
        assert!((l2(&shared, 8) / l2(&base, 8) - (1.0 - 0.5 / 3.0)).abs() < 1e-12);
        // one tile row to a group: neighbours share A, a quarter of A's two thirds
        assert!((l2(&shared, 1) / l2(&base, 1) - (1.0 - 0.25 * 2.0 / 3.0)).abs() < 1e-12);
        // copies of rows (masked loads, not whole boxes) are not priced so
        let rows = launch(&cfg("128x64x64,w4,s4"), 1);
        assert_eq!(
            predict(&p, &rows, 8, &inputs(&doc, &shared)),
            predict(&p, &rows, 8, &inputs(&doc, &base))
        );
        // one tile row and one tile column: nobody shares anything
        let one = Problem::new(128, 64, 4096, Dtype::Fp16).unwrap();
        assert_eq!(
            predict(&one, &boxes, 8, &inputs(&doc, &shared)).iter_l2,
            predict(&one, &boxes, 8, &inputs(&doc, &base)).iter_l2
        );
        // the selection's lower bound takes the larger saving, so it stays a bound at
        // every GROUP_SIZE_M
        let k = &inputs(&doc, &shared);
        let grid = TileGrid::new(&p, &boxes, k);
        let costs = BlockCosts::new(&boxes, k);
        let bound = lower_bound(
            &grid,
            costs.tensor.max(costs.smem),
            costs.l2,
            costs.fixed,
            k,
        );
        for g in [1, 2, 8, 16] {
            assert!(bound <= predict(&p, &boxes, g, k).total * (1.0 + 1e-12));
        }
    }

    #[test]
    fn programs_of_one_gpc_save_the_boxes_they_share() {
        let doc = preset("h100-sxm").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_load_latency_cycles: 500.0,
            ..ModelConstants::default()
        };
        let merged = ModelConstants {
            tp_l2_gpc_merge_a: 0.25,
            tp_l2_gpc_merge_b: 0.75,
            ..base
        };
        let grouped = |c: &str, group: Option<u32>| {
            launch(&cfg(c), 1)
                .with_whole_boxes(true)
                .with_persistent(Some(PersistentLoop {
                    overlapped_fill: false,
                    grouped_order: group,
                }))
        };
        let p = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        let l = grouped("128x64x64,w4,s4", Some(8));
        let l2 = |k: &ModelConstants, l: &LaunchStatic| predict(&p, l, 8, &inputs(&doc, k)).iter_l2;
        // the saving is the shares of the boxes the H100's GPCs do not load again
        let topology = SmTopology::for_gpu(&doc.gpu).expect("the H100's topology is embedded");
        let d = gpc_share::distinct_share(topology, 32, 64, 8).unwrap();
        let saved = (128.0 * 0.25 * (1.0 - d.a) + 64.0 * 0.75 * (1.0 - d.b)) / 192.0;
        assert!(saved > 0.1, "{d:?}");
        assert!((l2(&merged, &l) / l2(&base, &l) - (1.0 - saved)).abs() < 1e-9);
        // the kernel's own order decides, not the group the launch is priced at
        assert_eq!(
            predict(&p, &l, 1, &inputs(&doc, &merged)).iter_l2,
            l2(&merged, &l)
        );
        // a kernel in another order, or loading rows rather than whole boxes: no saving
        let other = grouped("128x64x64,w4,s4", None);
        assert_eq!(l2(&merged, &other), l2(&base, &other));
        let rows = launch(&cfg("128x64x64,w4,s4"), 1).with_persistent(Some(PersistentLoop {
            overlapped_fill: false,
            grouped_order: Some(8),
        }));
        assert_eq!(l2(&merged, &rows), l2(&base, &rows));
        // a GPU whose topology was never measured: no saving
        let h200 = preset("h200").unwrap();
        assert!(SmTopology::for_gpu(&h200.gpu).is_none());
        assert_eq!(
            predict(&p, &l, 8, &inputs(&h200, &merged)).iter_l2,
            predict(&p, &l, 8, &inputs(&h200, &base)).iter_l2
        );
        // the selection's lower bound counts the saving, and stays below the prediction
        let k = &inputs(&doc, &merged);
        let grid = TileGrid::new(&p, &l, k);
        let costs = BlockCosts::new(&l, k);
        let bound = lower_bound(
            &grid,
            costs.tensor.max(costs.smem),
            costs.l2,
            costs.fixed,
            k,
        );
        assert!(bound <= predict(&p, &l, 8, k).total * (1.0 + 1e-12));
    }

    #[test]
    fn wgmma_reads_b_once_per_64_rows_and_a_once_per_warpgroup_along_n() {
        // 128 x 64 on one warpgroup: two m64n64 instructions a k16 step, each reading its
        // 64 rows of A and the 64 columns of B: A 128 rows, B 2 x 64 columns
        let l = launch(&cfg("128x64x64,w4,s4"), 1).with_wgmma_operand_reads(1, Dtype::Fp16);
        assert_eq!(l.fragment_bytes, ((128 + 2 * 64) * 64 * 2) as f64);
        // 128 x 256 on two warpgroups stacked along M: B read once per 64 rows (twice)
        let l = launch(&cfg("128x256x64,w8,s3"), 1).with_wgmma_operand_reads(1, Dtype::Fp16);
        assert_eq!(l.fragment_bytes, ((128 + 2 * 256) * 64 * 2) as f64);
        // 64 x 256 on two warpgroups side by side along N: A read by both
        let l = launch(&cfg("64x256x64,w8,s3"), 1).with_wgmma_operand_reads(2, Dtype::Fp16);
        assert_eq!(l.fragment_bytes, ((2 * 64 + 256) * 64 * 2) as f64);
    }

    #[test]
    fn masked_rows_and_l2_resident_inputs_follow_their_switches() {
        let doc = preset("h100-sxm").unwrap();
        let base = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_load_latency_cycles: 500.0,
            ..ModelConstants::default()
        };
        let at = |k: &ModelConstants, p: &Problem, l: &LaunchStatic| {
            let hw = inputs(&doc, k);
            predict(p, l, 8, &hw)
        };
        let masked = ModelConstants {
            tp_masked_rows: 1.0,
            ..base
        };
        // One token, tiles of 16 x 256: 1 of A's 16 rows and all 256 of B's cross from L2.
        let decode = Problem::new(1, 32768, 512, Dtype::Fp16).unwrap();
        let l = launch(&cfg("16x256x64,w8,s4"), 1);
        let (b0, b1) = (at(&base, &decode, &l), at(&masked, &decode, &l));
        assert!((b0.iter_l2 / b1.iter_l2 - 272.0 / 257.0).abs() < 1e-9);
        // Whole tensor-descriptor boxes move every row.
        let boxes = l.with_whole_boxes(true);
        assert_eq!(
            at(&base, &decode, &boxes).iter_l2,
            at(&masked, &decode, &boxes).iter_l2
        );
        // Tiles that hold only real rows: nothing changes.
        let full = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        assert_eq!(at(&base, &full, &l), at(&masked, &full, &l));

        let resident = ModelConstants {
            tp_l2_resident_inputs: 1.0,
            ..base
        };
        // A + B + C = 32 MiB + 64 KiB fits the 50 MiB L2: no DRAM bytes when they stay.
        assert!(at(&base, &decode, &l).dram_bytes > 0.0);
        assert_eq!(at(&resident, &decode, &l).dram_bytes, 0.0);
        // 8192^3 (384 MiB) does not fit: its DRAM bytes stay.
        let big = Problem::new(8192, 8192, 8192, Dtype::Fp16).unwrap();
        assert_eq!(
            at(&base, &big, &l).dram_bytes,
            at(&resident, &big, &l).dram_bytes
        );
    }

    #[test]
    fn misaligned_rows_cost_per_box_byte_by_their_pitch() {
        let k = ModelConstants {
            tp_box_row_cycles_16b: 13.0,
            tp_box_row_cycles_32b: 6.0,
            tp_box_row_cycles_64b: 5.0,
            ..ModelConstants::default()
        };
        let boxes = launch(&cfg("128x256x64,w8,s3"), 1).with_whole_boxes(true);
        let masked = launch(&cfg("128x256x64,w8,s3"), 1);
        let at = |kk: u64, l: &LaunchStatic| {
            misaligned_row_cycles(&Problem::new(4096, 4096, kk, Dtype::Fp16).unwrap(), l, &k)
        };
        // K = 4096 / 4160: 8192- and 8320-byte rows (128-byte multiples); 4104: 8208 bytes
        // (16); 4112: 8224 (32); 4128: 8256 (64).
        assert_eq!(at(4096, &boxes), 0.0);
        assert_eq!(at(4160, &boxes), 0.0);
        assert_eq!(at(4104, &boxes), 13.0);
        assert_eq!(at(4112, &boxes), 6.0);
        assert_eq!(at(4128, &boxes), 5.0);
        assert_eq!(at(4104, &masked), 0.0);
        // In the L2 term: 48 KiB of boxes per iteration = 384 lots of 128 bytes.
        let doc = preset("h100-sxm").unwrap();
        let kc = ModelConstants {
            throughput_model: Scoring::Throughput,
            ..k
        };
        let hw = inputs(&doc, &kc);
        let aligned = predict(
            &Problem::new(4096, 4096, 4160, Dtype::Fp16).unwrap(),
            &boxes,
            8,
            &hw,
        );
        let sixteen = predict(
            &Problem::new(4096, 4096, 4104, Dtype::Fp16).unwrap(),
            &boxes,
            8,
            &hw,
        );
        assert!((sixteen.iter_l2 - aligned.iter_l2 - 384.0 * 13.0).abs() < 1e-9);
    }

    /// csrc/hopper_gemm.cu's `WorkIter` in Stream-K mode, mirrored: CTA `c`'s segments
    /// (tile, first K tile, end K tile) in the order it runs them.
    fn stream_k_walk(tiles: u64, kt: u64, g: u64, c: u64) -> Vec<(u64, u64, u64)> {
        let first = stream_k_first_tile(tiles, g);
        let range_start = |c: u64| {
            let total = tiles * kt - first * kt;
            first * kt + c * (total / g) + c.min(total % g)
        };
        let mut segs: Vec<(u64, u64, u64)> =
            (c..first).step_by(g as usize).map(|t| (t, 0, kt)).collect();
        let (start, mut end) = (range_start(c), range_start(c + 1));
        while end > start {
            let t = (end - 1) / kt;
            let piece = start.max(t * kt);
            segs.push((t, piece - t * kt, end - t * kt));
            end = piece;
        }
        segs
    }

    #[test]
    fn the_stream_k_walk_runs_every_iteration_once_and_its_waits_close_no_cycle() {
        for (tiles, kt, g) in (1..200u64)
            .flat_map(|t| [1, 2, 3, 7, 64, 224].map(move |k| (t, k)))
            .flat_map(|(t, k)| [1, 2, 5, 132].map(move |g| (t, k, g)))
            .filter(|(t, k, g)| t * k >= *g)
        {
            let walks: Vec<_> = (0..g).map(|c| stream_k_walk(tiles, kt, g, c)).collect();
            let mut holder = vec![u64::MAX; (tiles * kt) as usize];
            for (c, w) in walks.iter().enumerate() {
                for &(t, a, b) in w {
                    for k in a..b {
                        let slot = &mut holder[(t * kt + k) as usize];
                        assert_eq!(*slot, u64::MAX, "{tiles} x {kt} on {g}: run twice");
                        *slot = c as u64;
                    }
                }
                // at most one contribution, and it comes before every other range piece
                let ranged: Vec<_> = w.iter().filter(|s| !(s.1 == 0 && s.2 == kt)).collect();
                let contributions = ranged.iter().filter(|s| s.2 < kt).count();
                assert!(contributions <= 1);
                if contributions == 1 {
                    assert!(ranged[0].2 < kt, "{tiles} x {kt} on {g}, CTA {c}: {w:?}");
                }
            }
            assert!(holder.iter().all(|h| *h != u64::MAX));
            // a finisher's tile: every other piece is an earlier CTA's contribution
            for (c, w) in walks.iter().enumerate() {
                for &(t, a, _) in w.iter().filter(|s| s.1 > 0 && s.2 == kt) {
                    for k in 0..a {
                        let other = holder[(t * kt + k) as usize] as usize;
                        assert!(other < c);
                        assert!(walks[other].iter().any(|s| s.0 == t && s.2 < kt));
                    }
                }
            }
        }
    }

    #[test]
    fn split_k_and_stream_k_share_out_the_k_iterations() {
        let doc = preset("h100-sxm").unwrap();
        let k = ModelConstants {
            throughput_model: Scoring::Throughput,
            tp_load_latency_cycles: 500.0,
            tp_epilogue_cycles: 100.0,
            tp_splitk_reduce_cycles: 3000.0,
            ..ModelConstants::default()
        };
        let hw = inputs(&doc, &k);
        let persistent = |text: &str| {
            launch(&cfg(text), 1)
                .with_whole_boxes(true)
                .with_persistent(Some(PersistentLoop {
                    overlapped_fill: true,
                    grouped_order: None,
                }))
        };
        // 333 x 4096: 3 x 32 = 96 tiles of 128 x 128 on 132 SMs, 224 K iterations each
        let p = Problem::new(333, 4096, 14336, Dtype::Fp16).unwrap();
        let one = predict(&p, &persistent("128x128x64,w12,s6"), 8, &hw);
        assert_eq!((one.blocks_on_busiest_sm, one.k_iters), (1, 224));
        // two runs: 192 work items, the busiest SM runs 2 of 112 iterations, then the
        // reduction (3000 cycles and its DRAM bytes) follows
        let two = predict(&p, &persistent("128x128x64,w12,s6,k2"), 8, &hw);
        assert_eq!((two.blocks_on_busiest_sm, two.k_iters), (2, 112));
        assert_eq!(split_runs(224, 3), (75, 3));
        assert_eq!(split_runs(4, 3), (2, 2));
        // Stream-K: 96 x 224 iterations in 132 ranges of at most 163
        let sk_launch = persistent("128x128x64,w12,s6,sk");
        let sk = predict(&p, &sk_launch, 8, &hw);
        assert_eq!((sk.blocks_on_busiest_sm, sk.k_iters), (1, 163));
        assert!(sk.total < one.total, "{} vs {}", sk.total, one.total);
        // the work is the same however it is cut: 96 x 224 iterations; the work items are
        // the tiles, the split runs, or the Stream-K ranges
        for b in [&one, &two, &sk] {
            assert_eq!(b.iterations_total, 96 * 224);
        }
        assert_eq!(
            (one.work_items, two.work_items, sk.work_items),
            (96, 192, 132)
        );
        let grid = TileGrid::new(&p, &sk_launch, &hw);
        let (_, share) = grid.stream(&hw);
        assert_eq!(
            share,
            StreamShare {
                segments: 2,
                contributors: 2,
                aligned: false
            }
        );
        // every SM holds whole tiles: no hand-over, the tiles' own launch
        let even = Problem::new(132 * 128, 128, 4096, Dtype::Fp16).unwrap();
        let (_, aligned) = TileGrid::new(&even, &sk_launch, &hw).stream(&hw);
        assert!(aligned.aligned && aligned.contributors == 0 && aligned.segments == 1);
        assert_eq!(
            predict(&even, &sk_launch, 8, &hw).total,
            predict(&even, &persistent("128x128x64,w12,s6"), 8, &hw).total
        );
        // more tiles than SMs: 4096^3 in 128 x 256 tiles is 512 tiles (3 rounds of 132 and
        // 116); two rounds run whole, the last 248 tiles' 64 iterations each go in 132
        // ranges of at most 121, so the busiest CTA runs 128 + 121 iterations over 2 whole
        // tiles and at most 3 pieces of the ranges' tiles
        assert_eq!(stream_k_first_tile(512, 132), 264);
        assert_eq!(stream_k_first_tile(96, 132), 0);
        assert_eq!(stream_k_first_tile(264, 132), 264);
        assert_eq!(stream_k_first_tile(200, 132), 0);
        let cube = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        let wide_sk = persistent("128x256x64,w12,s4,sk");
        let (g, wide) = TileGrid::new(&cube, &wide_sk, &hw).stream(&hw);
        assert_eq!((g.k_iters, wide.segments, wide.contributors), (249, 5, 1));
        let share = TileGrid::new(&cube, &wide_sk, &hw).stream_range_share(&hw);
        assert!((share - 121.0 / 249.0).abs() < 1e-12, "{share}");
        // fewer tiles than SMs: the range is all the work; whole rounds: none of it
        assert_eq!(
            TileGrid::new(&p, &sk_launch, &hw).stream_range_share(&hw),
            1.0
        );
        assert_eq!(
            TileGrid::new(&even, &sk_launch, &hw).stream_range_share(&hw),
            0.0
        );
        let whole = predict(&cube, &persistent("128x256x64,w12,s4"), 8, &hw);
        assert_eq!((whole.blocks_on_busiest_sm, whole.k_iters), (4, 64));
        // the bounds the selection prunes with hold for both decompositions
        let costs = BlockCosts::new(&sk_launch, &hw);
        assert!(costs.bounded_below() && bound_holds(&k));
        let floor_core = costs.tensor.max(costs.smem);
        for (g, t) in [
            (grid.split(2, &hw).0, two.total),
            (grid.stream(&hw).0, sk.total),
        ] {
            assert!(lower_bound(&g, floor_core, costs.l2, costs.fixed, &hw) <= t);
        }
    }
}
