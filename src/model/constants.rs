//! The empirical constants of the Origami latency model, in one place with their source.
//!
//! All come from the tritonBLAS/Origami C++ source (`gemm.cpp`), as catalogued in seed 000
//! appendix C.4; none is documented in the tritonBLAS paper. Each can be overridden by name
//! from the hardware JSON (`"constants": {"loop_overhead_cycles": 350}`), so that values
//! fitted to NVIDIA measurements live in calibration files, not in code.

use std::collections::BTreeMap;

/// Empirical constants of Algorithms 5-9.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelConstants {
    /// Prologue = this x L_mem (pipeline fill). Source: gemm.cpp, "1.5 chosen empirically".
    pub prologue_factor: f64,
    /// The epilogue is counted this many times in L_tile. Source: gemm.cpp.
    pub epilogue_count: f64,
    /// Prologue and epilogue are scaled by this ^ occupancy. Source: gemm.cpp.
    pub occupancy_decay: f64,
    /// Blocks resident per SM assumed by the occupancy discount (gemm.cpp default 1).
    pub occupancy: f64,
    /// Loop overhead per K iteration, cycles. Source: gemm.cpp ("7 instructions ... 4 cycles").
    pub loop_overhead_cycles: f64,
    /// Thread-block setup latency, cycles. Source: gemm.cpp (`L_WG_setup = 1`).
    pub setup_cycles: f64,
    /// K zero-padding penalty scale: (K mod BK)/K x this, cycles. Source: gemm.cpp.
    pub k_padding_cycles: f64,
    /// A hit rate that comes out exactly 0 becomes this (origami variant; gemm.cpp floor).
    /// Seed 000 read it as a cap applied when the working set exceeds L2 (seed variant).
    pub l2_hit_floor: f64,
    /// Global hit-rate bound when one full pass of A and B tiles exceeds L2 (gemm.cpp
    /// `compute_l2_hit_rate_global`, origami variant only).
    pub l2_global_overflow_hit: f64,
    /// Configs within this fraction of the best latency are re-ranked (origami variant).
    pub tie_band: f64,
    /// Memory transactions are rounded up to this many bytes. Source: gemm.cpp.
    pub transaction_bytes: f64,
    /// Minimum bytes loaded per SM per iteration. Source: seed 000 section 3.4.
    pub min_load_per_sm_bytes: f64,
    /// Pipeline model (this project, issue 4; 0 = off, as in seed 000 and gemm.cpp): the
    /// latency of one load round trip, cycles. With S stages the loads of a K tile have the
    /// S - 1 iterations of the other buffers to arrive, so an iteration cannot be shorter
    /// than (this + L_mem + L_compute) / (S - 1). Fitted per GPU and kernel family.
    pub stage_latency_cycles: f64,
    /// Tensor-core speed of configs that a family runs on Hopper's wgmma path relative to
    /// mma.sync (Triton: BLOCK_M >= 64 with whole warpgroups); 1 = not modelled.
    pub wgmma_speedup: f64,
    /// Launch preference among configs of one tile (ties of the latency model): tiles of at
    /// least this many output elements (BM x BN) prefer 8 warps, smaller ones 4.
    pub launch_wide_tile_area: f64,
    /// Launch preference: rank of 2, 3 and 4 pipeline stages (lower is preferred).
    pub stage_rank_2: f64,
    pub stage_rank_3: f64,
    pub stage_rank_4: f64,
    /// Phase 2: 1 sends a tie in footprint cost to the largest GROUP_SIZE_M, 0 (seed 000's
    /// rule) to the smallest.
    pub phase2_prefer_larger_group: f64,
    /// Throughput model switch (this project, issue 4; `throughput.rs`): 1 scores every
    /// launch with the SM-throughput model (occupancy, pipeline depth, warps), 0 (default)
    /// with the Origami latency model.
    pub throughput_model: f64,
    /// Throughput model: SM cycles per MMA atom at the tensor cores' sustained rate; 0 =
    /// mma_latency / tensor cores per SM (Algorithm 3's figure).
    pub tp_mma_cycles: f64,
    /// Throughput model: cycles one warp needs per MMA of its own chain; 0 = mma_latency.
    pub tp_warp_mma_cycles: f64,
    /// Throughput model: round trip of one stage's loads, cycles; 0 = hbm_latency_penalty.
    pub tp_load_latency_cycles: f64,
    /// Throughput model: SM cycles one block spends per K iteration outside the MMAs
    /// (barrier, address and loop instructions); shared by the resident blocks.
    pub tp_iter_cycles: f64,
    /// Throughput model: SM cycles per warp and K iteration outside the MMAs (instructions
    /// every warp issues: its loads, addresses, the barrier); shared like `tp_iter_cycles`.
    pub tp_warp_iter_cycles: f64,
    /// Throughput model: latency a block adds per K iteration after its last MMA (pipeline
    /// drain at the barrier); hidden by other resident blocks.
    pub tp_iter_latency_cycles: f64,
    /// Throughput model: epilogue cycles per 4096 output elements of a block.
    pub tp_epilogue_cycles: f64,
    /// Throughput model: cycles to start a block.
    pub tp_block_setup_cycles: f64,
    /// Throughput model: shared-memory bytes per cycle per SM (128 on sm_80 and later).
    pub tp_smem_bytes_per_cycle: f64,
    /// Throughput model: weight of the warps' fragment reads (ldmatrix) against the copies'
    /// shared-memory writes.
    pub tp_fragment_read_weight: f64,
    /// Throughput model: an SM's L2 bandwidth as a share of l2_perf_ratio / SMs.
    pub tp_l2_sm_share: f64,
    /// Throughput model: S stages hide a load over (S - 1)^this iterations.
    pub tp_stage_exponent: f64,
    /// Throughput model: pipeline fill, in load round trips per block.
    pub tp_prologue_loads: f64,
    /// Throughput model: the fill also waits for this many stages' bytes to cross the SM's
    /// L2 share (0 = latency only).
    pub tp_prologue_transfer: f64,
    /// Throughput model: multiplier of the DRAM time (1 = the measured bandwidth).
    pub tp_dram_scale: f64,
    /// Throughput model: configs on wgmma cost at least this BLOCK_N per instruction
    /// (0 = their own).
    pub tp_wgmma_min_n: f64,
    /// Throughput model: 0 takes the largest bound (per iteration, and SM against DRAM);
    /// p > 0 their p-norm.
    pub tp_smooth_exponent: f64,
    /// Throughput model: multiplier of the whole prediction (absolute calibration; no
    /// effect on the ranking).
    pub tp_time_scale: f64,
}

