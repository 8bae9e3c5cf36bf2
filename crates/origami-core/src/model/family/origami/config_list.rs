//! The origami family's config space as CSV, for the scripts that compile the kernel or
//! model it without restating its rule (`origami-bench configs`, read by
//! scripts/ptxas-table.sh, scripts/gemm-compile-check.sh and scripts/throughput_start.py).
//! One row per config: tile and launch, warp grid, shared memory, whether it is valid (and
//! why not), and the nvcc/NVRTC `-D` flags of the instance.

use std::fmt::Write as _;

use crate::dtype::Dtype;
use crate::model::family::smem_over_limit;
use crate::model::problem::Config;

use super::{config_space, config_violation_for, defines, dtype_violation, smem_bytes, warp_grid};

/// The listing's header. No field contains a comma; `defines` (space-separated flags) and
/// `reason` (empty when valid) contain blanks.
pub const HEADER: &str = "block_m,block_n,block_k,num_warps,num_stages,warps_m,warps_n,\
smem_bytes,valid,defines,reason";

/// The `-D` flags of one instance, as nvcc and NVRTC take them.
pub fn define_flags(c: &Config, dtype: Dtype) -> Vec<String> {
    crate::model::family::define_flags(&defines(c, dtype))
}

/// Every config of the space for one input type, header first. With `smem_limit_bytes`
/// (a GPU's opt-in shared memory per block) a config above it is invalid, as on that GPU.
/// Errs when the kernel does not take `dtype`.
pub fn config_list_csv(dtype: Dtype, smem_limit_bytes: Option<u64>) -> Result<String, String> {
    if let Some(why) = dtype_violation(dtype) {
        return Err(why);
    }
    let mut out = String::new();
    out.push_str(HEADER);
    out.push('\n');
    for c in config_space() {
        let smem = smem_bytes(&c, dtype);
        let reason = match smem_limit_bytes {
            Some(limit) if smem > limit => Some(smem_over_limit(smem, limit)),
            _ => config_violation_for(&c, dtype),
        };
        let (wm, wn) = warp_grid(&c);
        writeln!(
            out,
            "{},{},{},{},{},{wm},{wn},{smem},{},{},{}",
            c.block_m,
            c.block_n,
            c.block_k,
            c.num_warps,
            c.num_stages,
            u8::from(reason.is_none()),
            define_flags(&c, dtype).join(" "),
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
    fn listing_counts_match_the_register_table() {
        // Valid per dtype: 342 at sm_90's limit, 322 at sm_80's, 262 at sm_86/89's.
        for (limit, valid) in [(232_448, 342), (166_912, 322), (101_376, 262)] {
            let text = config_list_csv(Dtype::Fp16, Some(limit)).unwrap();
            let rows: Vec<Vec<&str>> = text
                .lines()
                .skip(1)
                .map(|l| l.split(',').collect())
                .collect();
            assert_eq!(rows.len(), 384);
            assert!(rows.iter().all(|r| r.len() == HEADER.split(',').count()));
            assert_eq!(rows.iter().filter(|r| r[8] == "1").count(), valid);
        }
        let all = config_list_csv(Dtype::Fp16, None).unwrap();
        assert_eq!(
            all.lines().filter(|l| l.contains(",1,-D")).count(),
            384 - 12
        );
    }

    #[test]
    fn rows_carry_the_defines_and_the_reason() {
        let text = config_list_csv(Dtype::Bf16, Some(101_376)).unwrap();
        assert!(text.lines().any(|l| l
            == "128,256,64,8,3,2,4,147456,0,-DBLOCK_M=128 -DBLOCK_N=256 -DBLOCK_K=64 \
                -DNUM_WARPS=8 -DNUM_STAGES=3 -DWARPS_M=2 -DDTYPE_BF16,\
                shared memory 147456 B > 101376 B opt-in limit"));
        assert!(text.lines().any(|l| l
            == "32,32,16,8,2,4,2,4096,0,-DBLOCK_M=32 -DBLOCK_N=32 -DBLOCK_K=16 \
                -DNUM_WARPS=8 -DNUM_STAGES=2 -DWARPS_M=4 -DDTYPE_BF16,\
                warp tile 8x16 is not a multiple of 16"));
        assert!(config_list_csv(Dtype::Fp8E4m3, None).is_err());
    }
}
