//! The `origami` kernel family: the project's own mma.sync GEMM (`csrc/gemm.cu`, documented
//! in docs/gemm-kernel.md). Its config space, its real shared-memory formula (cp.async ring
//! or epilogue C tile, whichever is larger), its warp-tiling validity rule, and its
//! registers and spills as ptxas reported them (`data/gemm_registers.csv`, made by
//! `scripts/ptxas-table.sh`, confirmed on an H200 with cuFuncGetAttribute): a config
//! whose compiled kernel has a stack frame (spills) is never picked.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::dtype::Dtype;
use crate::hw::GpuDesc;

use super::family::KernelFamily;
use super::problem::Config;

/// The compiler's table, embedded.
pub const REGISTER_TABLE_CSV: &str = include_str!("../../data/gemm_registers.csv");

/// One row of the table: registers per thread and stack frame bytes (> 0: spills).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompiledResources {
    pub registers: u32,
    pub stack_frame_bytes: u32,
}

type Key = (u32, bool, u32, u32, u32, u32, u32);

/// (arch as 80/86/89/90, bf16?, BM, BN, BK, warps, stages) -> resources; `None` values
/// are configs the table lists as invalid.
fn table() -> &'static HashMap<Key, Option<CompiledResources>> {
    static TABLE: OnceLock<HashMap<Key, Option<CompiledResources>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        parse_table(REGISTER_TABLE_CSV).expect("embedded register table is well formed")
    })
}

/// Parse the register table (header as written by scripts/ptxas-table.sh).
pub fn parse_table(text: &str) -> Result<HashMap<Key, Option<CompiledResources>>, String> {
    let mut out = HashMap::new();
    let mut lines = text.lines();
    let header = lines.next().ok_or("empty register table")?;
    let cols: Vec<&str> = header.split(',').collect();
    let idx = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .ok_or(format!("register table: no column {name}"))
    };
    let (ia, id, ibm, ibn, ibk, iw, is, ir, isf, iv) = (
        idx("arch")?,
        idx("dtype")?,
        idx("block_m")?,
        idx("block_n")?,
        idx("block_k")?,
        idx("num_warps")?,
        idx("num_stages")?,
        idx("registers")?,
        idx("stack_frame_bytes")?,
        idx("valid")?,
    );
    for (n, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let num = |i: usize| -> Result<u32, String> {
            f.get(i).and_then(|s| s.trim().parse().ok()).ok_or(format!(
                "register table line {}: bad field {}",
                n + 2,
                cols[i]
            ))
        };
        let arch: u32 = f[ia]
            .trim_start_matches("sm_")
            .parse()
            .map_err(|_| format!("line {}: bad arch", n + 2))?;
        let key = (
            arch,
            f[id] == "bf16",
            num(ibm)?,
            num(ibn)?,
            num(ibk)?,
            num(iw)?,
            num(is)?,
        );
        let res = if num(iv)? == 1 {
            Some(CompiledResources {
                registers: num(ir)?,
                stack_frame_bytes: num(isf)?,
            })
        } else {
            None
        };
        out.insert(key, res);
    }
    Ok(out)
}

/// The table's architecture for a GPU: its own when listed, else the newest listed one
/// not newer than it (sm_100 uses sm_90's rows), else the oldest.
pub fn table_arch(gpu: &GpuDesc) -> u32 {
    let cc = gpu.compute_capability[0] * 10 + gpu.compute_capability[1];
    let mut archs: Vec<u32> = table().keys().map(|k| k.0).collect();
    archs.sort_unstable();
    archs.dedup();
    archs
        .iter()
        .rev()
        .find(|a| **a <= cc)
        .or(archs.first())
        .copied()
        .unwrap_or(90)
}

