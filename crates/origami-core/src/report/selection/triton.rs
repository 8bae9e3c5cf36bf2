//! `--format triton`: a Triton launch of the pick, one compact JSON object per shape (the
//! pick only: a batch with `--top` is refused).
//!
//! The families without compile-time switches, asked alone (`triton`, and `origami` and
//! `seed`, whose tiles the tutorial kernel also takes), print the bare keyword arguments,
//! as they always have: `matmul_kernel[grid](a, b, c, ..., **launch)`. `triton-tma` and
//! `triton-auto` print the kernel with them, since the kernel is not the tutorial one or
//! is chosen per shape:
//! `{"kernel": NAME, "family": FAMILY, "grid": [PROGRAMS], "kwargs": {...}}`, used as
//! `kernels[d["kernel"]][tuple(d["grid"])](a, b, c, ..., **d["kwargs"])`. The persistent
//! kernel's kwargs add its constexprs WARP_SPECIALIZE, FLATTEN, EPILOGUE_SUBTILE and
//! NUM_PROGRAMS (the GPU's SM count, as `matmul()` in
//! python/origami_gemm/kernels/triton_tma.py launches it); its grid is min(NUM_PROGRAMS,
//! tiles), the tutorial kernel's one program per output tile.

use std::io::{self, Write};

use serde_json::{json, Map, Value};

use super::{BatchRow, KernelInfo, SelectionReport, SelectionWriter};
use crate::model::{Config, Problem};

/// The keys a Triton launch of the tutorial kernel takes, for one config.
pub fn launch_json(c: &Config) -> Value {
    json!({
        "BLOCK_SIZE_M": c.block_m,
        "BLOCK_SIZE_N": c.block_n,
        "BLOCK_SIZE_K": c.block_k,
        "GROUP_SIZE_M": c.group_m,
        "num_warps": c.num_warps,
        "num_stages": c.num_stages,
    })
}

/// Add a config's compile-time switches, by the kernel's constexpr names.
pub fn switch_fields(o: &mut Map<String, Value>, c: &Config) {
    let s = c.switches;
    o.insert("WARP_SPECIALIZE".into(), json!(s.warp_specialize));
    o.insert("FLATTEN".into(), json!(s.flatten));
    o.insert("EPILOGUE_SUBTILE".into(), json!(s.epilogue_subtile));
}

/// The keyword arguments a launch of `kernel` takes for config `c`.
pub fn kernel_kwargs(kernel: &KernelInfo, c: &Config) -> Value {
    let mut v = launch_json(c);
    let o = v.as_object_mut().expect("object");
    if kernel.switches {
        switch_fields(o, c);
    }
    if kernel.persistent {
        o.insert("NUM_PROGRAMS".into(), json!(kernel.sm_count));
    }
    if kernel.splits_k {
        o.insert("SPLIT_K".into(), json!(c.split_k));
        o.insert("STREAM_K".into(), json!(c.stream_k));
        o.insert("SWAP".into(), json!(c.switches.swap));
    }
    v
}

/// Programs of the launch: one per output tile, or for a persistent kernel
/// min(NUM_PROGRAMS, work items): the tiles, each split-K run of them, or with Stream-K
/// every K iteration (`throughput::split_runs`, the kernel's rule).
pub fn grid(kernel: &KernelInfo, p: &Problem, c: &Config) -> u64 {
    // with `swap` the kernel's tiles are the transposed problem's
    let p = &crate::model::problem::kernel_problem(p, c);
    let tiles = p.m.div_ceil(u64::from(c.block_m)) * p.n.div_ceil(u64::from(c.block_n));
    if !kernel.persistent {
        return tiles;
    }
    let k_iters = p.k.div_ceil(u64::from(c.block_k.max(1)));
    let work = if c.stream_k {
        tiles * k_iters
    } else {
        tiles * crate::model::throughput::split_runs(k_iters, u64::from(c.split_k.max(1))).1
    };
    work.min(u64::from(kernel.sm_count)).max(1)
}

/// The launch with its kernel named: kernel, family, grid and kwargs.
pub fn named_launch_json(kernel: &KernelInfo, p: &Problem, c: &Config) -> Value {
    json!({
        "kernel": kernel.triton_kernel,
        "family": kernel.family,
        "grid": [grid(kernel, p, c)],
        "kwargs": kernel_kwargs(kernel, c),
    })
}

/// The line of one pick: the named launch where the columns ask for it, else the bare
/// keyword arguments.
fn launch_line(named: bool, kernel: &KernelInfo, p: &Problem, c: &Config) -> Value {
    if named {
        named_launch_json(kernel, p, c)
    } else {
        launch_json(c)
    }
}

