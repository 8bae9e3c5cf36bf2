//! The hopper family's config space as CSV, for the scripts that compile the kernel
//! without restating its rule (`origami-bench configs --family hopper`, read by
//! scripts/hopper/ptxas_table.sh). One row per config of the space: tile, warps, stages,
//! consumer warpgroups, shared memory, whether it is an instance of the kernel whose
//! shared memory fits (and why not), and the `-D` flags of the instance. Split-K and `swap`
//! are run-time arguments of the same instance: the listing has no row per split or swap.

use std::fmt::Write as _;

use crate::dtype::Dtype;
use crate::model::family::{define_flags, smem_over_limit, KernelFamily};

use super::{config_violation, consumers, defines, problem_violation, smem_bytes, HopperFamily};

/// The listing's header. No field contains a comma; `defines` (space-separated flags) and
/// `reason` (empty when valid) contain blanks.
pub const HEADER: &str =
    "block_m,block_n,block_k,num_warps,num_stages,consumers,smem_bytes,valid,defines,reason";

/// Every config of the space for one input type, header first. With `smem_limit_bytes`
/// (a GPU's opt-in shared memory per block) a config above it is invalid, as on that GPU.
/// Errs when the kernel does not take `dtype`.
pub fn config_list_csv(dtype: Dtype, smem_limit_bytes: Option<u64>) -> Result<String, String> {
    // the kernel's input types are the problem rule's
    if let Some(why) = problem_violation(&crate::model::Problem {
        m: 64,
        n: 64,
        k: 64,
        dtype,
    }) {
        return Err(why);
    }
    let mut out = String::new();
    out.push_str(HEADER);
    out.push('\n');
    // one row per compiled instance: split-K, Stream-K and `swap` are run-time arguments
    for c in HopperFamily
        .configs()
        .into_iter()
        .filter(|c| c.split_k == 1 && !c.stream_k && !c.switches.swap)
    {
        let smem = smem_bytes(&c);
        let reason = config_violation(&c).or_else(|| match smem_limit_bytes {
            Some(limit) if smem > limit => Some(smem_over_limit(smem, limit)),
            _ => None,
        });
        let flags = define_flags(&defines(&c, dtype));
        writeln!(
            out,
            "{},{},{},{},{},{},{smem},{},{},{}",
            c.block_m,
            c.block_n,
            c.block_k,
            c.num_warps,
            c.num_stages,
            consumers(&c),
            u8::from(reason.is_none()),
            flags.join(" "),
            reason.unwrap_or_default()
        )
        .expect("writing to a String");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_holds_the_tables_configs() {
        let text = config_list_csv(Dtype::Bf16, Some(232_448)).unwrap();
        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(rows.len(), 672);
        let valid: Vec<&Vec<&str>> = rows.iter().filter(|r| r[7] == "1").collect();
        // the 303 configs scripts/hopper/ptxas_table.sh compiled into data/hopper_sm90.csv
        assert_eq!(valid.len(), 303);
        let one = valid
            .iter()
            .find(|r| r[..6] == ["128", "256", "64", "12", "4", "2"])
            .unwrap();
        assert_eq!(
            one[8],
            "-DHG_BM=128 -DHG_BN=256 -DHG_BK=64 -DHG_STAGES=4 -DHG_CONSUMERS=2 -DHG_BF16"
        );
        assert_eq!(one[6], "230464");
        assert!(config_list_csv(Dtype::Fp32, None)
            .unwrap_err()
            .contains("fp16 or bf16"));
        let no_limit = config_list_csv(Dtype::Fp16, None).unwrap();
        assert!(no_limit.lines().filter(|l| l.contains(",1,-D")).count() > 303);
    }
}
