//! One `origami_hopper_gemm` instance per configuration (docs/hopper-kernel.md): the module
//! to compile (csrc/hopper_gemm.cu for sm_90a with the config's defines), the launch, and
//! the three tensor maps a launch passes. The config and problem rules are the hopper
//! family's (`model::family::hopper`); this module asks it. Pure functions; the GPU side
//! is `runner` (with `gpu::tma` for the maps).

use crate::dtype::Dtype;
use crate::gpu::tma::MapShape;
use crate::gpu::{LaunchDims, ModuleSpec};
use crate::model::family::hopper;
use crate::model::problem::kernel_problem;
use crate::model::throughput::{cluster_pairing, ClusterPairing};
use crate::model::{Config, Problem};

use super::GemmError;

/// Kernel symbol of `csrc/hopper_gemm.cu`.
pub const KERNEL_NAME: &str = "origami_hopper_gemm";
/// Device constant holding the module's own shared-memory size.
pub const SMEM_SYMBOL: &str = "origami_hopper_gemm_smem_bytes";
/// Embedded source stem.
pub const SOURCE_STEM: &str = "hopper_gemm";
/// The target: wgmma and setmaxnreg exist only on the arch-specific sm_90a.
pub const TARGET: &str = "sm_90a";

/// Whether the kernel can run a problem (the family's rule: fp16/bf16, K % 8 == 0).
pub fn check_problem(p: &Problem) -> Result<(), GemmError> {
    match hopper::problem_violation(p) {
        Some(why) => Err(GemmError::BadInput(why)),
        None => Ok(()),
    }
}

/// Whether a config is an instance of the kernel (the family's static rules).
pub fn check_config(c: &Config) -> Result<(), GemmError> {
    match hopper::config_violation(c) {
        Some(why) => Err(GemmError::BadInput(format!("config {c}: {why}"))),
        None => Ok(()),
    }
}

/// Shared memory of one CTA, bytes (the family's formula, the kernel's exported value).
pub fn smem_bytes(c: &Config) -> u64 {
    hopper::smem_bytes(c)
}

/// The module of a config: the embedded source for sm_90a with its defines.
pub fn module_spec(c: &Config, dtype: Dtype) -> ModuleSpec {
    let mut s = ModuleSpec::embedded(SOURCE_STEM)
        .force_nvrtc()
        .target(TARGET);
    for (name, v) in hopper::defines(c, dtype) {
        s = match v {
            Some(v) => s.define(name, v),
            None => s.flag(name),
        };
    }
    s
}

/// Symbol of split-K's second kernel (adds the runs' fp32 partial tiles into C).
pub const REDUCE_KERNEL_NAME: &str = "origami_hopper_splitk_reduce";

/// Most bytes a split-K workspace may take: a config that would need more for a problem
/// is refused there (such a split leaves no SM idle to fill: the problem has thousands of
/// tiles), never allocated.
pub const MAX_WORKSPACE_BYTES: u64 = 1 << 30;

/// The config with the group size, the split-K factor and `swap` reset: one compiled
/// instance serves every group_m, every split and both operand orders (run-time
/// arguments); Stream-K's is an instance of its own (-DHG_STREAM_K=1).
pub fn instance_key(c: &Config) -> Config {
    Config {
        group_m: 1,
        split_k: 1,
        switches: crate::model::Switches {
            swap: false,
            ..c.switches
        },
        ..*c
    }
}

/// How a launch shares out the work: split-K (the kernel's `k_per_split` argument and the
/// number of runs; `throughput::split_runs`, the model's rule, is the kernel's) or
/// Stream-K (`stream_ctas` CTAs, each an even range of the tiles' K iterations; 0: not
/// Stream-K).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitPlan {
    pub k_per_split: u64,
    pub runs: u64,
    pub stream_ctas: u64,
    /// The tile's elements (Stream-K's partial tile per CTA).
    tile_elems: u64,
    tiles: u64,
    /// With `cluster`: the work items, pairs of tiles (two tile rows of one column, or two
    /// columns of one row: [`pairing`]); else 0.
    pair_tiles: u64,
}

