//! What ptxas made of each config of the `hopper` family: registers per thread, stack and
//! spill bytes, warnings (ptxas warns when it serializes wgmma), or that nvcc refused it.
//! csrc/hopper_gemm.cu compiled for sm_90a on a CPU by `scripts/hopper/ptxas_table.sh`
//! (nvcc 13.0 from PyPI), embedded as `data/hopper_sm90.csv`, fp16 and bf16 rows.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::family::table_rows;
use crate::model::problem::Config;

use super::consumers;

/// The table, embedded.
pub const HOPPER_SM90_CSV: &str = include_str!("../../../../../../data/hopper_sm90.csv");

const HEADER: &str =
    "bm,bn,bk,stages,consumers,dtype,registers,stack_bytes,spill_store_bytes,ptxas_warnings,status";

/// One config as compiled, or nvcc's refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HopperCompiled {
    Ok {
        registers: u32,
        /// Stack frame plus spill stores, bytes (> 0: not a healthy kernel).
        spill_bytes: u32,
        /// ptxas warnings (wgmma serialized and the like).
        warnings: u32,
    },
    Failed,
}

/// (BM, BN, BK, stages, consumers, bf16).
type Key = (u32, u32, u32, u32, u32, bool);

/// Parse the table (`#` comment lines, then [`HEADER`]).
pub fn parse(text: &str) -> Result<HashMap<Key, HopperCompiled>, String> {
    let mut out = HashMap::new();
    for (row, line) in table_rows(text, HEADER)? {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 11 {
            return Err(format!("row {row}: {} fields, want 11", f.len()));
        }
        let n = |j: usize| -> Result<u32, String> {
            f[j].parse::<u32>()
                .map_err(|e| format!("row {row}, column {}: {e}: {line}", j + 1))
        };
        let bf16 = match f[5] {
            "fp16" => false,
            "bf16" => true,
            x => return Err(format!("row {row}: dtype '{x}' is not fp16 or bf16")),
        };
        let key = (n(0)?, n(1)?, n(2)?, n(3)?, n(4)?, bf16);
        let entry = if f[10] == "ok" {
            HopperCompiled::Ok {
                registers: n(6)?,
                spill_bytes: n(7)? + n(8)?,
                warnings: n(9)?,
            }
        } else {
            HopperCompiled::Failed
        };
        if out.insert(key, entry).is_some() {
            return Err(format!("row {row}: a second row for one config: {line}"));
        }
    }
    Ok(out)
}

fn table() -> &'static HashMap<Key, HopperCompiled> {
    static TABLE: OnceLock<HashMap<Key, HopperCompiled>> = OnceLock::new();
    TABLE.get_or_init(|| parse(HOPPER_SM90_CSV).expect("embedded Hopper table is well formed"))
}

/// The compiled numbers of a config on compute capability 9.x in fp16 or bf16.
pub fn compiled(c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<&'static HopperCompiled> {
    if gpu.compute_capability[0] != 9 {
        return None;
    }
    let bf16 = match dtype {
        Dtype::Fp16 => false,
        Dtype::Bf16 => true,
        _ => return None,
    };
    table().get(&(
        c.block_m,
        c.block_n,
        c.block_k,
        c.num_stages,
        consumers(c),
        bf16,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_parses_and_is_healthy() {
        let t = parse(HOPPER_SM90_CSV).unwrap();
        // 303 configs x 2 types (scripts/hopper/ptxas_table.sh's rule)
        assert_eq!(t.len(), 606);
        let healthy = t
            .values()
            .filter(|v| {
                matches!(
                    v,
                    HopperCompiled::Ok {
                        spill_bytes: 0,
                        warnings: 0,
                        ..
                    }
                )
            })
            .count();
        // every instance compiles clean since the epilogue writes C with stmatrix (128x192
        // with one consumer, 192 accumulators, spilled 132 bytes at 2 to 5 stages before)
        assert_eq!(healthy, 606);
        assert_eq!(
            t[&(128, 192, 64, 3, 1, false)],
            HopperCompiled::Ok {
                registers: 240,
                spill_bytes: 0,
                warnings: 0
            }
        );
    }

    #[test]
    fn bad_rows_are_refused_with_their_number() {
        let head = format!("# x\n{HEADER}\n");
        let e = parse(&format!("{head}128,256,64,4,2,fp8,168,0,0,0,ok\n")).unwrap_err();
        assert!(e.contains("row 1") && e.contains("fp8"), "{e}");
        let e = parse(&format!("{head}128,256,64,4,2,fp16,x,0,0,0,ok\n")).unwrap_err();
        assert!(e.contains("column 7"), "{e}");
        let two =
            format!("{head}128,256,64,4,2,fp16,168,0,0,0,ok\n128,256,64,4,2,fp16,168,0,0,0,ok\n");
        assert!(parse(&two).unwrap_err().contains("second row"));
    }
}
