//! A GEMM problem C[M,N] = A[M,K] x B[K,N] and a tile configuration, with the validation
//! every front end shares (sizes from 1 to 2^31).

use std::fmt;

use crate::dtype::Dtype;

/// Largest accepted M, N or K.
pub const MAX_DIM: u64 = 1 << 31;

/// A GEMM problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Problem {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub dtype: Dtype,
}

/// A bad problem size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}: {msg}")]
pub struct DimError {
    pub name: String,
    pub msg: String,
}

/// Parse one size argument ("M", "N", "K") from text: a whole number in 1..=2^31.
pub fn parse_dim(name: &str, text: &str) -> Result<u64, DimError> {
    let t = text.trim();
    let err = |msg: String| DimError {
        name: name.to_string(),
        msg,
    };
    if t.starts_with('-') {
        return Err(err(format!("'{t}' is negative; sizes must be at least 1")));
    }
    let v: u64 = t
        .parse()
        .map_err(|_| err(format!("'{t}' is not a whole number")))?;
    check_dim(name, v)
}

/// Check a size: 1..=2^31.
pub fn check_dim(name: &str, v: u64) -> Result<u64, DimError> {
    if v == 0 {
        return Err(DimError {
            name: name.into(),
            msg: "must be at least 1 (got 0)".into(),
        });
    }
    if v > MAX_DIM {
        return Err(DimError {
            name: name.into(),
            msg: format!("{v} is above the limit 2^31 = {MAX_DIM}"),
        });
    }
    Ok(v)
}

impl Problem {
    /// A validated problem.
    pub fn new(m: u64, n: u64, k: u64, dtype: Dtype) -> Result<Problem, DimError> {
        Ok(Problem {
            m: check_dim("M", m)?,
            n: check_dim("N", n)?,
            k: check_dim("K", k)?,
            dtype,
        })
    }

    /// Floating-point operations: 2 M N K.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// C^T = B A^T: the same GEMM with M and N exchanged.
    pub fn transposed(&self) -> Problem {
        Problem {
            m: self.n,
            n: self.m,
            ..*self
        }
    }

    /// The problem a kernel computes when its operands are `swap`ped: the transpose, else
    /// this one (the one rule the runner launches by and the model prices by).
    pub fn transposed_if(&self, swap: bool) -> Problem {
        if swap {
            self.transposed()
        } else {
            *self
        }
    }
}

/// The problem a config's kernel computes: the user's, or with `swap` its transpose.
pub fn kernel_problem(p: &Problem, c: &Config) -> Problem {
    p.transposed_if(c.switches.swap)
}

/// A kernel configuration: the tile (BLOCK_M/N/K), launch order and pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Config {
    pub block_m: u32,
    pub block_n: u32,
    pub block_k: u32,
    pub group_m: u32,
    pub num_warps: u32,
    pub num_stages: u32,
    /// Compile-time switches (only the `triton-tma` family has any; none elsewhere).
    pub switches: Switches,
    /// Split-K: the number of runs each tile's K iterations are cut into, each run a work
    /// item of its own whose fp32 partial tile a second kernel adds up (1: none; only the
    /// `hopper` family has more). Written last as `kS` when above 1.
    pub split_k: u32,
    /// Stream-K: the tiles' K iterations cut into one even range per CTA of the persistent
    /// grid, a tile shared by two CTAs finished by the one holding its first K iterations
    /// (only the `hopper` family; then `split_k` is 1). Written last as `sk`.
    pub stream_k: bool,
}