impl SplitPlan {
    /// The plan of a config on a problem, on a GPU of `sms` SMs (with `swap`, the
    /// transposed problem's: the kernel's tiles).
    pub fn of(c: &Config, p: &Problem, sms: u32) -> SplitPlan {
        // `pairing` takes the user's problem (it transposes for `swap` itself)
        let pair_tiles = pairing(c, p).map_or(0, |pr| pr.pairs);
        let p = &kernel_problem(p, c);
        let k_tiles = p.k.div_ceil(u64::from(c.block_k.max(1)));
        let tiles =
            p.m.div_ceil(u64::from(c.block_m.max(1))) * p.n.div_ceil(u64::from(c.block_n.max(1)));
        let tile_elems = u64::from(c.block_m) * u64::from(c.block_n);
        if c.stream_k {
            return SplitPlan {
                k_per_split: k_tiles,
                runs: 1,
                stream_ctas: (tiles * k_tiles).min(u64::from(sms.max(1))).max(1),
                tile_elems,
                tiles,
                pair_tiles,
            };
        }
        let (k_per_split, runs) =
            crate::model::throughput::split_runs(k_tiles, u64::from(c.split_k.max(1)));
        SplitPlan {
            k_per_split,
            runs,
            stream_ctas: 0,
            tile_elems,
            tiles,
            pair_tiles,
        }
    }

    /// CTAs of the launch: one per SM, at most one per work item (a tile, one of its
    /// split-K runs) or Stream-K's; with `cluster`, pairs of CTAs, at most one pair per
    /// pair of tile rows and column (`pair_tiles`), at most half the SMs' pairs.
    pub fn ctas(&self, sms: u32) -> u64 {
        if self.stream_ctas > 0 {
            return self.stream_ctas;
        }
        if self.pair_tiles > 0 {
            return 2 * self.pair_tiles.min(u64::from(sms / 2).max(1));
        }
        (self.tiles * self.runs).min(u64::from(sms.max(1))).max(1)
    }

    /// fp32 elements of the workspace: split-K's runs x M x N; Stream-K's partial tile per
    /// CTA, then a flag per CTA; none otherwise.
    pub fn workspace_elems(&self, p: &Problem) -> u64 {
        if self.stream_ctas > 0 {
            self.stream_ctas * (self.tile_elems + 1)
        } else if self.runs > 1 {
            self.runs * p.m * p.n
        } else {
            0
        }
    }

    /// Why this plan cannot run a problem (its workspace too large), if so.
    pub fn violation(&self, c: &Config, p: &Problem) -> Option<String> {
        let bytes = self.workspace_elems(p) * 4;
        (bytes > MAX_WORKSPACE_BYTES).then(|| {
            format!(
                "config {c}: split-K's workspace for {}x{}x{} would take {bytes} bytes (at most {MAX_WORKSPACE_BYTES})",
                p.m, p.n, p.k
            )
        })
    }
}

/// Grid (one CTA per SM, at most one per work item: a tile, or one of its split-K runs;
/// Stream-K: one per SM, at most one per K iteration),
/// block (the producer and consumer warpgroups) and dynamic shared memory.
pub fn launch_dims(c: &Config, p: &Problem, sms: u32) -> LaunchDims {
    let grid = SplitPlan::of(c, p, sms).ctas(sms);
    LaunchDims::linear(grid as u32, c.num_warps * 32).with_smem(smem_bytes(c) as u32)
}

/// The second kernel's launch: a grid-stride loop over C, 4 blocks of 256 per SM.
pub fn reduce_dims(sms: u32) -> LaunchDims {
    LaunchDims::linear(4 * sms.max(1), 256)
}

/// How a `cluster` launch pairs its tiles (the kernel's `pair_n` argument and which
/// operand's box is halved); `None` without `cluster`.
pub fn pairing(c: &Config, p: &Problem) -> Option<ClusterPairing> {
    let p = kernel_problem(p, c);
    c.switches.cluster.then(|| {
        let (bm, bn) = (u64::from(c.block_m.max(1)), u64::from(c.block_n.max(1)));
        cluster_pairing(p.m.div_ceil(bm), p.n.div_ceil(bn), bm, bn)
    })
}

