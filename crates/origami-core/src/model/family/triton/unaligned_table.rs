//! What Triton 3.6 compiles of the tutorial matmul when N and/or K are not multiples of 16.
//! Triton marks an integer argument `tt.divisibility = 16` only when it is a multiple of
//! 16; without it (N and C's row stride; K and A's and B's row strides) it cannot prove
//! 16-byte alignment, so the kernel is another variant per alignment class
//! (`scripts/triton/alignment.py`). Per class and config: registers, spills, shared
//! memory, wgmma or mma.sync, and the width in bytes of the operand loads and C stores in
//! the PTX (`scripts/triton/unaligned_stats.py`, compiled for sm_90a), embedded as
//! `data/triton_sm90_unaligned.csv`.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::dtype::Dtype;
use crate::hw::GpuDesc;
use crate::model::family::table_rows;
use crate::model::problem::{Config, Problem};

use super::compiled_table::TritonCompiled;

/// The compiler's table, embedded.
pub const TRITON_SM90_UNALIGNED_CSV: &str =
    include_str!("../../../../../../data/triton_sm90_unaligned.csv");

/// Which of N and K lose Triton's multiple-of-16 specialisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AlignClass {
    /// N (and C's row stride) not a multiple of 16.
    N,
    /// K (and A's and B's row strides) not a multiple of 16.
    K,
    /// Both.
    NK,
}

impl AlignClass {
    /// The class of a problem with contiguous operands (row strides K, K and N); `None`
    /// when N and K are multiples of 16. N or K equal to 1 (Triton's constant-1 variant,
    /// not in the table) counts as not a multiple of 16.
    pub fn of(p: &Problem) -> Option<AlignClass> {
        match (p.n % 16 == 0, p.k % 16 == 0) {
            (true, true) => None,
            (false, true) => Some(AlignClass::N),
            (true, false) => Some(AlignClass::K),
            (false, false) => Some(AlignClass::NK),
        }
    }

    /// The table's name of the class.
    pub fn name(self) -> &'static str {
        match self {
            AlignClass::N => "n",
            AlignClass::K => "k",
            AlignClass::NK => "nk",
        }
    }

    fn parse(s: &str) -> Option<AlignClass> {
        [AlignClass::N, AlignClass::K, AlignClass::NK]
            .into_iter()
            .find(|c| c.name() == s)
    }
}

/// One config of one class in the table: compiled, or not (never picked): its compile
/// ran past the script's time limit, or, with K unaligned, it issues more 2-byte loads
/// per thread than the script compiles (ptxas runs for minutes on those).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnalignedEntry {
    Compiled(UnalignedCompiled),
    Timeout,
    Skipped,
}

/// One config of one class as compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnalignedCompiled {
    pub compiled: TritonCompiled,
    /// Narrowest operand load per thread, bytes: 2 is a scalar `ld.global.b16` whose value
    /// goes to shared memory through a register; 4-16 are `cp.async` copies.
    pub load_bytes: u32,
    /// Narrowest C store per thread (`st.global`), bytes.
    pub store_bytes: u32,
}

type Key = (AlignClass, u32, u32, u32, u32, u32);

const HEADER: &str = "class,bm,bn,bk,w,s,status,regs,spill_store_bytes,spill_load_bytes,\
                      shared_bytes,wgmma,load_bytes,loads,store_bytes,stores";

/// Parse the table (`#` comment lines, then the header written by unaligned_stats.py).
pub fn parse(text: &str) -> Result<HashMap<Key, UnalignedEntry>, String> {
    let mut out = HashMap::new();
    for (row, line) in table_rows(text, HEADER)? {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 16 {
            return Err(format!("row {row}: {} fields, want 16", fields.len()));
        }
        let class = AlignClass::parse(fields[0])
            .ok_or_else(|| format!("row {row}: unknown class '{}'", fields[0]))?;
        let num = |x: &str| {
            x.parse::<u32>()
                .map_err(|e| format!("row {row}: {e}: {line}"))
        };
        let cfg = [
            num(fields[1])?,
            num(fields[2])?,
            num(fields[3])?,
            num(fields[4])?,
            num(fields[5])?,
        ];
        let key = (class, cfg[0], cfg[1], cfg[2], cfg[3], cfg[4]);
        match fields[6] {
            "ok" => {}
            "timeout" => {
                out.insert(key, UnalignedEntry::Timeout);
                continue;
            }
            "skipped" => {
                out.insert(key, UnalignedEntry::Skipped);
                continue;
            }
            other => return Err(format!("row {row}: unknown status '{other}'")),
        }
        let f: Vec<u32> = fields[7..]
            .iter()
            .map(|x| num(x))
            .collect::<Result<_, _>>()?;
        let spill = f[1]
            .checked_add(f[2])
            .ok_or_else(|| format!("row {row}: spill bytes overflow"))?;
        if f[5] == 0 || f[7] == 0 {
            return Err(format!("row {row}: a load or store width of 0 bytes"));
        }
        out.insert(
            key,
            UnalignedEntry::Compiled(UnalignedCompiled {
                compiled: TritonCompiled {
                    registers: f[0],
                    spill_bytes: spill,
                    smem_bytes: u64::from(f[3]),
                    wgmma: f[4] == 1,
                },
                load_bytes: f[5],
                store_bytes: f[7],
            }),
        );
    }
    Ok(out)
}

