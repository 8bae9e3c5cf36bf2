//! What Triton's compiler made of each config of the `triton-tma` family on Hopper:
//! registers per thread, spill bytes, shared memory, or why it did not compile. The
//! persistent tensor-descriptor matmul (python/origami_gemm/kernels/triton_tma.py) compiled for
//! sm_90a by Triton 3.6.0 on a CPU at GROUP_SIZE_M 8 (`scripts/triton/tma_ptxas_stats.py`),
//! embedded as `data/triton_tma_sm90.csv` (fp16; the bf16 subset of
//! `data/triton_tma_sm90_bf16.csv` compiles to the same resources, checked by a test).

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::family::table_rows;
use crate::model::problem::{Config, Switches};

/// The compiler's table (fp16), embedded.
pub const TRITON_TMA_SM90_CSV: &str = include_str!("../../../../../../data/triton_tma_sm90.csv");

const HEADER: &str = "bm,bn,bk,w,s,ws,flatten,subtile,status,regs,spill_store_bytes,spill_load_bytes,shared_bytes,wgmma,tma_copies,tensormap_replace,ws_split,ptx_md5,error";

/// One config as compiled, or the compiler's refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TmaCompiled {
    Ok {
        registers: u32,
        /// Spill stores plus spill loads, bytes (> 0: the config spills).
        spill_bytes: u32,
        smem_bytes: u64,
        wgmma: bool,
    },
    /// Triton refused it: its status (`out_of_resources`, `compile_error`) and message.
    Failed { status: String, error: String },
}

/// (BM, BN, BK, warps, stages, switches).
type Key = (u32, u32, u32, u32, u32, Switches);

/// The table's key of a config (GROUP_SIZE_M does not change the compiled resources).
fn key(c: &Config) -> Key {
    (
        c.block_m,
        c.block_n,
        c.block_k,
        c.num_warps,
        c.num_stages,
        c.switches,
    )
}

/// Parse the table (`#` comment lines, then [`HEADER`]).
pub fn parse(text: &str) -> Result<HashMap<Key, TmaCompiled>, String> {
    let mut out = HashMap::new();
    for (row, line) in table_rows(text, HEADER)? {
        // The error message is the last field and may hold commas.
        let f: Vec<&str> = line.splitn(19, ',').collect();
        if f.len() != 19 {
            return Err(format!("row {row}: {} fields, want 19", f.len()));
        }
        let n = |j: usize| -> Result<u32, String> {
            f[j].trim()
                .parse::<u32>()
                .map_err(|e| format!("row {row}, column {}: {e}: {line}", j + 1))
        };
        let flag = |j: usize| -> Result<bool, String> {
            match f[j].trim() {
                "0" => Ok(false),
                "1" => Ok(true),
                x => Err(format!("row {row}, column {}: '{x}' is not 0 or 1", j + 1)),
            }
        };
        let switches = Switches {
            warp_specialize: flag(5)?,
            flatten: flag(6)?,
            epilogue_subtile: flag(7)?,
            ..Switches::NONE
        };
        let k = (n(0)?, n(1)?, n(2)?, n(3)?, n(4)?, switches);
        let status = f[8].trim();
        let entry = if status == "ok" {
            TmaCompiled::Ok {
                registers: n(9)?,
                spill_bytes: n(10)? + n(11)?,
                smem_bytes: u64::from(n(12)?),
                wgmma: flag(13)?,
            }
        } else {
            TmaCompiled::Failed {
                status: status.to_string(),
                error: f[18].trim().to_string(),
            }
        };
        if out.insert(k, entry).is_some() {
            return Err(format!("row {row}: a second row for one config: {line}"));
        }
    }
    Ok(out)
}

fn table() -> &'static HashMap<Key, TmaCompiled> {
    static TABLE: OnceLock<HashMap<Key, TmaCompiled>> = OnceLock::new();
    TABLE.get_or_init(|| {
        parse(TRITON_TMA_SM90_CSV).expect("embedded Triton TMA table is well formed")
    })
}

/// The compiled numbers of a config, when the table covers the GPU (compute capability
/// 9.x) and input type (16-bit).
pub fn compiled(c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<&'static TmaCompiled> {
    if gpu.compute_capability[0] != 9 || dtype.bits() != 16 {
        return None;
    }
    table().get(&key(c))
}

/// Every config of the table (compiled or not), GROUP_SIZE_M 1, in `Config`'s order.
pub fn configs() -> Vec<Config> {
    let mut v: Vec<Config> = table()
        .keys()
        .map(|&(bm, bn, bk, w, s, switches)| Config::launch((bm, bn, bk), w, s, switches))
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::problem::parse_config;

    #[test]
    fn table_reads_known_rows_and_counts() {
        let t = parse(TRITON_TMA_SM90_CSV).unwrap();
        assert_eq!(t.len(), 1344);
        let ok = t
            .values()
            .filter(|r| matches!(r, TmaCompiled::Ok { .. }))
            .count();
        assert_eq!(ok, 1186);
        let c = parse_config("64x64x32,w4,s2").unwrap();
        assert_eq!(
            t[&key(&c)],
            TmaCompiled::Ok {
                registers: 58,
                spill_bytes: 0,
                smem_bytes: 24592,
                wgmma: true
            }
        );
        let ws = parse_config("64x256x32,w4,s2,warp_specialize").unwrap();
        assert!(
            matches!(&t[&key(&ws)], TmaCompiled::Failed { error, .. } if error.contains("PassManager"))
        );
    }

    #[test]
    fn the_bf16_subset_compiles_to_the_same_resources() {
        let bf16 = parse(include_str!(
            "../../../../../../data/triton_tma_sm90_bf16.csv"
        ))
        .unwrap();
        let fp16 = parse(TRITON_TMA_SM90_CSV).unwrap();
        assert!(bf16.len() > 100);
        for (k, v) in &bf16 {
            assert_eq!(Some(v), fp16.get(k), "{k:?}");
        }
    }

    #[test]
    fn malformed_tables_are_rejected() {
        assert!(parse("").is_err());
        assert!(parse("a,b\n1,2\n").is_err());
        let row = "64,64,32,4,2,0,0,0,ok,58,0,0,24592,1,5,1,0,663d14397a,";
        assert!(parse(&format!("{HEADER}\n{row}\n")).is_ok());
        assert!(parse(&format!("{HEADER}\n{row}\n{row}\n")).is_err());
        assert!(parse(&format!("{HEADER}\n64,64,32\n")).is_err());
        let bad_flag = row.replacen(",0,0,0,ok", ",0,2,0,ok", 1);
        assert!(parse(&format!("{HEADER}\n{bad_flag}\n")).is_err());
    }
}