/// Whether C is stored by TMA (its rows 16-byte multiples), else from registers (the
/// user's C either way: `p` is the user's problem).
pub fn c_by_tma(p: &Problem) -> bool {
    p.n % 8 == 0
}

/// The tensor maps of the kernel's A (M x K, boxes BM x 64), B (N x K, boxes BN x 64), in
/// the kernel's terms (with `swap` the user's B and A), and of the user's C (boxes 64 x the
/// epilogue chunk's columns, or with `swap` the chunk's columns x 64, written column by
/// column; unused when `c_by_tma` is false); with `cluster` the shared operand's box has
/// half its rows (B's for pairs along M, A's along N: each CTA of a pair loads and
/// multicasts one half).
pub fn map_shapes(c: &Config, user: &Problem) -> [MapShape; 3] {
    let along_n = pairing(c, user).map(|pr| pr.along_n);
    let p = &kernel_problem(user, c);
    let cw = hopper::c_box_cols(c.block_n);
    let (c_box_rows, c_box_cols) = if c.switches.swap { (cw, 64) } else { (64, cw) };
    [
        MapShape {
            rows: p.m,
            cols: p.k,
            box_rows: if along_n == Some(true) {
                c.block_m / 2
            } else {
                c.block_m
            },
            box_cols: c.block_k,
        },
        MapShape {
            rows: p.n,
            cols: p.k,
            box_rows: if along_n == Some(false) {
                c.block_n / 2
            } else {
                c.block_n
            },
            box_cols: c.block_k,
        },
        MapShape {
            rows: user.m,
            cols: user.n,
            box_rows: c_box_rows,
            box_cols: c_box_cols,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::problem::{parse_config, Switches};

    #[test]
    fn a_launch_of_the_kernel() {
        let c = parse_config("128x256x64,g8,w12,s4").unwrap();
        let p = Problem::new(4100, 576, 7168, Dtype::Bf16).unwrap();
        let d = launch_dims(&c, &p, 132);
        // 33 x 3 tiles on 132 SMs: 99 CTAs of 384 threads
        assert_eq!((d.grid.0, d.block.0), (99, 384));
        assert_eq!(u64::from(d.dyn_smem_bytes), smem_bytes(&c));
        let big = Problem::new(8192, 8192, 8192, Dtype::Fp16).unwrap();
        assert_eq!(launch_dims(&c, &big, 132).grid.0, 132);
        let s = module_spec(&c, Dtype::Bf16);
        assert_eq!(s.arch.as_deref(), Some("sm_90a"));
        for o in [
            "-DHG_BM=128",
            "-DHG_BN=256",
            "-DHG_BK=64",
            "-DHG_STAGES=4",
            "-DHG_CONSUMERS=2",
            "-DHG_BF16",
        ] {
            assert!(s.options.iter().any(|x| x == o), "{o}: {:?}", s.options);
        }
        assert!(!module_spec(&c, Dtype::Fp16)
            .options
            .iter()
            .any(|o| o == "-DHG_BF16"));
        let [a, b, cm] = map_shapes(&c, &p);
        assert_eq!(
            (a.rows, a.cols, a.box_rows, a.box_cols),
            (4100, 7168, 128, 64)
        );
        assert_eq!((b.rows, b.box_rows), (576, 256));
        assert_eq!(
            (cm.rows, cm.cols, cm.box_rows, cm.box_cols),
            (4100, 576, 64, 64)
        );
        assert!(a.violation().is_none() && b.violation().is_none() && cm.violation().is_none());
        assert!(c_by_tma(&p));
        let odd = Problem::new(4097, 4103, 4104, Dtype::Fp16).unwrap();
        assert!(!c_by_tma(&odd));
        assert!(check_problem(&odd).is_ok());
        assert!(check_problem(&Problem::new(64, 64, 100, Dtype::Fp16).unwrap()).is_err());
        assert!(check_config(&parse_config("256x256x64,w12,s3").unwrap()).is_err());
    }

    #[test]
    fn swapped_launches_run_the_transposed_problem() {
        // 333 x 4096: the kernel computes the 4096 x 333 transpose, A's map on the user's B
        let p = Problem::new(333, 4096, 4096, Dtype::Fp16).unwrap();
        let c = parse_config("128x112x64,g16,w12,s7,swap").unwrap();
        assert!(c.switches.swap && check_config(&c).is_ok());
        assert_eq!(c.to_string(), "128x112x64,g16,w12,s7,swap");
        let kp = kernel_problem(&p, &c);
        assert_eq!((kp.m, kp.n, kp.k), (4096, 333, 4096));
        // 32 x 3 tiles of the transpose (plain: 3 x 37)
        assert_eq!(launch_dims(&c, &p, 132).grid.0, 96);
        let plain = Config {
            switches: Switches::NONE,
            ..c
        };
        assert_eq!(launch_dims(&plain, &p, 132).grid.0, 111);
        let [a, b, cm] = map_shapes(&c, &p);
        assert_eq!((a.rows, a.cols, a.box_rows), (4096, 4096, 128));
        assert_eq!((b.rows, b.cols, b.box_rows), (333, 4096, 112));
        // C is the user's 333 x 4096, in boxes of the chunk's 16 columns x 64 of the
        // kernel's rows (one 128-byte swizzled line per column)
        assert_eq!(
            (cm.rows, cm.cols, cm.box_rows, cm.box_cols),
            (333, 4096, 16, 64)
        );
        assert_eq!(cm.violation(), None);
        let [_, _, plain_c] = map_shapes(&plain, &p);
        assert_eq!((plain_c.box_rows, plain_c.box_cols), (64, 16));
        // one compiled instance for both orders; split-K's workspace is the same size
        assert_eq!(instance_key(&c), instance_key(&plain));
        let k2 = parse_config("128x112x64,g16,w12,s7,swap,k2").unwrap();
        let plan = SplitPlan::of(&k2, &p, 132);
        assert_eq!(plan.runs, 2);
        assert_eq!(plan.workspace_elems(&p), 2 * 333 * 4096);
        assert_eq!(plan.ctas(132), 132);
        // swapped pairs are the transposed problem's: 333 x 4100 in 128 x 144 tiles is
        // 4100 x 333 for the kernel, 33 x 3 tiles, paired along M (17 x 3 = 51 pairs)
        let pc = parse_config("128x144x64,g16,w12,s4,swap,cluster").unwrap();
        let wide = Problem::new(333, 4100, 7168, Dtype::Fp16).unwrap();
        let pr = pairing(&pc, &wide).unwrap();
        assert!(!pr.along_n && pr.pairs == 51, "{pr:?}");
        assert_eq!(launch_dims(&pc, &wide, 132).grid.0, 102);
    }

    #[test]
    fn clustered_launches() {
        // 4097 rows: 33 tile rows of 128, 17 pairs; 4103 columns: 17 tiles of 256
        let p = Problem::new(4097, 4103, 4104, Dtype::Fp16).unwrap();
        let c = parse_config("128x256x64,g8,w12,s4,cluster").unwrap();
        assert!(c.switches.cluster);
        assert_eq!(c.to_string(), "128x256x64,g8,w12,s4,cluster");
        assert!(check_config(&c).is_ok());
        // 289 pairs over 66 pairs of SMs: 132 CTAs; 4 pairs: 8 CTAs
        assert_eq!(launch_dims(&c, &p, 132).grid.0, 132);
        let small = Problem::new(512, 512, 512, Dtype::Fp16).unwrap();
        assert_eq!(launch_dims(&c, &small, 132).grid.0, 8);
        let [a, b, _] = map_shapes(&c, &p);
        assert_eq!((a.box_rows, b.box_rows), (128, 128));
        assert!(!pairing(&c, &p).unwrap().along_n);
        // 4100 x 576 in 128 x 144 tiles: 33 x 4; along M 17 x 4 = 68 pairs (136 CTAs, more
        // than one wave), along N 33 x 2 = 66: the pairs share A, whose box is halved
        let one_wave = Problem::new(4100, 576, 7168, Dtype::Fp16).unwrap();
        let c144 = parse_config("128x144x64,g16,w12,s4,cluster").unwrap();
        let pr = pairing(&c144, &one_wave).unwrap();
        assert!(pr.along_n && pr.pairs == 66, "{pr:?}");
        assert_eq!(launch_dims(&c144, &one_wave, 132).grid.0, 132);
        let [a, b, _] = map_shapes(&c144, &one_wave);
        assert_eq!((a.box_rows, b.box_rows), (64, 144));
        assert_eq!(
            pairing(&parse_config("128x144x64,w12,s4").unwrap(), &one_wave),
            None
        );
        let spec = module_spec(&c, Dtype::Fp16);
        assert!(spec.options.iter().any(|o| o == "-DHG_CLUSTER=2"));
        assert_ne!(
            instance_key(&c),
            instance_key(&parse_config("128x256x64,w12,s4").unwrap())
        );
        // whole tiles only; Triton's switches are not this kernel's
        for bad in [
            "128x256x64,w12,s4,k2,cluster",
            "128x256x64,w12,s4,sk,cluster",
            "128x256x64,w12,s4,flatten",
        ] {
            let c = parse_config(bad).unwrap();
            assert!(check_config(&c).is_err(), "{bad}");
        }
    }

    #[test]
    fn split_k_launches() {
        let p = Problem::new(333, 4096, 14336, Dtype::Fp16).unwrap();
        let one = parse_config("128x128x64,g8,w12,s6").unwrap();
        let plan = SplitPlan::of(&one, &p, 132);
        assert_eq!((plan.k_per_split, plan.runs, plan.stream_ctas), (224, 1, 0));
        assert_eq!(SplitPlan::of(&one, &p, 132).workspace_elems(&p), 0);
        // 3 x 32 tiles: 96 CTAs unsplit, 132 (all SMs) for 192 work items at 2 runs
        assert_eq!(launch_dims(&one, &p, 132).grid.0, 96);
        let two = parse_config("128x128x64,g8,w12,s6,k2").unwrap();
        assert_eq!(launch_dims(&two, &p, 132).grid.0, 132);
        let plan = SplitPlan::of(&two, &p, 132);
        assert_eq!((plan.k_per_split, plan.runs), (112, 2));
        assert_eq!(plan.workspace_elems(&p), 2 * 333 * 4096);
        assert!(plan.violation(&two, &p).is_none());
        // the same compiled instance
        assert_eq!(instance_key(&two), instance_key(&one));
        // 3 runs of K = 100 (2 K tiles) are 2 runs of one tile each
        let short = Problem::new(64, 64, 100, Dtype::Fp16).unwrap();
        let three = parse_config("64x64x64,w8,s4,k3").unwrap();
        assert_eq!(SplitPlan::of(&three, &short, 132).runs, 2);
        // a workspace above 1 GiB is refused
        let big = Problem::new(16384, 28672, 4096, Dtype::Fp16).unwrap();
        let four = parse_config("128x256x64,w12,s4,k4").unwrap();
        let why = SplitPlan::of(&four, &big, 132)
            .violation(&four, &big)
            .unwrap();
        assert!(why.contains("workspace"), "{why}");
        assert_eq!(reduce_dims(132).grid.0, 528);
        // Stream-K: 96 tiles x 224 K iterations over 132 CTAs; a partial tile and a flag
        // per CTA
        let sk = parse_config("128x128x64,g8,w12,s6,sk").unwrap();
        let plan = SplitPlan::of(&sk, &p, 132);
        assert_eq!((plan.stream_ctas, plan.runs), (132, 1));
        assert_eq!(plan.workspace_elems(&p), 132 * (128 * 128 + 1));
        assert_eq!(launch_dims(&sk, &p, 132).grid.0, 132);
        assert_ne!(instance_key(&sk), instance_key(&one));
        assert!(module_spec(&sk, Dtype::Fp16)
            .options
            .iter()
            .any(|o| o == "-DHG_STREAM_K=1"));
        // fewer K iterations than SMs: one CTA per iteration
        let tiny = Problem::new(64, 64, 128, Dtype::Fp16).unwrap();
        let sk64 = parse_config("64x64x64,w8,s4,sk").unwrap();
        assert_eq!(launch_dims(&sk64, &tiny, 132).grid.0, 2);
    }
}