/// Writes one launch line per shape.
#[derive(Debug, Default)]
pub struct TritonWriter;

impl SelectionWriter for TritonWriter {
    /// A launch line has no place for the shape or a rank: one pick per shape.
    fn ranks_batches(&self) -> bool {
        false
    }

    fn batch_row(&mut self, out: &mut dyn Write, row: &BatchRow) -> io::Result<()> {
        let v = launch_line(
            row.columns.named_launch,
            &row.kernel,
            &row.problem,
            &row.pick.config,
        );
        writeln!(out, "{v}")
    }

    fn single(&mut self, out: &mut dyn Write, report: &SelectionReport) -> io::Result<()> {
        let v = launch_line(
            report.columns.named_launch,
            &report.kernel,
            &report.problem,
            &report.pick.config,
        );
        writeln!(out, "{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::model::problem::parse_config;

    fn tma(sm_count: u32) -> KernelInfo {
        KernelInfo {
            family: "triton-tma",
            triton_kernel: Some("matmul_tma_persistent_kernel"),
            switches: true,
            persistent: true,
            sm_count,
            splits_k: false,
        }
    }

    #[test]
    fn the_persistent_kernel_gets_its_constexprs_and_programs() {
        let c = parse_config("128x256x64,g8,w8,s3,flatten").unwrap();
        let p = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        let v = named_launch_json(&tma(132), &p, &c);
        assert_eq!(v["kernel"], "matmul_tma_persistent_kernel");
        assert_eq!(v["grid"], json!([132]));
        let kw = v["kwargs"].as_object().unwrap();
        let mut keys: Vec<&str> = kw.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "BLOCK_SIZE_K",
                "BLOCK_SIZE_M",
                "BLOCK_SIZE_N",
                "EPILOGUE_SUBTILE",
                "FLATTEN",
                "GROUP_SIZE_M",
                "NUM_PROGRAMS",
                "WARP_SPECIALIZE",
                "num_stages",
                "num_warps"
            ]
        );
        assert_eq!(kw["FLATTEN"], true);
        assert_eq!(kw["WARP_SPECIALIZE"], false);
        assert_eq!(kw["NUM_PROGRAMS"], 132);
        // fewer tiles than SMs: one program per tile
        let small = Problem::new(256, 512, 64, Dtype::Fp16).unwrap();
        assert_eq!(grid(&tma(132), &small, &c), 2 * 2);
    }

    #[test]
    fn the_tutorial_kernel_keeps_its_six_keys() {
        let c = parse_config("64x128x32,g4,w4,s3").unwrap();
        let k = KernelInfo {
            family: "triton",
            triton_kernel: Some("matmul_kernel"),
            switches: false,
            persistent: false,
            sm_count: 132,
            splits_k: false,
        };
        let p = Problem::new(1000, 1000, 64, Dtype::Fp16).unwrap();
        let v = named_launch_json(&k, &p, &c);
        assert_eq!(v["kwargs"], launch_json(&c));
        assert_eq!(v["grid"], json!([16 * 8]));
        assert_eq!(launch_line(false, &k, &p, &c), launch_json(&c));
    }

    #[test]
    fn a_kernel_that_shares_out_k_names_it_and_counts_its_work_items() {
        let k = KernelInfo {
            family: "hopper",
            triton_kernel: None,
            switches: false,
            persistent: true,
            sm_count: 132,
            splits_k: true,
        };
        // 3 x 32 tiles of 128 x 128, 224 K iterations
        let p = Problem::new(333, 4096, 14336, Dtype::Fp16).unwrap();
        let one = parse_config("128x128x64,g8,w12,s6").unwrap();
        let two = parse_config("128x128x64,g8,w12,s6,k2").unwrap();
        let sk = parse_config("128x128x64,g8,w12,s6,sk").unwrap();
        assert_eq!(grid(&k, &p, &one), 96);
        assert_eq!(grid(&k, &p, &two), 132);
        assert_eq!(grid(&k, &p, &sk), 132);
        // swapped: 32 x 3 tiles of the transposed problem
        let swapped = parse_config("128x112x64,g8,w12,s6,swap").unwrap();
        assert_eq!(grid(&k, &p, &swapped), 96);
        assert_eq!(kernel_kwargs(&k, &swapped)["SWAP"], json!(true));
        let kw = kernel_kwargs(&k, &two);
        assert_eq!(
            (kw["SPLIT_K"].clone(), kw["STREAM_K"].clone()),
            (json!(2), json!(false))
        );
    }
}
