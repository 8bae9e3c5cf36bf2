//! The plain C structs of a selection: a shape (`origami_shape`) and a pick
//! (`origami_pick`: the config, its launch and its predicted time, with the family, kernel
//! and config text as fixed-size NUL-terminated arrays), filled from the engine's
//! `origami_core::engine::Pick`.

use std::os::raw::c_char;

use origami_core::engine::Pick;

use crate::boundary::Failure;
use crate::status::OrigamiStatus;

/// Bytes of a name field of `origami_pick` (dtype, family, kernel), its NUL included.
pub const ORIGAMI_NAME_CAPACITY: usize = 32;
/// Bytes of the config text of `origami_pick`, its NUL included.
pub const ORIGAMI_CONFIG_CAPACITY: usize = 96;

/// One GEMM shape: C[M, N] = A[M, K] @ B[K, N].
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OrigamiShape {
    pub m: u64,
    pub n: u64,
    pub k: u64,
}

/// One ranked config of one shape, with what its launch needs. Plain data: copy it,
/// keep it, free nothing. Laid out without implicit padding (8-byte fields, then 4-byte,
/// then bytes, `reserved` filling the gap), so that `memcmp` of two picks compares their
/// fields and nothing else.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrigamiPick {
    /// The shape.
    pub m: u64,
    pub n: u64,
    pub k: u64,
    /// Programs of the launch (a persistent kernel: min(SMs, tiles)).
    pub grid: u64,
    /// Shared memory of the config, bytes.
    pub smem_bytes: u64,
    /// Predicted time, microseconds and GPU cycles.
    pub predicted_us: f64,
    pub predicted_cycles: f64,
    /// BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K.
    pub block_m: u32,
    pub block_n: u32,
    pub block_k: u32,
    /// GROUP_SIZE_M.
    pub group_m: u32,
    pub num_warps: u32,
    pub num_stages: u32,
    /// NUM_PROGRAMS of a persistent kernel (the GPU's SMs); -1 for a kernel that is not
    /// persistent.
    pub num_programs: i32,
    /// Registers per thread of the config; -1 where the family's table has none.
    pub registers: i32,
    /// The compile-time switches of the `triton-tma` kernel (FLATTEN, WARP_SPECIALIZE,
    /// EPILOGUE_SUBTILE); false for every other family.
    pub flatten: bool,
    pub warp_specialize: bool,
    pub epilogue_subtile: bool,
    /// Split-K runs of the `hopper` kernel (1: none; every other family 1).
    pub split_k: u8,
    /// Stream-K of the `hopper` kernel; false for every other family.
    pub stream_k: bool,
    /// The `hopper` kernel computes C^T = B A^T (`swap`: launch it with the operands
    /// exchanged, M and N exchanged, C stored transposed); false for every other family.
    pub swap: bool,
    /// Always zero.
    pub reserved: [u8; 2],
    /// The input type (`fp16`, `bf16`, ...).
    pub dtype: [c_char; ORIGAMI_NAME_CAPACITY],
    /// The family whose kernel this config is for (a set's member for `triton-auto`).
    pub family: [c_char; ORIGAMI_NAME_CAPACITY],
    /// The Triton kernel function; empty for a family that is not a Triton kernel.
    pub kernel: [c_char; ORIGAMI_NAME_CAPACITY],
    /// The config as origami-select writes it (`128x256x64,g8,w8,s3,flatten`).
    pub config: [c_char; ORIGAMI_CONFIG_CAPACITY],
}

impl OrigamiPick {
    /// What a failed row of a batch holds: numbers 0 (`num_programs` and `registers`
    /// -1), switches false, names empty.
    pub const ZERO: OrigamiPick = OrigamiPick {
        m: 0,
        n: 0,
        k: 0,
        block_m: 0,
        block_n: 0,
        block_k: 0,
        group_m: 0,
        num_warps: 0,
        num_stages: 0,
        flatten: false,
        warp_specialize: false,
        epilogue_subtile: false,
        split_k: 0,
        stream_k: false,
        swap: false,
        reserved: [0; 2],
        num_programs: -1,
        grid: 0,
        smem_bytes: 0,
        registers: -1,
        predicted_us: 0.0,
        predicted_cycles: 0.0,
        dtype: [0; ORIGAMI_NAME_CAPACITY],
        family: [0; ORIGAMI_NAME_CAPACITY],
        kernel: [0; ORIGAMI_NAME_CAPACITY],
        config: [0; ORIGAMI_CONFIG_CAPACITY],
    };

    /// The C form of an engine pick; a name longer than its field is an error (never cut).
    pub(crate) fn from_pick(p: &Pick) -> Result<OrigamiPick, Failure> {
        let c = &p.config;
        Ok(OrigamiPick {
            m: p.m,
            n: p.n,
            k: p.k,
            block_m: c.block_m,
            block_n: c.block_n,
            block_k: c.block_k,
            group_m: c.group_m,
            num_warps: c.num_warps,
            num_stages: c.num_stages,
            flatten: c.switches.flatten,
            warp_specialize: c.switches.warp_specialize,
            epilogue_subtile: c.switches.epilogue_subtile,
            split_k: u8::try_from(c.split_k).unwrap_or(u8::MAX),
            stream_k: c.stream_k,
            swap: c.switches.swap,
            reserved: [0; 2],
            num_programs: p
                .num_programs
                .map_or(-1, |n| i32::try_from(n).unwrap_or(i32::MAX)),
            grid: p.grid,
            smem_bytes: p.smem_bytes,
            registers: p
                .registers
                .map_or(-1, |r| i32::try_from(r).unwrap_or(i32::MAX)),
            predicted_us: p.predicted_us,
            predicted_cycles: p.predicted_cycles,
            dtype: fixed(&p.dtype.to_string(), "dtype")?,
            family: fixed(p.family, "family")?,
            kernel: fixed(p.kernel.unwrap_or(""), "kernel")?,
            config: fixed(&p.config_text, "config")?,
        })
    }
}

/// `text` as a NUL-terminated fixed array.
fn fixed<const N: usize>(text: &str, field: &str) -> Result<[c_char; N], Failure> {
    let bytes = text.as_bytes();
    if bytes.len() >= N || bytes.contains(&0) {
        return Err(Failure::new(
            OrigamiStatus::Internal,
            format!("origami_pick.{field}: '{text}' does not fit its {N} bytes (NUL included)"),
        ));
    }
    let mut out = [0 as c_char; N];
    for (o, b) in out.iter_mut().zip(bytes) {
        *o = *b as c_char;
    }
    Ok(out)
}

/// The text of a fixed array (up to its first NUL).
pub fn field_text(field: &[c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pick_has_no_implicit_padding() {
        let fields = 7 * 8 + 8 * 4 + 3 + 5 + 3 * ORIGAMI_NAME_CAPACITY + ORIGAMI_CONFIG_CAPACITY;
        assert_eq!(std::mem::size_of::<OrigamiPick>(), fields);
        assert_eq!(std::mem::size_of::<OrigamiPick>(), 288);
        assert_eq!(std::mem::offset_of!(OrigamiPick, dtype), 96);
    }

    #[test]
    fn names_fit_or_fail() {
        let a: [c_char; 4] = fixed("abc", "x").unwrap();
        assert_eq!(field_text(&a), "abc");
        let e = fixed::<4>("abcd", "family").unwrap_err();
        assert!(e
            .msg
            .starts_with("origami_pick.family: 'abcd' does not fit"));
        assert_eq!(field_text(&OrigamiPick::ZERO.family), "");
    }
}
