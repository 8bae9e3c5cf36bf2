//! The empirical constants of the models, in one table with their source.
//!
//! The `latency` group comes from the tritonBLAS/Origami C++ source (`gemm.cpp`), as
//! catalogued in the NVIDIA port report (appendix C.4); none is documented in the tritonBLAS
//! paper. The `launch` group (pipeline depth, tensor-core path, launch preference, the
//! phase-2 tie rule) and the `throughput` group (`tp_*`, the SM-throughput model) are this
//! project's. Each can be overridden by name from the hardware JSON
//! (`"constants": {"loop_overhead_cycles": 350}`), so that values fitted to NVIDIA
//! measurements live in calibration files, not in code.
//!
//! One row of `model_constants!` defines a constant: its field (name, type, doc), default,
//! group, unit, allowed range and place in the refit's knob list. The struct, `Default`,
//! the names, get and set by name and the metadata list `CONSTANTS` are generated from it.

use crate::output::shown;
use std::collections::BTreeMap;

pub mod modes;

pub use modes::{Phase2Tie, Scoring};

/// Which part of the model a constant belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConstantGroup {
    /// The Origami latency model (`gemm.cpp`'s constants).
    Latency,
    /// Launches of one tile: pipeline depth, tensor-core path, launch preference, phase 2.
    Launch,
    /// The SM-throughput model (`tp_*`) and its switch.
    Throughput,
}

impl ConstantGroup {
    pub fn name(self) -> &'static str {
        match self {
            ConstantGroup::Latency => "latency",
            ConstantGroup::Launch => "launch",
            ConstantGroup::Throughput => "throughput",
        }
    }
}

/// The values a constant accepts. Every constant is a finite non-negative number; a range
/// narrows that.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRange {
    /// A number between `min` and `max`, each bound included when its flag says so.
    Interval {
        min: f64,
        min_inclusive: bool,
        max: f64,
        max_inclusive: bool,
    },
    /// A mode switch: 0 or 1.
    Switch,
    /// 0 (off) or a number of at least `min`: an exponent whose 0 selects another rule.
    OffOrAtLeast { min: f64 },
}

impl ValueRange {
    /// [0, inf).
    pub const NON_NEGATIVE: ValueRange = ValueRange::Interval {
        min: 0.0,
        min_inclusive: true,
        max: f64::INFINITY,
        max_inclusive: false,
    };
    /// (0, inf): shares, rates and scales that divide or multiply the whole prediction.
    pub const POSITIVE: ValueRange = ValueRange::Interval {
        min: 0.0,
        min_inclusive: false,
        max: f64::INFINITY,
        max_inclusive: false,
    };
    /// [0, 1]: hit rates, the tie band, the occupancy decay.
    pub const FRACTION: ValueRange = ValueRange::Interval {
        min: 0.0,
        min_inclusive: true,
        max: 1.0,
        max_inclusive: true,
    };
    /// (0, 1]: shares of a rate that divide a time.
    pub const SHARE: ValueRange = ValueRange::Interval {
        min: 0.0,
        min_inclusive: false,
        max: 1.0,
        max_inclusive: true,
    };
    /// [1, inf): transaction sizes and speedups.
    pub const AT_LEAST_ONE: ValueRange = ValueRange::Interval {
        min: 1.0,
        min_inclusive: true,
        max: f64::INFINITY,
        max_inclusive: false,
    };
    /// {0, 1}.
    pub const SWITCH: ValueRange = ValueRange::Switch;
    /// {0} or [1, inf): a p-norm exponent, 0 = the largest term (p < 1 is no norm, and its
    /// powers 1/p overflow to infinite or NaN predictions).
    pub const OFF_OR_AT_LEAST_ONE: ValueRange = ValueRange::OffOrAtLeast { min: 1.0 };