/// Compile-time switches of a kernel. Triton's persistent tensor-descriptor kernel on
/// Hopper (python/origami_gemm/kernels/triton_tma.py): `FLATTEN` and `WARP_SPECIALIZE` go
/// to the tile loop's `tl.range`, `EPILOGUE_SUBTILE` stores C in two halves. The Hopper
/// CUDA kernel (csrc/hopper_gemm.cu): `cluster` runs its CTAs in pairs that share A's or
/// B's loads by TMA multicast (`HG_CLUSTER=2`, `throughput::cluster_pairing`). The
/// mma.sync kernel (csrc/gemm.cu), the knobs of the CUTLASS tuning study: `cache_all`
/// loads with `cp.async.ca` (through L1) instead of `cp.async.cg` (L2 only),
/// `unpredicated` drops every bounds check (shapes whose M, N and K are multiples of the
/// tile only). `swap` (the Hopper CUDA kernel) computes C^T = B A^T: the kernel runs the
/// transposed problem (N x M, [`kernel_problem`]) and stores C transposed, so the user's
/// rows land on the tile's N, which wgmma takes in steps of 16 (a run-time argument of the
/// same compiled instance). Written after the launch as whole words
/// (`128x256x64,g8,w8,s3,flatten`); a config without any prints as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Switches {
    pub flatten: bool,
    pub warp_specialize: bool,
    pub epilogue_subtile: bool,
    pub cluster: bool,
    pub cache_all: bool,
    pub unpredicated: bool,
    pub swap: bool,
}

impl Switches {
    /// No switch set (every family but `triton-tma`).
    pub const NONE: Switches = Switches {
        flatten: false,
        warp_specialize: false,
        epilogue_subtile: false,
        cluster: false,
        cache_all: false,
        unpredicated: false,
        swap: false,
    };
    /// The words of the text form, in order.
    pub const WORDS: [&'static str; 7] = [
        "flatten",
        "warp_specialize",
        "epilogue_subtile",
        "cluster",
        "cache_all",
        "unpredicated",
        "swap",
    ];

    /// The set switches as `a, b` (for messages; the config text writes `,a,b`).
    pub fn words(&self) -> String {
        self.to_string().trim_start_matches(',').replace(',', ", ")
    }

    /// Whether any switch is set.
    pub fn any(&self) -> bool {
        *self != Switches::NONE
    }

    fn flags(&self) -> [bool; 7] {
        [
            self.flatten,
            self.warp_specialize,
            self.epilogue_subtile,
            self.cluster,
            self.cache_all,
            self.unpredicated,
            self.swap,
        ]
    }

    /// The switches set here that `allowed` does not set (NONE when every one is allowed).
    pub fn outside(&self, allowed: Switches) -> Switches {
        let mut out = Switches::NONE;
        for ((on, ok), word) in self
            .flags()
            .into_iter()
            .zip(allowed.flags())
            .zip(Switches::WORDS)
        {
            if on && !ok {
                out.set(word);
            }
        }
        out
    }

    /// Set the switch named by `word` (one of [`Switches::WORDS`]); false when unknown.
    fn set(&mut self, word: &str) -> bool {
        match word {
            "flatten" => self.flatten = true,
            "warp_specialize" => self.warp_specialize = true,
            "epilogue_subtile" => self.epilogue_subtile = true,
            "cluster" => self.cluster = true,
            "cache_all" => self.cache_all = true,
            "unpredicated" => self.unpredicated = true,
            "swap" => self.swap = true,
            _ => return false,
        }
        true
    }
}

impl fmt::Display for Switches {
    /// `,flatten,warp_specialize` (the set ones, each with its leading comma).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (on, word) in self.flags().into_iter().zip(Switches::WORDS) {
            if on {
                write!(f, ",{word}")?;
            }
        }
        Ok(())
    }
}

impl Config {
    /// A launch of a family's space as it is enumerated: GROUP_SIZE_M 1 (phase 2 sets it),
    /// no split-K, no Stream-K.
    pub fn launch(
        tile: (u32, u32, u32),
        num_warps: u32,
        num_stages: u32,
        switches: Switches,
    ) -> Config {
        Config {
            block_m: tile.0,
            block_n: tile.1,
            block_k: tile.2,
            group_m: 1,
            num_warps,
            num_stages,
            switches,
            split_k: 1,
            stream_k: false,
        }
    }