/// Registers and spills of a config as compiled for this GPU, from the table.
pub fn compiled_resources(c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<CompiledResources> {
    let key = (
        table_arch(gpu),
        dtype == Dtype::Bf16,
        c.block_m,
        c.block_n,
        c.block_k,
        c.num_warps,
        c.num_stages,
    );
    table().get(&key).copied().flatten()
}

/// Warp grid of the kernel: (WARPS_M, WARPS_N).
pub fn warp_grid(c: &Config) -> (u32, u32) {
    let wm = if c.num_warps == 4 || c.block_m < c.block_n {
        2
    } else {
        4
    };
    (wm, c.num_warps / wm)
}

/// The project's mma.sync GEMM kernel.
pub struct OrigamiFamily;

impl KernelFamily for OrigamiFamily {
    fn name(&self) -> &'static str {
        "origami"
    }
    fn tiles(&self) -> Vec<(u32, u32, u32)> {
        let mut v = Vec::new();
        for bm in [32, 64, 128, 256] {
            for bn in [32, 64, 128, 256] {
                for bk in [16, 32, 64, 128] {
                    v.push((bm, bn, bk));
                }
            }
        }
        v
    }
    fn launches(&self) -> Vec<(u32, u32)> {
        vec![(4, 2), (4, 3), (4, 4), (8, 2), (8, 3), (8, 4)]
    }
    /// max(stages x (BM + BN) x BK x 2, BM x (BN + 8) x 2): the cp.async ring, or the
    /// epilogue's C tile when larger (16-bit elements).
    fn smem_bytes(&self, c: &Config, _dtype: Dtype) -> u64 {
        let ring =
            u64::from(c.num_stages) * u64::from(c.block_m + c.block_n) * u64::from(c.block_k) * 2;
        let epilogue = u64::from(c.block_m) * u64::from(c.block_n + 8) * 2;
        ring.max(epilogue)
    }
    fn registers(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<u32> {
        compiled_resources(c, dtype, gpu).map(|r| r.registers)
    }
    /// The shared preference (the fastest launches of the H200 development runs,
    /// docs/gemm-kernel.md, were 8 warps and 3 stages for the large tiles).
    fn launch_preference(&self, c: &Config, k: &super::constants::ModelConstants) -> f64 {
        super::family::default_launch_preference(c, k)
    }
    fn invalid_reason(&self, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<String> {
        if !matches!(dtype, Dtype::Fp16 | Dtype::Bf16) {
            return Some(format!(
                "the origami kernel takes fp16 or bf16 inputs, not {dtype}"
            ));
        }
        let (wm, wn) = warp_grid(c);
        if (c.block_m / wm) % 16 != 0 || (c.block_n / wn) % 16 != 0 {
            return Some(format!(
                "warp tile {}x{} is not a multiple of 16",
                c.block_m / wm,
                c.block_n / wn
            ));
        }
        match compiled_resources(c, dtype, gpu) {
            Some(r) if r.stack_frame_bytes > 0 => Some(format!(
                "spills: {} B stack frame at {} registers (ptxas, sm_{})",
                r.stack_frame_bytes,
                r.registers,
                table_arch(gpu)
            )),
            Some(_) => None,
            None => Some(format!(
                "not in the compiler's register table for sm_{}",
                table_arch(gpu)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;

    #[test]
    fn table_parses_and_counts_match_the_doc() {
        let t = table();
        assert_eq!(t.len(), 3072);
        let valid90 = t
            .iter()
            .filter(|(k, v)| k.0 == 90 && !k.1 && v.is_some())
            .count();
        assert_eq!(valid90, 342);
        let spill90 = t
            .iter()
            .filter(|(k, v)| {
                k.0 == 90 && !k.1 && v.map(|r| r.stack_frame_bytes > 0).unwrap_or(false)
            })
            .count();
        assert_eq!(spill90, 36);
    }

    #[test]
    fn spilling_and_invalid_configs_are_rejected_on_h100() {
        let gpu = preset("h100-sxm").unwrap().gpu;
        let cands = OrigamiFamily.candidates(Dtype::Fp16, &gpu);
        let feasible = cands.iter().filter(|c| c.feasible()).count();
        assert_eq!(feasible, 342 - 36);
        for c in &cands {
            let cfg = c.config;
            if cfg.block_m == 256 && cfg.block_n == 256 {
                assert!(!c.feasible(), "{cfg}");
            }
            if cfg.block_m == 32 && cfg.block_n == 32 && cfg.num_warps == 8 {
                assert!(c.rejected.as_deref().unwrap().contains("warp tile"));
            }
        }
        let fp8 = OrigamiFamily.candidates(Dtype::Fp8E4m3, &gpu);
        assert!(fp8.iter().all(|c| !c.feasible()));
    }

    #[test]
    fn smem_formula_matches_the_table() {
        // The table's smem column is the kernel's own constant for every config.
        let mut checked = 0;
        for line in REGISTER_TABLE_CSV.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let n = |i: usize| f[i].parse::<u32>().unwrap();
            let c = Config {
                block_m: n(2),
                block_n: n(3),
                block_k: n(4),
                group_m: 1,
                num_warps: n(5),
                num_stages: n(6),
            };
            assert_eq!(
                OrigamiFamily.smem_bytes(&c, Dtype::Fp16),
                u64::from(n(11)),
                "{line}"
            );
            checked += 1;
        }
        assert_eq!(checked, 3072);
    }

    #[test]
    fn arch_fallback() {
        let mut gpu = preset("b200").unwrap().gpu;
        assert_eq!(table_arch(&gpu), 90);
        gpu.compute_capability = [8, 9];
        assert_eq!(table_arch(&gpu), 89);
    }
}