impl Default for ModelConstants {
    fn default() -> Self {
        ModelConstants {
            prologue_factor: 1.5,
            epilogue_count: 2.0,
            occupancy_decay: 0.95,
            occupancy: 1.0,
            loop_overhead_cycles: 500.0,
            setup_cycles: 1.0,
            k_padding_cycles: 50_000.0,
            l2_hit_floor: 0.5,
            l2_global_overflow_hit: 0.1,
            tie_band: 0.01,
            transaction_bytes: 128.0,
            min_load_per_sm_bytes: 128.0,
            stage_latency_cycles: 0.0,
            wgmma_speedup: 1.0,
            launch_wide_tile_area: 16384.0,
            stage_rank_2: 3.0,
            stage_rank_3: 1.0,
            stage_rank_4: 2.0,
            phase2_prefer_larger_group: 0.0,
            throughput_model: 0.0,
            tp_mma_cycles: 0.0,
            tp_warp_mma_cycles: 0.0,
            tp_load_latency_cycles: 0.0,
            tp_iter_cycles: 0.0,
            tp_warp_iter_cycles: 0.0,
            tp_iter_latency_cycles: 0.0,
            tp_epilogue_cycles: 0.0,
            tp_block_setup_cycles: 0.0,
            tp_smem_bytes_per_cycle: 128.0,
            tp_fragment_read_weight: 1.0,
            tp_l2_sm_share: 1.0,
            tp_stage_exponent: 1.0,
            tp_prologue_loads: 1.0,
            tp_prologue_transfer: 0.0,
            tp_dram_scale: 1.0,
            tp_wgmma_min_n: 0.0,
            tp_smooth_exponent: 0.0,
            tp_time_scale: 1.0,
        }
    }
}

/// Names accepted in the hardware JSON's `constants` object.
pub const CONSTANT_NAMES: [&str; 38] = [
    "prologue_factor",
    "epilogue_count",
    "occupancy_decay",
    "occupancy",
    "loop_overhead_cycles",
    "setup_cycles",
    "k_padding_cycles",
    "l2_hit_floor",
    "l2_global_overflow_hit",
    "tie_band",
    "transaction_bytes",
    "min_load_per_sm_bytes",
    "stage_latency_cycles",
    "wgmma_speedup",
    "launch_wide_tile_area",
    "stage_rank_2",
    "stage_rank_3",
    "stage_rank_4",
    "phase2_prefer_larger_group",
    "throughput_model",
    "tp_mma_cycles",
    "tp_warp_mma_cycles",
    "tp_load_latency_cycles",
    "tp_iter_cycles",
    "tp_warp_iter_cycles",
    "tp_iter_latency_cycles",
    "tp_epilogue_cycles",
    "tp_block_setup_cycles",
    "tp_smem_bytes_per_cycle",
    "tp_fragment_read_weight",
    "tp_l2_sm_share",
    "tp_stage_exponent",
    "tp_prologue_loads",
    "tp_prologue_transfer",
    "tp_dram_scale",
    "tp_wgmma_min_n",
    "tp_smooth_exponent",
    "tp_time_scale",
];

/// An override with an unknown name or an impossible value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("constants.{name}: {msg}")]
pub struct ConstantError {
    pub name: String,
    pub msg: String,
}

