//! The triton family on a problem whose N and/or K are not multiples of 16: Triton
//! compiles another kernel (`unaligned_table.rs`), and this variant family describes it.
//! Its configs, resources and tensor-core path come from that kernel's table; its memory
//! instructions are priced by their count, not fitted:
//!
//! - K unaligned: the operands arrive as 2-byte `ld.global.b16` loads into registers, each
//!   followed by a 2-byte `st.shared.b16`, instead of 16-byte `cp.async` copies, and the
//!   shared memory holds one buffer (no multi-stage pipeline: the PTX loads, stores to
//!   shared memory and runs the MMAs of one K step in turn).
//! - N unaligned: C is written with 2-byte `st.global.b16` stores instead of 16-byte ones.
//!
//! Each warp-wide memory instruction occupies the SM's load/store units for one cycle:
//! an SM has 32 of them (four partitions with eight each; NVIDIA H100 Tensor Core GPU
//! Architecture whitepaper, SM diagram), one lane per thread of the warp. The extra
//! instructions over the aligned kernel (whose copies the fitted constants already price)
//! are added to the throughput model's shared-memory term per K iteration (the same
//! load/store pipe) and to each block's epilogue. The aligned kernel's own widths are the
//! table's: its operand loads are those of class n (K aligned), its C stores those of
//! class k (N aligned); the smallest tiles already use narrow accesses there.

use crate::constants::ModelConstants;
use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::problem::{Config, Problem, Switches};

use super::super::{IssueCosts, KernelFamily, MmaAtom};
use super::unaligned_table::{self, AlignClass, UnalignedCompiled, UnalignedEntry};
use super::{problem_violation, TritonFamily, NAME};

/// Threads whose memory accesses an SM's load/store units take per cycle (32 units).
pub const LSU_LANES_PER_SM_CYCLE: f64 = 32.0;
/// Bytes per thread of the aligned kernel's widest operand copies and C stores (16-byte
/// `cp.async` and `st.global.v4.b32`): its widths where the table has none.
pub const ALIGNED_ACCESS_BYTES: u32 = 16;

/// Access widths per thread, bytes: the operand loads and the C stores of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Widths {
    pub load_bytes: u32,
    pub store_bytes: u32,
}

/// The triton family's kernel for one alignment class.
pub struct TritonUnaligned {
    pub class: AlignClass,
}

/// The three variants, one per class.
pub static TRITON_N: TritonUnaligned = TritonUnaligned {
    class: AlignClass::N,
};
pub static TRITON_K: TritonUnaligned = TritonUnaligned {
    class: AlignClass::K,
};
pub static TRITON_NK: TritonUnaligned = TritonUnaligned {
    class: AlignClass::NK,
};

/// The variant that runs a problem, when its class has one (Hopper and 16-bit inputs:
/// where the table speaks; elsewhere the family keeps its own estimates).
pub fn variant_for(p: &Problem, gpu: &GpuDesc) -> Option<&'static TritonUnaligned> {
    if !unaligned_table::covers(p.dtype, gpu) {
        return None;
    }
    Some(match AlignClass::of(p)? {
        AlignClass::N => &TRITON_N,
        AlignClass::K => &TRITON_K,
        AlignClass::NK => &TRITON_NK,
    })
}

/// 2-byte operand loads one thread issues per K step when K is unaligned.
pub fn scalar_loads_per_thread(c: &Config) -> u32 {
    (c.block_m + c.block_n) * c.block_k / (32 * c.num_warps.max(1))
}

/// Warp-wide instructions that move `bytes` at `width` bytes per thread.
fn warp_instructions(bytes: f64, width: f64) -> f64 {
    bytes / width / LSU_LANES_PER_SM_CYCLE
}

/// cp.async moves 4 to 16 bytes from global to shared memory in one instruction;
/// narrower loads go through a register and need a shared store of their own.
fn through_registers(load_bytes: u32) -> bool {
    load_bytes < 4
}