    /// `Ok` when `v` lies in the range, else why not.
    pub fn check(&self, v: f64) -> Result<(), String> {
        if !v.is_finite() || v < 0.0 {
            return Err(format!(
                "must be a finite non-negative number (got {})",
                shown(v)
            ));
        }
        match *self {
            ValueRange::Switch => {
                if v != 0.0 && v != 1.0 {
                    return Err(format!("must be 0 or 1 (got {})", shown(v)));
                }
            }
            ValueRange::OffOrAtLeast { min } => {
                if v != 0.0 && v < min {
                    return Err(format!(
                        "must be 0 (off) or at least {min} (got {})",
                        shown(v)
                    ));
                }
            }
            ValueRange::Interval {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => {
                if v > max || (v == max && !max_inclusive) {
                    return Err(if max_inclusive {
                        format!("must be at most {max} (got {})", shown(v))
                    } else {
                        format!("must be below {max} (got {})", shown(v))
                    });
                }
                if v < min || (v == min && !min_inclusive) {
                    return Err(match (min_inclusive, min == 0.0) {
                        (false, true) => "must be positive".into(),
                        (false, false) => format!("must be above {min} (got {})", shown(v)),
                        (true, _) => format!("must be at least {min} (got {})", shown(v)),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether `v` lies in the range.
    pub fn contains(&self, v: f64) -> bool {
        self.check(v).is_ok()
    }
}

/// The definition of one constant (a row of the table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstantDef {
    /// Field name and name in the hardware JSON.
    pub name: &'static str,
    pub group: ConstantGroup,
    /// Default value (switches as 0 or 1).
    pub default: f64,
    pub range: ValueRange,
    pub unit: &'static str,
    /// The field's doc comment, line by line.
    pub doc_lines: &'static [&'static str],
    /// Knob of `origami-bench refit` when it fits that scoring model, at that position of
    /// its coordinate-descent pass (1 first; the order pins the fit's output).
    pub fit: &'static [(Scoring, u8)],
}

impl ConstantDef {
    /// The doc comment as one line.
    pub fn doc(&self) -> String {
        self.doc_lines
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// How a field's value reads and writes as a JSON number.
pub trait ConstantValue: Copy {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl ConstantValue for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// 1 is the throughput model; anything else the latency model.
impl ConstantValue for Scoring {
    fn from_f64(v: f64) -> Self {
        if v == 1.0 {
            Scoring::Throughput
        } else {
            Scoring::Latency
        }
    }
    fn to_f64(self) -> f64 {
        match self {
            Scoring::Latency => 0.0,
            Scoring::Throughput => 1.0,
        }
    }
}

/// 1 sends ties to the larger group; anything else to the smaller.
impl ConstantValue for Phase2Tie {
    fn from_f64(v: f64) -> Self {
        if v == 1.0 {
            Phase2Tie::LargerGroup
        } else {
            Phase2Tie::SmallerGroup
        }
    }
    fn to_f64(self) -> f64 {
        match self {
            Phase2Tie::SmallerGroup => 0.0,
            Phase2Tie::LargerGroup => 1.0,
        }
    }
}

/// Generates `ModelConstants`, its `Default`, `CONSTANTS`, `CONSTANT_NAMES` and get/store
/// by name from rows of
/// `/// doc` `name: type = default, Group, "unit", RANGE, fit [Scoring position, ...];`
/// (the `fit` part optional).
macro_rules! model_constants {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident: $ty:ty = $default:literal, $group:ident, $unit:literal, $range:ident
        $(, fit [$($fit_model:ident $fit_pos:literal),+])?;
    )+) => {
        /// The empirical constants of the models (one field per row of the table).
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct ModelConstants {
            $(
                $(#[doc = $doc])+
                pub $name: $ty,
            )+
        }

        impl Default for ModelConstants {
            fn default() -> Self {
                ModelConstants {
                    $($name: <$ty as ConstantValue>::from_f64($default),)+
                }
            }
        }

        /// Every constant's definition, in the table's order.
        pub const CONSTANTS: &[ConstantDef] = &[$(
            ConstantDef {
                name: stringify!($name),
                group: ConstantGroup::$group,
                default: $default,
                range: ValueRange::$range,
                unit: $unit,
                doc_lines: &[$($doc),+],
                fit: &[$($((Scoring::$fit_model, $fit_pos)),+)?],
            },
        )+];

        /// Names accepted in the hardware JSON's `constants` object, in the table's order.
        pub const CONSTANT_NAMES: [&str; CONSTANTS.len()] = [$(stringify!($name)),+];

        impl ModelConstants {
            /// Value of a constant by name (switches as 0 or 1).
            pub fn get(&self, name: &str) -> Option<f64> {
                match name {
                    $(stringify!($name) => Some(ConstantValue::to_f64(self.$name)),)+
                    _ => None,
                }
            }

            /// Store a value by name without checking its range; false for an unknown name.
            /// For the fuzz harness (the selector must survive any finite constants); every
            /// other caller goes through [`ModelConstants::set`].
            pub fn set_unvalidated(&mut self, name: &str, v: f64) -> bool {
                match name {
                    $(stringify!($name) => self.$name = ConstantValue::from_f64(v),)+
                    _ => return false,
                }
                true
            }
        }
    };
}

model_constants! {
    /// Prologue = this x L_mem (pipeline fill). Source: gemm.cpp, "1.5 chosen empirically".
    prologue_factor: f64 = 1.5, Latency, "x L_mem", NON_NEGATIVE, fit [Latency 2];
    /// The epilogue is counted this many times in L_tile. Source: gemm.cpp.
    epilogue_count: f64 = 2.0, Latency, "count", NON_NEGATIVE, fit [Latency 3];
    /// Prologue and epilogue are scaled by this ^ occupancy. Source: gemm.cpp.
    occupancy_decay: f64 = 0.95, Latency, "factor", FRACTION, fit [Latency 4];
    /// Blocks resident per SM assumed by the occupancy discount (gemm.cpp default 1).
    occupancy: f64 = 1.0, Latency, "blocks per SM", NON_NEGATIVE;
    /// Loop overhead per K iteration, cycles. Source: gemm.cpp ("7 instructions ... 4 cycles").
    loop_overhead_cycles: f64 = 500.0, Latency, "cycles", NON_NEGATIVE, fit [Latency 1];
    /// Thread-block setup latency, cycles. Source: gemm.cpp (`L_WG_setup = 1`).
    setup_cycles: f64 = 1.0, Latency, "cycles", NON_NEGATIVE, fit [Latency 6];
    /// K zero-padding penalty scale: (K mod BK)/K x this, cycles. Source: gemm.cpp.
    k_padding_cycles: f64 = 50_000.0, Latency, "cycles", NON_NEGATIVE;
    /// A hit rate that comes out exactly 0 becomes this (origami variant; gemm.cpp floor).
    /// The NVIDIA port report read it as a cap applied when the working set exceeds L2
    /// (seed variant).
    l2_hit_floor: f64 = 0.5, Latency, "hit rate", FRACTION, fit [Latency 5];
    /// Global hit-rate bound when one full pass of A and B tiles exceeds L2 (gemm.cpp
    /// `compute_l2_hit_rate_global`, origami variant only).
    l2_global_overflow_hit: f64 = 0.1, Latency, "hit rate", FRACTION;
    /// Configs within this fraction of the best latency are re-ranked (origami variant).
    tie_band: f64 = 0.01, Latency, "fraction", FRACTION;
    /// Memory transactions are rounded up to this many bytes. Source: gemm.cpp.
    transaction_bytes: f64 = 128.0, Latency, "bytes", AT_LEAST_ONE;
    /// Minimum bytes loaded per SM per iteration. Source: the NVIDIA port report, section 3.4.
    min_load_per_sm_bytes: f64 = 128.0, Latency, "bytes", NON_NEGATIVE;
    /// Pipeline model (this project; 0 = off, as in the NVIDIA port report and gemm.cpp):
    /// the latency of one load round trip, cycles. With S stages the loads of a K tile have
    /// the S - 1 iterations of the other buffers to arrive, so an iteration cannot be
    /// shorter than (this + L_mem + L_compute) / (S - 1). Fitted per GPU and kernel family.
    stage_latency_cycles: f64 = 0.0, Launch, "cycles", NON_NEGATIVE, fit [Latency 7];
    /// Tensor-core speed of configs that a family runs on Hopper's wgmma path relative to
    /// mma.sync (Triton: BLOCK_M >= 64 with whole warpgroups); 1 = not modelled.
    wgmma_speedup: f64 = 1.0, Launch, "x mma.sync", AT_LEAST_ONE,
        fit [Latency 8, Throughput 17];
    /// Launch preference among configs of one tile (ties of the latency model): tiles of at
    /// least this many output elements (BM x BN) prefer 8 warps, smaller ones 4.
    launch_wide_tile_area: f64 = 16384.0, Launch, "elements", NON_NEGATIVE, fit [Latency 9];
    /// Launch preference: rank of 2 pipeline stages (lower is preferred).
    stage_rank_2: f64 = 3.0, Launch, "rank", NON_NEGATIVE, fit [Latency 10];
    /// Launch preference: rank of 3 pipeline stages (lower is preferred).
    stage_rank_3: f64 = 1.0, Launch, "rank", NON_NEGATIVE, fit [Latency 11];
    /// Launch preference: rank of 4 pipeline stages (lower is preferred).
    stage_rank_4: f64 = 2.0, Launch, "rank", NON_NEGATIVE, fit [Latency 12];
    /// Phase 2: 1 sends a tie in footprint cost to the largest GROUP_SIZE_M, 0 (the NVIDIA
    /// port report's rule) to the smallest. Read it with `phase2_tie()`.
    phase2_prefer_larger_group: Phase2Tie = 0.0, Launch, "switch", SWITCH;
    /// Throughput model switch (this project; `throughput.rs`): 1 scores every launch with
    /// the SM-throughput model (occupancy, pipeline depth, warps), 0 (default) with the
    /// Origami latency model. Read it with `scoring()`.
    throughput_model: Scoring = 0.0, Throughput, "switch", SWITCH;
    /// Throughput model: SM cycles per MMA atom at the tensor cores' sustained rate; 0 =
    /// mma_latency / tensor cores per SM (Algorithm 3's figure).
    tp_mma_cycles: f64 = 0.0, Throughput, "cycles", NON_NEGATIVE, fit [Throughput 1];
    /// Throughput model: cycles one warp needs per MMA of its own chain; 0 = mma_latency.
    tp_warp_mma_cycles: f64 = 0.0, Throughput, "cycles", NON_NEGATIVE, fit [Throughput 2];
    /// Throughput model: round trip of one stage's loads, cycles; 0 = hbm_latency_penalty.
    tp_load_latency_cycles: f64 = 0.0, Throughput, "cycles", NON_NEGATIVE,
        fit [Throughput 3];
    /// Throughput model: SM cycles one block spends per K iteration outside the MMAs
    /// (barrier, address and loop instructions); shared by the resident blocks.
    tp_iter_cycles: f64 = 0.0, Throughput, "cycles", NON_NEGATIVE, fit [Throughput 4];
    /// Throughput model: SM cycles per warp and K iteration outside the MMAs (instructions
    /// every warp issues: its loads, addresses, the barrier); shared like `tp_iter_cycles`.
    tp_warp_iter_cycles: f64 = 0.0, Throughput, "cycles", NON_NEGATIVE, fit [Throughput 5];
    /// Throughput model: latency a block adds per K iteration after its last MMA (pipeline
    /// drain at the barrier); hidden by other resident blocks.
    tp_iter_latency_cycles: f64 = 0.0, Throughput, "cycles", NON_NEGATIVE,
        fit [Throughput 6];
    /// Throughput model: epilogue cycles per 4096 output elements of a block.
    tp_epilogue_cycles: f64 = 0.0, Throughput, "cycles per 4096 outputs", NON_NEGATIVE,
        fit [Throughput 7];
    /// Throughput model: cycles to start a block.
    tp_block_setup_cycles: f64 = 0.0, Throughput, "cycles", NON_NEGATIVE,
        fit [Throughput 8];
    /// Throughput model: shared-memory bytes per cycle per SM (128 on sm_80 and later).
    tp_smem_bytes_per_cycle: f64 = 128.0, Throughput, "bytes per cycle", POSITIVE;
    /// Throughput model: weight of the warps' fragment reads (ldmatrix) against the copies'
    /// shared-memory writes.
    tp_fragment_read_weight: f64 = 1.0, Throughput, "weight", NON_NEGATIVE,
        fit [Throughput 9];
    /// Throughput model: an SM's L2 bandwidth as a share of l2_perf_ratio / SMs.
    tp_l2_sm_share: f64 = 1.0, Throughput, "share", POSITIVE, fit [Throughput 10];
    /// Throughput model: how the L2 bandwidth is shared when fewer SMs than the GPU has run
    /// blocks: each active SM's share is `tp_l2_sm_share` x (SMs / active SMs)^this. 0 (the
    /// default) keeps an SM's share fixed; 1 splits the whole L2 bandwidth among the active
    /// SMs (what the persistent TMA kernel shows on decode shapes).
    tp_l2_active_exponent: f64 = 0.0, Throughput, "exponent", NON_NEGATIVE,
        fit [Throughput 18];
    /// Throughput model: DRAM bytes charged per byte of the zero-filled rows of a
    /// tensor-descriptor box (kernels that load whole boxes; 0 = free, 1 = as if read).
    tp_box_padding_weight: f64 = 0.0, Throughput, "bytes per byte", NON_NEGATIVE;
    /// Throughput model: the same charge of zero-filled box rows, but its DRAM time added to
    /// the launch's time after the overlap of the SMs' and DRAM's times instead of inside
    /// the DRAM term (0 = none; 1 = each byte at the DRAM rate, in series: what the H100
    /// padding probe measured, docs/triton-tma.md, "Zero-filled rows take their own time").
    tp_box_padding_serial: f64 = 0.0, Throughput, "bytes per byte", NON_NEGATIVE;
    /// Throughput model: the share of a persistent program's last epilogue added after the
    /// overlap of the SMs' and DRAM's times: the busiest program ends with it, nothing left
    /// to hide behind; its store counts the tiles' real rows and columns (a descriptor store
    /// clips the rest). 0 = overlapped like the others; 1 = in series (the H200 probes,
    /// docs/triton-tma.md, "The last epilogue is exposed").
    tp_exposed_epilogue: f64 = 0.0, Throughput, "share", NON_NEGATIVE;
    /// Throughput model: what a zero-filled row of a tensor-descriptor box costs a
    /// persistent program's copies against a real row's L2 time, in the tiles at M's and N's
    /// edges (kernels that load whole boxes). At most 1 = no dearer (none); above 1 an edge
    /// tile's K step prices its boxes' rows as real rows plus this many per zero-filled row,
    /// and the program that runs it ends later by what that adds (the H200 tile-pair probe,
    /// docs/triton-tma.md, "Edge tiles copy their zero-filled rows").
    tp_zero_row_copy_weight: f64 = 0.0, Throughput, "rows per row", NON_NEGATIVE;
    /// Throughput model: the pipeline's load round trip, as a share of
    /// `tp_load_latency_cycles`, when A, B and C fit in the L2 together. A brute-force sweep
    /// times each launch again and again on the same buffers, so such a set stays in L2 and
    /// its loads return at L2's latency, not DRAM's (under load the H100 measured 2383
    /// against 4891 cycles: 0.49, `origami-calibrate --only latency-loaded`). 1 (the
    /// default) = one round trip for all (docs/triton-tma.md, "Resident operands wait
    /// less").
    tp_resident_round_trip_share: f64 = 1.0, Throughput, "share", POSITIVE;
    /// Throughput model: extra L2 cycles per 128 bytes of A and B boxes when their row
    /// pitch is a multiple of 16 bytes but not of 32 (kernels that load whole boxes; the
    /// H100 row-alignment probe).
    tp_box_row_cycles_16b: f64 = 0.0, Throughput, "cycles per 128 B", NON_NEGATIVE;
    /// Throughput model: the same for a pitch that is a multiple of 32 bytes, not of 64.
    tp_box_row_cycles_32b: f64 = 0.0, Throughput, "cycles per 128 B", NON_NEGATIVE;
    /// Throughput model: the same for a pitch that is a multiple of 64 bytes, not of 128.
    tp_box_row_cycles_64b: f64 = 0.0, Throughput, "cycles per 128 B", NON_NEGATIVE;
    /// Throughput model: what a split-K launch adds besides its reduction's DRAM traffic:
    /// the second kernel's launch and the wait between the two (kernels that split K).
    tp_splitk_reduce_cycles: f64 = 0.0, Throughput, "cycles", NON_NEGATIVE;
    /// Throughput model: 1 when the kernel's copies of rows past M and N move no bytes
    /// (masked or zero-filled loads: the triton and origami families), so a tile's L2
    /// bytes count its real rows only (their average over the grid); 0 (default) counts
    /// whole tiles. Kernels that load whole tensor-descriptor boxes always count them.
    tp_masked_rows: f64 = 0.0, Throughput, "switch", SWITCH;
    /// Throughput model: the share of the L2 rate a tile gets when each of its rows is 32
    /// contiguous bytes in global memory (BLOCK_K x element bytes; the next row a pitch
    /// away), as `origami-calibrate --only l2-rows` measures it (1 = the contiguous rate).
    /// Kernels that load whole tensor-descriptor boxes are not priced by it.
    tp_l2_row_efficiency_32b: f64 = 1.0, Throughput, "share", SHARE;
    /// Throughput model: the same for rows of 64 contiguous bytes.
    tp_l2_row_efficiency_64b: f64 = 1.0, Throughput, "share", SHARE;
    /// Throughput model: the share of the DRAM rate A's and B's bytes get when their tiles'
    /// rows are 32 contiguous bytes and stream from DRAM (a tile walking its rows along K),
    /// as `origami-calibrate --only dram-rows` measures it (1 = the contiguous rate; the
    /// bytes are the same). Kernels that load whole tensor-descriptor boxes are not priced
    /// by it.
    tp_dram_row_efficiency_32b: f64 = 1.0, Throughput, "share", SHARE;
    /// Throughput model: the same for rows of 64 contiguous bytes.
    tp_dram_row_efficiency_64b: f64 = 1.0, Throughput, "share", SHARE;
    /// Throughput model: for kernels that load whole tensor-descriptor boxes in grouped
    /// order (at least two tile rows to a group, so that consecutive tiles walk down one
    /// tile column), the share of B's box bytes the L2 does not serve again: neighbouring
    /// programs run those tiles at the same time and load the same B boxes (0 = every box
    /// read in full; Nsight Compute on an H200 counts fewer L2 sectors than the boxes ask
    /// for, docs/triton-tma.md).
    tp_l2_neighbour_share_b: f64 = 0.0, Throughput, "share", FRACTION;
    /// Throughput model: the same for A's box bytes when consecutive tiles walk one tile
    /// row (a group of one tile row).
    tp_l2_neighbour_share_a: f64 = 0.0, Throughput, "share", FRACTION;
    /// Throughput model: the share of A's box bytes that programs of one GPC load together
    /// the L2 does not serve again (0 = off): A's bytes become 1 - share x (1 - d_A), d_A the
    /// distinct A boxes per GPC over the boxes the programs ask for, from the measured block
    /// placement (`model::gpc_share`, `hw::topology`); for persistent kernels in Triton's
    /// grouped order on a GPU whose topology was measured. Measured from Nsight Compute's L2
    /// counters (scripts/triton/gpc_merge_fit.py), not fitted on GEMM times.
    tp_l2_gpc_merge_a: f64 = 0.0, Throughput, "share", FRACTION;
    /// Throughput model: the same for B's box bytes (d_B).
    tp_l2_gpc_merge_b: f64 = 0.0, Throughput, "share", FRACTION;
    /// Throughput model: 1 counts a wgmma config's shared-memory operand reads per
    /// m64nNk16 instruction, each reading its 64 rows of A and all of its warpgroup's B
    /// columns (A's rows once per warpgroup along N, B's columns once per 64 rows of
    /// BLOCK_M); 0 (default) counts them once per warpgroup along M and N, as mma.sync
    /// warps read fragments.
    tp_wgmma_operand_reads: f64 = 0.0, Throughput, "switch", SWITCH;
    /// Throughput model: 1 when A, B and C stay in L2 between the timed launches if
    /// together they fit (repeated launches on the same buffers): no DRAM bound for them;
    /// 0 (default) charges their compulsory DRAM bytes on every launch (rotated buffers).
    tp_l2_resident_inputs: f64 = 0.0, Throughput, "switch", SWITCH;
    /// Throughput model: S stages hide a load over (S - 1)^this iterations.
    tp_stage_exponent: f64 = 1.0, Throughput, "exponent", POSITIVE, fit [Throughput 11];
    /// Throughput model: pipeline fill, in load round trips per block.
    tp_prologue_loads: f64 = 1.0, Throughput, "round trips", NON_NEGATIVE,
        fit [Throughput 12];
    /// Throughput model: the fill also waits for this many stages' bytes to cross the SM's
    /// L2 share (0 = latency only).
    tp_prologue_transfer: f64 = 0.0, Throughput, "stages", NON_NEGATIVE,
        fit [Throughput 13];
    /// Throughput model: multiplier of the DRAM time (1 = the measured bandwidth).
    tp_dram_scale: f64 = 1.0, Throughput, "factor", POSITIVE, fit [Throughput 14];
    /// Throughput model: configs on wgmma cost at least this BLOCK_N per instruction
    /// (0 = their own).
    tp_wgmma_min_n: f64 = 0.0, Throughput, "elements", NON_NEGATIVE, fit [Throughput 16];
    /// Throughput model: 0 takes the largest bound (per iteration, and SM against DRAM);
    /// p >= 1 their p-norm (below 1 it is no norm, and its 1/p powers overflow).
    tp_smooth_exponent: f64 = 0.0, Throughput, "exponent", OFF_OR_AT_LEAST_ONE,
        fit [Throughput 15];
    /// Throughput model: multiplier of the whole prediction (absolute calibration; no
    /// effect on the ranking).
    tp_time_scale: f64 = 1.0, Throughput, "factor", POSITIVE;
}

/// An override with an unknown name or an impossible value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("constants.{name}: {msg}")]
pub struct ConstantError {
    pub name: String,
    pub msg: String,
}

/// The definition of a constant by name.
pub fn constant_def(name: &str) -> Option<&'static ConstantDef> {
    CONSTANTS.iter().find(|d| d.name == name)
}

/// Whether a constant of this name may take this value: the rule a hardware document's
/// `constants` object (`hw::load`) and [`ModelConstants::set`] both apply. Rejects unknown
/// names and values outside the constant's range; a non-finite or negative value is
/// rejected before the name is looked up.
pub fn check_constant(name: &str, v: f64) -> Result<(), ConstantError> {
    let err = |msg: String| ConstantError {
        name: name.to_string(),
        msg,
    };
    ValueRange::NON_NEGATIVE.check(v).map_err(err)?;
    let def = constant_def(name).ok_or_else(|| {
        err(format!(
            "unknown constant (known: {})",
            CONSTANT_NAMES.join(", ")
        ))
    })?;
    def.range.check(v).map_err(err)
}

/// The constants `origami-bench refit` moves when it fits the given scoring model, in the
/// order of its coordinate-descent pass.
pub fn refit_knobs(scoring: Scoring) -> Vec<&'static str> {
    let mut knobs: Vec<(u8, &'static str)> = CONSTANTS
        .iter()
        .filter_map(|d| {
            d.fit
                .iter()
                .find(|(s, _)| *s == scoring)
                .map(|(_, pos)| (*pos, d.name))
        })
        .collect();
    knobs.sort_by_key(|(pos, _)| *pos);
    knobs.into_iter().map(|(_, name)| name).collect()
}

impl ModelConstants {
    /// Which model scores the configs (`throughput_model`).
    pub fn scoring(&self) -> Scoring {
        self.throughput_model
    }

    /// Where phase 2 sends a tie (`phase2_prefer_larger_group`).
    pub fn phase2_tie(&self) -> Phase2Tie {
        self.phase2_prefer_larger_group
    }

    /// Set a constant by name; rejects what [`check_constant`] rejects.
    pub fn set(&mut self, name: &str, v: f64) -> Result<(), ConstantError> {
        check_constant(name, v)?;
        self.set_unvalidated(name, v);
        Ok(())
    }

    /// The defaults with the given overrides applied in turn (`set`).
    pub fn with_overrides<'a>(
        overrides: impl IntoIterator<Item = (&'a str, f64)>,
    ) -> Result<ModelConstants, ConstantError> {
        let mut c = ModelConstants::default();
        for (name, v) in overrides {
            c.set(name, v)?;
        }
        Ok(c)
    }

    /// Every constant with its value (switches as 0 or 1).
    pub fn entries(&self) -> BTreeMap<&'static str, f64> {
        CONSTANT_NAMES
            .iter()
            .map(|n| (*n, self.get(n).expect("known name")))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_published_constants() {
        let c = ModelConstants::default();
        assert_eq!(c.prologue_factor, 1.5);
        assert_eq!(c.epilogue_count, 2.0);
        assert_eq!(c.occupancy_decay, 0.95);
        assert_eq!(c.loop_overhead_cycles, 500.0);
        assert_eq!(c.k_padding_cycles, 50_000.0);
        assert_eq!(c.l2_hit_floor, 0.5);
        assert_eq!(c.tie_band, 0.01);
        assert_eq!(c.transaction_bytes, 128.0);
        assert_eq!(c.scoring(), Scoring::Latency);
        assert_eq!(c.phase2_tie(), Phase2Tie::SmallerGroup);
        assert_eq!(c.entries().len(), CONSTANT_NAMES.len());
    }

    #[test]
    fn overrides_apply_and_validate() {
        let c = ModelConstants::with_overrides([("loop_overhead_cycles", 300.0)]).unwrap();
        assert_eq!(c.loop_overhead_cycles, 300.0);
        let e = ModelConstants::with_overrides([("loop_overhead", 1.0)]).unwrap_err();
        assert!(e.to_string().contains("unknown constant"));
        assert!(ModelConstants::with_overrides([("tie_band", 2.0)]).is_err());
        assert!(ModelConstants::with_overrides([("setup_cycles", -1.0)]).is_err());
    }

    #[test]
    fn every_default_lies_in_its_range_and_every_name_round_trips() {
        let d = ModelConstants::default();
        for def in CONSTANTS {
            assert!(def.range.contains(def.default), "{}", def.name);
            assert_eq!(d.get(def.name), Some(def.default), "{}", def.name);
            // Set a value in range other than the default and read it back.
            let other = match def.range {
                ValueRange::Switch => 1.0 - def.default,
                _ => def.default + 0.5,
            };
            let other = if def.range.contains(other) {
                other
            } else {
                def.default / 2.0
            };
            assert!(def.range.contains(other), "{}", def.name);
            let mut c = d;
            c.set(def.name, other).unwrap();
            assert_eq!(c.get(def.name), Some(other), "{}", def.name);
            assert!(
                !def.doc().is_empty() && !def.unit.is_empty(),
                "{}",
                def.name
            );
            // Every range narrows "finite and non-negative" (`ValueRange::check`).
            if let ValueRange::Interval { min, max, .. } = def.range {
                assert!(min >= 0.0 && max > min, "{}", def.name);
            }
        }
    }

    #[test]
    fn metadata_and_names_agree() {
        assert_eq!(CONSTANTS.len(), CONSTANT_NAMES.len());
        for (def, name) in CONSTANTS.iter().zip(CONSTANT_NAMES) {
            assert_eq!(def.name, name);
            assert_eq!(constant_def(name), Some(def));
        }
        let unique: std::collections::BTreeSet<_> = CONSTANT_NAMES.iter().collect();
        assert_eq!(unique.len(), CONSTANT_NAMES.len());
        assert_eq!(
            ModelConstants::default().entries().keys().count(),
            CONSTANTS.len()
        );
        for scoring in [Scoring::Latency, Scoring::Throughput] {
            let mut pos: Vec<u8> = CONSTANTS
                .iter()
                .flat_map(|d| d.fit.iter().filter(|(s, _)| *s == scoring))
                .map(|(_, p)| *p)
                .collect();
            pos.sort_unstable();
            let want: Vec<u8> = (1..=pos.len() as u8).collect();
            assert_eq!(pos, want, "{scoring:?} fit positions are 1..n");
        }
    }

    #[test]
    fn ranges_reproduce_the_validation_messages() {
        let msg = |name: &str, v: f64| {
            ModelConstants::with_overrides([(name, v)])
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            msg("setup_cycles", -1.0),
            "constants.setup_cycles: must be a finite non-negative number (got -1)"
        );
        assert_eq!(
            msg("loop_overhead", -1.0),
            "constants.loop_overhead: must be a finite non-negative number (got -1)"
        );
        assert_eq!(
            msg("tie_band", f64::NAN),
            "constants.tie_band: must be a finite non-negative number (got NaN)"
        );
        assert_eq!(
            msg("throughput_model", 0.5),
            "constants.throughput_model: must be 0 or 1 (got 0.5)"
        );
        assert_eq!(
            msg("l2_hit_floor", 1.5),
            "constants.l2_hit_floor: must be at most 1 (got 1.5)"
        );
        assert_eq!(
            msg("tp_time_scale", 0.0),
            "constants.tp_time_scale: must be positive"
        );
        assert_eq!(
            msg("tp_smooth_exponent", 0.001),
            "constants.tp_smooth_exponent: must be 0 (off) or at least 1 (got 0.001)"
        );
        assert!(ModelConstants::with_overrides([("tp_smooth_exponent", 0.0)]).is_ok());
        assert!(ModelConstants::with_overrides([("tp_smooth_exponent", 1.0)]).is_ok());
        assert_eq!(
            msg("wgmma_speedup", 0.5),
            "constants.wgmma_speedup: must be at least 1 (got 0.5)"
        );
        let c = ModelConstants::with_overrides([
            ("throughput_model", 1.0),
            ("phase2_prefer_larger_group", 1.0),
        ])
        .unwrap();
        assert_eq!(c.scoring(), Scoring::Throughput);
        assert_eq!(c.phase2_tie(), Phase2Tie::LargerGroup);
        assert_eq!(c.get("throughput_model"), Some(1.0));
    }

    #[test]
    fn groups_hold_their_constants() {
        let of = |g: ConstantGroup| -> Vec<&str> {
            CONSTANTS
                .iter()
                .filter(|d| d.group == g)
                .map(|d| d.name)
                .collect()
        };
        assert!(of(ConstantGroup::Throughput)
            .iter()
            .all(|n| n.starts_with("tp_") || *n == "throughput_model"));
        assert!(of(ConstantGroup::Launch).contains(&"phase2_prefer_larger_group"));
        assert_eq!(of(ConstantGroup::Latency).len(), 12);
    }
}