impl ModelConstants {
    fn slot(&mut self, name: &str) -> Option<&mut f64> {
        Some(match name {
            "prologue_factor" => &mut self.prologue_factor,
            "epilogue_count" => &mut self.epilogue_count,
            "occupancy_decay" => &mut self.occupancy_decay,
            "occupancy" => &mut self.occupancy,
            "loop_overhead_cycles" => &mut self.loop_overhead_cycles,
            "setup_cycles" => &mut self.setup_cycles,
            "k_padding_cycles" => &mut self.k_padding_cycles,
            "l2_hit_floor" => &mut self.l2_hit_floor,
            "l2_global_overflow_hit" => &mut self.l2_global_overflow_hit,
            "tie_band" => &mut self.tie_band,
            "transaction_bytes" => &mut self.transaction_bytes,
            "min_load_per_sm_bytes" => &mut self.min_load_per_sm_bytes,
            "stage_latency_cycles" => &mut self.stage_latency_cycles,
            "wgmma_speedup" => &mut self.wgmma_speedup,
            "launch_wide_tile_area" => &mut self.launch_wide_tile_area,
            "stage_rank_2" => &mut self.stage_rank_2,
            "stage_rank_3" => &mut self.stage_rank_3,
            "stage_rank_4" => &mut self.stage_rank_4,
            "phase2_prefer_larger_group" => &mut self.phase2_prefer_larger_group,
            "throughput_model" => &mut self.throughput_model,
            "tp_mma_cycles" => &mut self.tp_mma_cycles,
            "tp_warp_mma_cycles" => &mut self.tp_warp_mma_cycles,
            "tp_load_latency_cycles" => &mut self.tp_load_latency_cycles,
            "tp_iter_cycles" => &mut self.tp_iter_cycles,
            "tp_warp_iter_cycles" => &mut self.tp_warp_iter_cycles,
            "tp_iter_latency_cycles" => &mut self.tp_iter_latency_cycles,
            "tp_epilogue_cycles" => &mut self.tp_epilogue_cycles,
            "tp_block_setup_cycles" => &mut self.tp_block_setup_cycles,
            "tp_smem_bytes_per_cycle" => &mut self.tp_smem_bytes_per_cycle,
            "tp_fragment_read_weight" => &mut self.tp_fragment_read_weight,
            "tp_l2_sm_share" => &mut self.tp_l2_sm_share,
            "tp_stage_exponent" => &mut self.tp_stage_exponent,
            "tp_prologue_loads" => &mut self.tp_prologue_loads,
            "tp_prologue_transfer" => &mut self.tp_prologue_transfer,
            "tp_dram_scale" => &mut self.tp_dram_scale,
            "tp_wgmma_min_n" => &mut self.tp_wgmma_min_n,
            "tp_smooth_exponent" => &mut self.tp_smooth_exponent,
            "tp_time_scale" => &mut self.tp_time_scale,
            _ => return None,
        })
    }

    /// Value of a constant by name.
    pub fn get(&self, name: &str) -> Option<f64> {
        let mut c = *self;
        c.slot(name).map(|v| *v)
    }

    /// The defaults with the given overrides applied; rejects unknown names and values
    /// outside their range (negative, non-finite; hit rates and the band above 1).
    pub fn with_overrides<'a>(
        overrides: impl IntoIterator<Item = (&'a str, f64)>,
    ) -> Result<ModelConstants, ConstantError> {
        let mut c = ModelConstants::default();
        for (name, v) in overrides {
            let err = |msg: String| ConstantError {
                name: name.to_string(),
                msg,
            };
            if !v.is_finite() || v < 0.0 {
                return Err(err(format!(
                    "must be a finite non-negative number (got {v})"
                )));
            }
            if matches!(name, "phase2_prefer_larger_group" | "throughput_model")
                && v != 0.0
                && v != 1.0
            {
                return Err(err(format!("must be 0 or 1 (got {v})")));
            }
            if matches!(
                name,
                "l2_hit_floor" | "l2_global_overflow_hit" | "tie_band" | "occupancy_decay"
            ) && v > 1.0
            {
                return Err(err(format!("must be at most 1 (got {v})")));
            }
            if matches!(
                name,
                "tp_smem_bytes_per_cycle"
                    | "tp_l2_sm_share"
                    | "tp_dram_scale"
                    | "tp_time_scale"
                    | "tp_stage_exponent"
            ) && v == 0.0
            {
                return Err(err("must be positive".into()));
            }
            if matches!(name, "transaction_bytes" | "wgmma_speedup") && v < 1.0 {
                return Err(err(format!("must be at least 1 (got {v})")));
            }
            let slot = c.slot(name).ok_or_else(|| {
                err(format!(
                    "unknown constant (known: {})",
                    CONSTANT_NAMES.join(", ")
                ))
            })?;
            *slot = v;
        }
        Ok(c)
    }

    /// Every constant with its value, in `CONSTANT_NAMES` order.
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
    fn defaults_are_the_seed_constants() {
        let c = ModelConstants::default();
        assert_eq!(c.prologue_factor, 1.5);
        assert_eq!(c.epilogue_count, 2.0);
        assert_eq!(c.occupancy_decay, 0.95);
        assert_eq!(c.loop_overhead_cycles, 500.0);
        assert_eq!(c.k_padding_cycles, 50_000.0);
        assert_eq!(c.l2_hit_floor, 0.5);
        assert_eq!(c.tie_band, 0.01);
        assert_eq!(c.transaction_bytes, 128.0);
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
}