/// Warp-wide instructions that bring `bytes` of operands into shared memory.
fn operand_instructions(bytes: f64, load_bytes: u32) -> f64 {
    let copies = warp_instructions(bytes, f64::from(load_bytes));
    if through_registers(load_bytes) {
        2.0 * copies
    } else {
        copies
    }
}

/// The load/store-unit cycles a compiled variant (`variant` widths) adds to the aligned
/// kernel (`aligned` widths): per block and K iteration (operand loads, plus their
/// shared-memory stores when they go through registers) and per block (C stores); and
/// one pipeline stage when the variant's loads go through registers and the aligned
/// kernel's do not.
pub fn issue_costs(c: &Config, dtype: Dtype, variant: Widths, aligned: Widths) -> IssueCosts {
    let b = dtype.bytes();
    let operand_bytes = (f64::from(c.block_m) + f64::from(c.block_n)) * f64::from(c.block_k) * b;
    let out_bytes = f64::from(c.block_m) * f64::from(c.block_n) * b;
    let per_iter = operand_instructions(operand_bytes, variant.load_bytes)
        - operand_instructions(operand_bytes, aligned.load_bytes);
    let per_block = warp_instructions(out_bytes, f64::from(variant.store_bytes))
        - warp_instructions(out_bytes, f64::from(aligned.store_bytes));
    let one_buffer =
        through_registers(variant.load_bytes) && !through_registers(aligned.load_bytes);
    IssueCosts {
        lsu_cycles_per_iter: per_iter.max(0.0),
        lsu_cycles_per_block: per_block.max(0.0),
        stages: if one_buffer { 1 } else { c.num_stages },
    }
}

