//! What Triton's compiler made of each config of the `triton` family on Hopper: registers
//! per thread, spill bytes, shared memory and whether the dot became wgmma. Triton 3.6's
//! tutorial matmul compiled for sm_90a with fp16 inputs (`scripts/triton/ptxas_stats.py`,
//! `results/h200/triton/ptxas_sm90a.csv`), embedded as `data/triton_sm90.csv`. The family
//! uses it for 16-bit inputs on compute capability 9.x and its estimates elsewhere.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::family::table_rows;
use crate::model::problem::Config;

/// The compiler's table, embedded.
pub const TRITON_SM90_CSV: &str = include_str!("../../../../../../data/triton_sm90.csv");

/// One config as compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TritonCompiled {
    pub registers: u32,
    /// Spill stores plus spill loads, bytes (> 0: the config spills).
    pub spill_bytes: u32,
    pub smem_bytes: u64,
    pub wgmma: bool,
}

type Key = (u32, u32, u32, u32, u32);

/// Parse the table (a `#` comment line, then the header written by `data/triton_sm90.csv`).
pub fn parse(text: &str) -> Result<HashMap<Key, TritonCompiled>, String> {
    let rows = table_rows(
        text,
        "bm,bn,bk,w,s,regs,spill_store_bytes,spill_load_bytes,shared_bytes,wgmma",
    )?;
    let mut out = HashMap::new();
    for (row, line) in rows {
        let f: Vec<u64> = line
            .split(',')
            .map(|x| x.trim().parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("row {row}: {e}: {line}"))?;
        if f.len() != 10 {
            return Err(format!("row {row}: {} fields, want 10", f.len()));
        }
        let n = |x: u64| u32::try_from(x).map_err(|_| format!("row {row}: {x} too large"));
        out.insert(
            (n(f[0])?, n(f[1])?, n(f[2])?, n(f[3])?, n(f[4])?),
            TritonCompiled {
                registers: n(f[5])?,
                spill_bytes: n(f[6] + f[7])?,
                smem_bytes: f[8],
                wgmma: f[9] == 1,
            },
        );
    }
    Ok(out)
}

fn table() -> &'static HashMap<Key, TritonCompiled> {
    static TABLE: OnceLock<HashMap<Key, TritonCompiled>> = OnceLock::new();
    TABLE.get_or_init(|| parse(TRITON_SM90_CSV).expect("embedded Triton table is well formed"))
}

/// The compiled numbers of a config, when the table covers the GPU and input type.
pub fn compiled(c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<TritonCompiled> {
    if gpu.compute_capability[0] != 9 || dtype.bits() != 16 {
        return None;
    }
    table()
        .get(&(c.block_m, c.block_n, c.block_k, c.num_warps, c.num_stages))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::presets::preset;

    #[test]
    fn table_covers_the_family_and_reads_known_rows() {
        let t = parse(TRITON_SM90_CSV).unwrap();
        assert_eq!(t.len(), 900); // 150 tiles x 2 warp counts x 3 stage counts
        assert_eq!(
            t[&(16, 16, 16, 4, 2)],
            TritonCompiled {
                registers: 30,
                spill_bytes: 0,
                smem_bytes: 1024,
                wgmma: false
            }
        );
        // Some configs spill, and the large tiles of 16-bit inputs run on wgmma.
        assert!(t.values().any(|r| r.spill_bytes > 0));
        assert!(t[&(128, 128, 64, 4, 3)].wgmma);
    }

    #[test]
    fn only_hopper_16_bit() {
        let c = Config {
            block_m: 128,
            block_n: 128,
            block_k: 64,
            group_m: 1,
            num_warps: 4,
            num_stages: 3,
            switches: crate::model::Switches::NONE,
            split_k: 1,
            stream_k: false,
        };
        let h = preset("h200").unwrap().gpu;
        assert!(compiled(&c, Dtype::Fp16, &h).is_some());
        assert!(compiled(&c, Dtype::Bf16, &h).is_some());
        assert!(compiled(&c, Dtype::Fp8E4m3, &h).is_none());
        assert!(compiled(&c, Dtype::Fp16, &preset("a100").unwrap().gpu).is_none());
    }

    #[test]
    fn malformed_tables_are_rejected() {
        assert!(parse("").is_err());
        assert!(parse("a,b\n1,2\n").is_err());
        let h = "bm,bn,bk,w,s,regs,spill_store_bytes,spill_load_bytes,shared_bytes,wgmma\n";
        assert!(parse(&format!("{h}1,2,3\n")).is_err());
        assert!(parse(&format!("{h}1,2,3,4,5,6,7,8,x,0\n")).is_err());
    }
}