    /// Tile arithmetic intensity 2 BM BN BK / (BM BK + BN BK + BM BN) (element units, as
    /// the Origami ranking uses it).
    pub fn tile_intensity(&self) -> f64 {
        let (m, n, k) = (
            f64::from(self.block_m),
            f64::from(self.block_n),
            f64::from(self.block_k),
        );
        2.0 * m * n * k / (m * k + n * k + m * n)
    }

    /// Same tile (BLOCK_M/N/K)?
    pub fn same_tile(&self, o: &Config) -> bool {
        (self.block_m, self.block_n, self.block_k) == (o.block_m, o.block_n, o.block_k)
    }

    /// Same tile grid on any problem (the same tile, the same operand order: `swap`): the
    /// configs phase 2 gives one GROUP_SIZE_M.
    pub fn same_grid(&self, o: &Config) -> bool {
        self.same_tile(o) && self.switches.swap == o.switches.swap
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}x{}x{},g{},w{},s{}{}",
            self.block_m,
            self.block_n,
            self.block_k,
            self.group_m,
            self.num_warps,
            self.num_stages,
            self.switches
        )?;
        if self.split_k > 1 {
            write!(f, ",k{}", self.split_k)?;
        }
        if self.stream_k {
            f.write_str(",sk")?;
        }
        Ok(())
    }
}