impl TritonUnaligned {
    fn entry(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<UnalignedEntry> {
        unaligned_table::entry(self.class, c, dtype, gpu)
    }
    fn compiled(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<UnalignedCompiled> {
        match self.entry(c, dtype, gpu)? {
            UnalignedEntry::Compiled(t) => Some(t),
            UnalignedEntry::Timeout | UnalignedEntry::Skipped => None,
        }
    }
    /// The aligned kernel's widths for a config: class n's loads, class k's stores.
    fn aligned_widths(c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Widths {
        let width = |class, pick: fn(&UnalignedCompiled) -> u32| match unaligned_table::entry(
            class, c, dtype, gpu,
        ) {
            Some(UnalignedEntry::Compiled(t)) => pick(&t),
            _ => ALIGNED_ACCESS_BYTES,
        };
        Widths {
            load_bytes: width(AlignClass::N, |t| t.load_bytes),
            store_bytes: width(AlignClass::K, |t| t.store_bytes),
        }
    }
    /// The variant in words (the selection's walkthrough).
    pub fn note(&self) -> &'static str {
        match self.class {
            AlignClass::N => {
                "Triton's kernel for N not a multiple of 16 (2-byte C stores; data/triton_sm90_unaligned.csv, class n)"
            }
            AlignClass::K => {
                "Triton's kernel for K not a multiple of 16 (2-byte operand loads through registers, one shared buffer; data/triton_sm90_unaligned.csv, class k)"
            }
            AlignClass::NK => {
                "Triton's kernel for N and K not multiples of 16 (2-byte operand loads through registers, one shared buffer, 2-byte C stores; data/triton_sm90_unaligned.csv, class nk)"
            }
        }
    }
    fn what(&self) -> &'static str {
        match self.class {
            AlignClass::N => "N",
            AlignClass::K => "K",
            AlignClass::NK => "N and K",
        }
    }
}

impl KernelFamily for TritonUnaligned {
    fn name(&self) -> &'static str {
        NAME
    }
    fn problem_violation(&self, p: &Problem) -> Option<String> {
        problem_violation(p)
    }
    fn tiles(&self) -> Vec<(u32, u32, u32)> {
        TritonFamily.tiles()
    }
    fn launches(&self) -> Vec<(u32, u32)> {
        TritonFamily.launches()
    }
    fn switch_settings(&self) -> Vec<Switches> {
        TritonFamily.switch_settings()
    }
    fn group_sizes(&self) -> &'static [u32] {
        TritonFamily.group_sizes()
    }
    fn mma_atom(&self, dtype: Dtype) -> MmaAtom {
        TritonFamily.mma_atom(dtype)
    }
    fn smem_bytes(&self, c: &Config, dtype: Dtype) -> u64 {
        TritonFamily.smem_bytes(c, dtype)
    }
    /// The variant's compiled shared memory; a config whose compile timed out keeps the
    /// family's estimate (it is rejected anyway).
    fn compiled_smem_bytes(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u64> {
        self.compiled(c, dtype, gpu).map(|t| t.compiled.smem_bytes)
    }
    fn registers(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u32> {
        match self.entry(c, dtype, gpu) {
            Some(UnalignedEntry::Compiled(t)) => Some(t.compiled.registers),
            Some(UnalignedEntry::Timeout | UnalignedEntry::Skipped) => None,
            None => TritonFamily.registers(c, dtype, gpu),
        }
    }
    fn invalid_reason(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<String> {
        match self.entry(c, dtype, gpu) {
            Some(UnalignedEntry::Compiled(t)) if t.compiled.spill_bytes > 0 => Some(format!(
                "spills: {} B of spill traffic at {} registers (Triton 3.6, sm_90a, {} not a multiple of 16)",
                t.compiled.spill_bytes,
                t.compiled.registers,
                self.what()
            )),
            Some(UnalignedEntry::Compiled(_)) => None,
            Some(UnalignedEntry::Timeout) => Some(format!(
                "not compiled: Triton 3.6's compile for sm_90a ({} not a multiple of 16) ran past the table's time limit (data/triton_sm90_unaligned.csv)",
                self.what()
            )),
            Some(UnalignedEntry::Skipped) => Some(format!(
                "not compiled: {} 2-byte operand loads per thread and K step ({} not a multiple of 16), over the table's limit (data/triton_sm90_unaligned.csv)",
                scalar_loads_per_thread(c),
                self.what()
            )),
            None => TritonFamily.invalid_reason(c, dtype, gpu),
        }
    }
    fn launch_preference(&self, c: &Config, k: &ModelConstants) -> f64 {
        TritonFamily.launch_preference(c, k)
    }
    fn uses_wgmma(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> bool {
        match self.compiled(c, dtype, gpu) {
            Some(t) => t.compiled.wgmma,
            None => TritonFamily.uses_wgmma(c, dtype, gpu),
        }
    }
    fn compute_scale(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc, k: &ModelConstants) -> f64 {
        if self.uses_wgmma(c, dtype, gpu) {
            1.0 / k.wgmma_speedup
        } else {
            1.0
        }
    }
    fn warp_grid(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> (u32, u32) {
        if self.uses_wgmma(c, dtype, gpu) {
            super::wgmma_warp_grid(c)
        } else {
            super::triton_mma_warps(c)
        }
    }
    fn issue_costs(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<IssueCosts> {
        let t = self.compiled(c, dtype, gpu)?;
        let variant = Widths {
            load_bytes: t.load_bytes,
            store_bytes: t.store_bytes,
        };
        Some(issue_costs(
            c,
            dtype,
            variant,
            Self::aligned_widths(c, dtype, gpu),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;

    fn cfg(text: &str) -> Config {
        crate::model::problem::parse_config(text).unwrap()
    }

    #[test]
    fn variants_follow_the_problem_on_hopper_16_bit_only() {
        let h = preset("h100-sxm").unwrap().gpu;
        let a = preset("a100").unwrap().gpu;
        let p = |n, k, d| Problem::new(3000, n, k, d).unwrap();
        assert!(variant_for(&p(4096, 4096, Dtype::Fp16), &h).is_none());
        assert_eq!(
            variant_for(&p(3000, 3000, Dtype::Fp16), &h).unwrap().class,
            AlignClass::NK
        );
        assert_eq!(
            variant_for(&p(7168, 2050, Dtype::Bf16), &h).unwrap().class,
            AlignClass::K
        );
        assert!(variant_for(&p(3000, 3000, Dtype::Fp16), &a).is_none());
        assert!(variant_for(&p(3000, 3000, Dtype::Fp8E4m3), &h).is_none());
    }

    #[test]
    fn scalar_loads_cost_their_instructions() {
        // 128x128x64 fp16: 32 KiB of operands per K step. 2-byte loads: 16384 thread
        // loads = 512 warp loads, and as many shared stores; the aligned kernel's 16-byte
        // copies are 64 warp instructions: 1024 - 64 = 960 cycles more per iteration.
        let c = cfg("128x128x64,w8,s3");
        let w = |load_bytes, store_bytes| Widths {
            load_bytes,
            store_bytes,
        };
        let ic = issue_costs(&c, Dtype::Fp16, w(2, 16), w(16, 16));
        assert_eq!(ic.lsu_cycles_per_iter, 960.0);
        assert_eq!(ic.lsu_cycles_per_block, 0.0);
        assert_eq!(ic.stages, 1);
        // N unaligned: 16-byte copies stay; 2-byte C stores: 128 x 128 x 2 B / 2 B / 32
        // = 512 warp stores against 64.
        let ic = issue_costs(&c, Dtype::Fp16, w(16, 2), w(16, 16));
        assert_eq!(
            (ic.lsu_cycles_per_iter, ic.lsu_cycles_per_block, ic.stages),
            (0.0, 448.0, 3)
        );
        // A tile whose aligned kernel already loads 2 bytes per thread changes nothing.
        let ic = issue_costs(&cfg("16x16x16,w8,s3"), Dtype::Fp16, w(2, 2), w(2, 2));
        assert_eq!(
            (ic.lsu_cycles_per_iter, ic.lsu_cycles_per_block, ic.stages),
            (0.0, 0.0, 3)
        );
    }

    #[test]
    fn the_selector_scores_an_unaligned_problem_with_its_variant() {
        use crate::model::inputs::Variant;
        use crate::model::select::Selector;
        let doc = preset("h200").unwrap();
        let k = crate::constants::ModelConstants::default();
        let s = Selector::new(
            &TritonFamily,
            &doc.gpu,
            &doc.params,
            &k,
            Variant::Origami,
            Dtype::Fp16,
        )
        .unwrap();
        let p = Problem::new(4097, 4097, 4097, Dtype::Fp16).unwrap();
        let nk = TRITON_NK.candidates(Dtype::Fp16, &doc.gpu);
        let feasible = nk.iter().filter(|c| c.feasible()).count();
        assert_eq!(s.feasible_count_for(&p), feasible);
        assert_ne!(feasible, s.feasible_count());
        let pick = s.select(&p, false).unwrap().pick.config;
        assert!(nk.iter().any(|c| c.feasible()
            && c.config.same_tile(&pick)
            && (c.config.num_warps, c.config.num_stages) == (pick.num_warps, pick.num_stages)));
        assert!(s.variant_note(&p).unwrap().contains("class nk"));
        let aligned = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        assert_eq!(s.feasible_count_for(&aligned), s.feasible_count());
        assert!(s.variant_note(&aligned).is_none());
    }

    #[test]
    fn the_variant_reads_its_own_table() {
        let h = preset("h200").unwrap().gpu;
        let c = cfg("128x128x64,w8,s3");
        // K unaligned: one shared buffer (32 KiB) instead of three (96 KiB).
        assert_eq!(
            TRITON_K.compiled_smem_bytes(&c, Dtype::Fp16, &h),
            Some(32768)
        );
        assert_eq!(
            TritonFamily.compiled_smem_bytes(&c, Dtype::Fp16, &h),
            Some(98304)
        );
        assert_eq!(TRITON_K.issue_costs(&c, Dtype::Fp16, &h).unwrap().stages, 1);
        assert!(TritonFamily.issue_costs(&c, Dtype::Fp16, &h).is_none());
    }
}
