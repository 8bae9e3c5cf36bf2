//! The registers and spills of every config of the `origami` family as ptxas reported them
//! (`data/gemm_registers.csv`, made by `scripts/ptxas-table.sh` for sm_80, sm_86, sm_89 and
//! sm_90, fp16, bf16 and tf32; confirmed on an H200 with cuFuncGetAttribute,
//! docs/gemm-kernel.md). The family never picks a config whose compiled kernel has a
//! stack frame (spills).

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::problem::Config;

/// The compiler's table, embedded.
pub const REGISTER_TABLE_CSV: &str = include_str!("../../../../../../data/gemm_registers.csv");

/// One row of the table: registers per thread and stack frame bytes (> 0: spills).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompiledResources {
    pub registers: u32,
    pub stack_frame_bytes: u32,
}

type Key = (u32, Dtype, u32, u32, u32, u32, u32);

/// (arch as 80/86/89/90, input type, BM, BN, BK, warps, stages) -> resources; `None`
/// values are configs the table lists as invalid.
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
        let dtype: Dtype = f[id].parse().map_err(|e| format!("line {}: {e}", n + 2))?;
        let key = (
            arch,
            dtype,
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
        dtype,
        c.block_m,
        c.block_n,
        c.block_k,
        c.num_warps,
        c.num_stages,
    );
    table().get(&key).copied().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;

    #[test]
    fn table_parses_and_counts_match_the_doc() {
        let t = table();
        assert_eq!(t.len(), 3 * 4 * 384);
        let valid90 = t
            .iter()
            .filter(|(k, v)| k.0 == 90 && k.1 == Dtype::Fp16 && v.is_some())
            .count();
        assert_eq!(valid90, 342);
        let spill90 = t
            .iter()
            .filter(|(k, v)| {
                k.0 == 90
                    && k.1 == Dtype::Fp16
                    && v.map(|r| r.stack_frame_bytes > 0).unwrap_or(false)
            })
            .count();
        assert_eq!(spill90, 36);
    }

    #[test]
    fn arch_fallback() {
        let mut gpu = preset("b200").unwrap().gpu;
        assert_eq!(table_arch(&gpu), 90);
        gpu.compute_capability = [8, 9];
        assert_eq!(table_arch(&gpu), 89);
    }
}