fn table() -> &'static HashMap<Key, UnalignedEntry> {
    static TABLE: OnceLock<HashMap<Key, UnalignedEntry>> = OnceLock::new();
    TABLE.get_or_init(|| {
        parse(TRITON_SM90_UNALIGNED_CSV).expect("embedded unaligned Triton table is well formed")
    })
}

/// Whether the table speaks for this GPU and input type (Hopper, 16-bit inputs).
pub fn covers(dtype: Dtype, gpu: &GpuDesc) -> bool {
    gpu.compute_capability[0] == 9 && dtype.bits() == 16
}

/// The table's entry for a config in a class, when the table covers the GPU and type.
pub fn entry(class: AlignClass, c: &Config, dtype: Dtype, gpu: &GpuDesc) -> Option<UnalignedEntry> {
    if !covers(dtype, gpu) {
        return None;
    }
    table()
        .get(&(
            class,
            c.block_m,
            c.block_n,
            c.block_k,
            c.num_warps,
            c.num_stages,
        ))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_problems() {
        let p = |n, k| Problem::new(4097, n, k, Dtype::Fp16).unwrap();
        assert_eq!(AlignClass::of(&p(4096, 4096)), None); // M does not matter
        assert_eq!(AlignClass::of(&p(3000, 4096)), Some(AlignClass::N));
        assert_eq!(AlignClass::of(&p(7168, 2050)), Some(AlignClass::K));
        assert_eq!(AlignClass::of(&p(4097, 4097)), Some(AlignClass::NK));
        assert_eq!(AlignClass::of(&p(1, 16)), Some(AlignClass::N));
    }

    #[test]
    fn table_covers_every_config_in_every_class() {
        let t = parse(TRITON_SM90_UNALIGNED_CSV).unwrap();
        let aligned =
            super::super::compiled_table::parse(super::super::compiled_table::TRITON_SM90_CSV)
                .unwrap();
        assert_eq!(t.len(), 3 * aligned.len());
        for &(bm, bn, bk, w, s) in aligned.keys() {
            for class in [AlignClass::N, AlignClass::K, AlignClass::NK] {
                assert!(
                    t.contains_key(&(class, bm, bn, bk, w, s)),
                    "{bm}x{bn}x{bk} w{w} s{s}"
                );
            }
        }
        let compiled = |class: AlignClass| {
            t.iter().filter_map(move |(k, v)| match v {
                UnalignedEntry::Compiled(c) if k.0 == class => Some(*c),
                _ => None,
            })
        };
        // K unaligned: every operand load is a 2-byte scalar; N unaligned: every C store.
        for class in [AlignClass::K, AlignClass::NK] {
            assert!(compiled(class).all(|v| v.load_bytes == 2));
        }
        for class in [AlignClass::N, AlignClass::NK] {
            assert!(compiled(class).all(|v| v.store_bytes == 2));
        }
        // with K aligned every config compiles in time
        assert_eq!(compiled(AlignClass::N).count(), aligned.len());
        assert_eq!(
            t[&(AlignClass::N, 128, 128, 64, 8, 3)],
            UnalignedEntry::Compiled(UnalignedCompiled {
                compiled: TritonCompiled {
                    registers: 110,
                    spill_bytes: 0,
                    smem_bytes: 98304,
                    wgmma: true
                },
                load_bytes: 16,
                store_bytes: 2
            })
        );
    }

    #[test]
    fn malformed_tables_are_rejected() {
        assert!(parse("").is_err());
        assert!(parse("a,b\n").is_err());
        let h = format!("{HEADER}\n");
        assert!(parse(&format!("{h}x,1,2,3,4,5,ok,6,7,8,9,1,2,3,4,5\n"))
            .unwrap_err()
            .contains("unknown class"));
        assert!(parse(&format!("{h}k,1,2,3\n")).is_err());
        assert!(parse(&format!("{h}k,1,2,3,4,5,ok,6,7,8,9,1,0,3,4,5\n"))
            .unwrap_err()
            .contains("width of 0"));
        assert!(parse(&format!("{h}k,1,2,3,4,5,ok,6,7,8,x,1,2,3,4,5\n")).is_err());
        assert!(parse(&format!("{h}k,1,2,3,4,5,late,6,7,8,9,1,2,3,4,5\n"))
            .unwrap_err()
            .contains("unknown status"));
        let t = parse(&format!(
            "{h}k,1,2,3,4,5,ok,6,7,8,9,1,2,3,4,5\nnk,1,2,3,4,5,timeout,,,,,,,,,\n"
        ))
        .unwrap();
        assert_eq!(t[&(AlignClass::NK, 1, 2, 3, 4, 5)], UnalignedEntry::Timeout);
        assert!(matches!(
            t[&(AlignClass::K, 1, 2, 3, 4, 5)],
            UnalignedEntry::Compiled(c) if c.compiled.registers == 6 && c.compiled.spill_bytes == 15
        ));
    }
}