/// Parse `BMxBNxBK,gG,wW,sS[,switch...][,kS|,sk]` (the `g`, `w`, `s`, `k` parts optional,
/// defaults g1 w4 s3 k1; switches are the words of [`Switches::WORDS`]; `sk`: Stream-K,
/// which excludes a split).
pub fn parse_config(text: &str) -> Result<Config, String> {
    let mut parts = text.trim().split(',');
    let tile = parts.next().unwrap_or_default();
    let dims: Vec<&str> = tile.split(['x', 'X']).collect();
    if dims.len() != 3 {
        return Err(format!("config '{text}': expected BMxBNxBK[,gG][,wW][,sS]"));
    }
    let num = |s: &str, what: &str| -> Result<u32, String> {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| format!("config '{text}': {what} '{s}' is not a positive whole number"))
    };
    let mut c = Config {
        block_m: num(dims[0], "BLOCK_M")?,
        block_n: num(dims[1], "BLOCK_N")?,
        block_k: num(dims[2], "BLOCK_K")?,
        group_m: 1,
        num_warps: 4,
        num_stages: 3,
        switches: Switches::NONE,
        split_k: 1,
        stream_k: false,
    };
    for p in parts {
        let p = p.trim();
        if c.switches.set(p) {
            continue;
        }
        if p == "sk" {
            c.stream_k = true;
            continue;
        }
        let (key, val) = p.split_at(p.len().min(1));
        match key {
            "g" => c.group_m = num(val, "GROUP_SIZE_M")?,
            "w" => c.num_warps = num(val, "num_warps")?,
            "s" => c.num_stages = num(val, "num_stages")?,
            "k" => c.split_k = num(val, "split-K")?,
            _ => {
                return Err(format!(
                    "config '{text}': unknown part '{p}' (use gG, wW, sS, kS, sk, {})",
                    Switches::WORDS.join(", ")
                ))
            }
        }
    }
    if c.stream_k && c.split_k > 1 {
        return Err(format!(
            "config '{text}': Stream-K (sk) and split-K (k{}) exclude each other",
            c.split_k
        ));
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swapped_config_computes_the_transposed_problem() {
        let c = parse_config("128x112x64,g16,w12,s7,swap,k2").unwrap();
        assert!(c.switches.swap && c.split_k == 2);
        assert_eq!(c.to_string(), "128x112x64,g16,w12,s7,swap,k2");
        let p = Problem::new(333, 4096, 1024, Dtype::Bf16).unwrap();
        let t = kernel_problem(&p, &c);
        assert_eq!((t.m, t.n, t.k, t.dtype), (4096, 333, 1024, Dtype::Bf16));
        assert_eq!(t.transposed(), p);
        let plain = parse_config("128x112x64,g16,w12,s7").unwrap();
        assert_eq!(kernel_problem(&p, &plain), p);
        // the same tile in the other operand order is another grid
        assert!(c.same_tile(&plain) && !c.same_grid(&plain) && c.same_grid(&c));
    }

    #[test]
    fn switches_round_trip_and_outside() {
        let c = parse_config("128x128x32,g8,w4,s3,cache_all,unpredicated").unwrap();
        assert!(c.switches.cache_all && c.switches.unpredicated && !c.switches.cluster);
        assert_eq!(c.to_string(), "128x128x32,g8,w4,s3,cache_all,unpredicated");
        let allowed = Switches {
            cache_all: true,
            ..Switches::NONE
        };
        let out = c.switches.outside(allowed);
        assert_eq!(out.to_string(), ",unpredicated");
        assert_eq!(out.words(), "unpredicated");
        assert_eq!(c.switches.words(), "cache_all, unpredicated");
        assert_eq!(Switches::NONE.words(), "");
        assert!(!Switches::NONE.outside(Switches::NONE).any());
        let e = parse_config("64x64x32,w4,s3,cahce_all").unwrap_err();
        assert!(e.contains("cache_all, unpredicated"), "{e}");
    }

    #[test]
    fn dims_validated() {
        assert_eq!(parse_dim("M", "4096").unwrap(), 4096);
        assert!(parse_dim("M", "0")
            .unwrap_err()
            .to_string()
            .contains("M: must be at least 1"));
        assert!(parse_dim("N", "-5")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(parse_dim("K", "abc")
            .unwrap_err()
            .to_string()
            .contains("not a whole number"));
        assert!(parse_dim("K", "2147483649")
            .unwrap_err()
            .to_string()
            .contains("2^31"));
        assert_eq!(parse_dim("K", "2147483648").unwrap(), 1 << 31);
    }

    #[test]
    fn tile_intensity_of_128_256_64() {
        let c = parse_config("128x256x64").unwrap();
        let want = 2.0 * 128.0 * 256.0 * 64.0 / (128.0 * 64.0 + 256.0 * 64.0 + 128.0 * 256.0);
        assert_eq!(c.tile_intensity(), want);
    }

    #[test]
    fn config_round_trip() {
        let c = parse_config("128x64x32,g8,w8,s4").unwrap();
        assert_eq!(c.to_string(), "128x64x32,g8,w8,s4");
        assert!(parse_config("128x64").is_err());
        assert!(parse_config("128x64x0").is_err());
        assert!(parse_config("128x64x32,q3").is_err());
        let t = parse_config("128x256x64,g8,w8,s3,epilogue_subtile,flatten").unwrap();
        assert!(t.switches.flatten && t.switches.epilogue_subtile && !t.switches.warp_specialize);
        assert_eq!(
            t.to_string(),
            "128x256x64,g8,w8,s3,flatten,epilogue_subtile"
        );
        assert_eq!(parse_config(&t.to_string()).unwrap(), t);
        assert!(parse_config("128x64x32,flat").is_err());
        // split-K: written last, only when above 1
        let k = parse_config("128x112x64,g16,w12,s6,k3").unwrap();
        assert_eq!(k.split_k, 3);
        assert_eq!(k.to_string(), "128x112x64,g16,w12,s6,k3");
        assert_eq!(
            parse_config("128x112x64,k1").unwrap().to_string(),
            "128x112x64,g1,w4,s3"
        );
        assert!(parse_config("128x112x64,k0").is_err());
        assert!(parse_config("128x112x64,k").is_err());
        let sk = parse_config("128x128x64,g8,w12,s6,sk").unwrap();
        assert!(sk.stream_k && sk.split_k == 1);
        assert_eq!(sk.to_string(), "128x128x64,g8,w12,s6,sk");
        assert!(parse_config("128x128x64,k2,sk")
            .unwrap_err()
            .contains("exclude each other"));
    }
}
