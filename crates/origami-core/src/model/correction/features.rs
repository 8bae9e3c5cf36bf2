//! What the learned correction sees of a launch: its tile, pipeline and switches, the grid
//! it runs on the problem (waves, the last wave's fill, the busiest SM's work), the
//! operands' sizes against the L2, and the model's own prediction. One owner for the fit
//! (`origami-bench fit-correction`) and the selection, so both see the same numbers. The
//! problem is taken in the kernel's terms (a swapped launch runs the transposed problem).

use crate::hw::GpuDesc;
use crate::model::problem::{kernel_problem, Config, Problem};

/// The features' names, in order (a fitted file names them; a file whose names differ is
/// refused).
pub const FEATURES: [&str; 30] = [
    "log2_block_m",
    "log2_block_n",
    "block_k",
    "stages",
    "warps",
    "flatten",
    "swap",
    "split_k",
    "log2_waves",
    "last_wave_fill",
    "log2_m",
    "log2_n",
    "log2_k",
    "ln_predicted_us",
    "k_iterations",
    "busiest_sm_items",
    "log2_busiest_sm_iterations",
    "tile_intensity",
    "log2_a_over_l2",
    "log2_b_over_l2",
    "log2_l2_traffic",
    "padding_efficiency",
    "smem_ring_kib",
    "sm_share",
    "log2_flop_per_byte",
    "tile_rows",
    "tile_columns",
    "warp_specialize",
    "epilogue_subtile",
    "stream_k",
];

/// The number of features.
pub const FEATURE_COUNT: usize = FEATURES.len();

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// The features of launch `c` on problem `p` (the user's problem; swapped launches are
/// read in the kernel's terms) on `gpu`, the model predicting `predicted_us`. Every value
/// is finite for any input: sizes are taken at least 1 and a prediction that is not a
/// positive finite number reads as 1 us.
pub fn launch_features(
    p: &Problem,
    c: &Config,
    gpu: &GpuDesc,
    predicted_us: f64,
) -> [f64; FEATURE_COUNT] {
    let kp = kernel_problem(p, c);
    let (m, n, k) = (kp.m.max(1) as f64, kp.n.max(1) as f64, kp.k.max(1) as f64);
    let bm = f64::from(c.block_m.max(1));
    let bn = f64::from(c.block_n.max(1));
    let bk = f64::from(c.block_k.max(1));
    let runs = f64::from(c.split_k.max(1));
    let sms = f64::from(gpu.sm_count.max(1));
    let l2 = (gpu.l2_bytes.max(1)) as f64;
    let elem = kp.dtype.bytes().max(1e-3);
    let tm = (m / bm).ceil();
    let tn = (n / bn).ceil();
    let tiles = tm * tn * runs;
    let waves = tiles / sms;
    let k_iters = ((k / bk).ceil() / runs).ceil();
    let busiest = (tiles / sms).ceil();
    let l2_traffic = tm * tn * (bm + bn) * k * elem;
    let predicted = if predicted_us.is_finite() && predicted_us > 0.0 {
        predicted_us
    } else {
        1.0
    };
    [
        bm.log2(),
        bn.log2(),
        bk,
        f64::from(c.num_stages),
        f64::from(c.num_warps),
        flag(c.switches.flatten),
        flag(c.switches.swap),
        runs,
        waves.max(1e-3).log2(),
        tiles / (waves.ceil().max(1.0) * sms),
        m.log2(),
        n.log2(),
        k.log2(),
        predicted.ln(),
        k_iters,
        busiest,
        (busiest * k_iters).max(1.0).log2(),
        bm * bn / (bm + bn),
        (m * k * elem / l2).log2(),
        (n * k * elem / l2).log2(),
        l2_traffic.log2(),
        m * n / (tm * bm * tn * bn),
        (bm + bn) * bk * elem * f64::from(c.num_stages) / 1024.0,
        tiles.min(sms) / sms,
        (2.0 * m * n * k / ((m * k + n * k + m * n) * elem)).log2(),
        tm,
        tn,
        flag(c.switches.warp_specialize),
        flag(c.switches.epilogue_subtile),
        flag(c.stream_k),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::hw::presets::preset;
    use crate::model::problem::parse_config;

    fn h100() -> GpuDesc {
        preset("h100-sxm").unwrap().gpu
    }

    #[test]
    fn a_known_launch_has_the_numbers_worked_by_hand() {
        let p = Problem {
            m: 4096,
            n: 4096,
            k: 4096,
            dtype: Dtype::Fp16,
        };
        let c = parse_config("128x256x64,g8,w12,s4").unwrap();
        let f = launch_features(&p, &c, &h100(), 190.0);
        let get = |name: &str| f[FEATURES.iter().position(|n| *n == name).unwrap()];
        assert_eq!(get("log2_block_m"), 7.0);
        assert_eq!(get("log2_block_n"), 8.0);
        assert_eq!(get("k_iterations"), 64.0);
        // 32 x 16 = 512 tiles on 132 SMs: 4 per SM at most, the last wave 116 of 132
        assert_eq!(get("busiest_sm_items"), 4.0);
        assert!((get("last_wave_fill") - 512.0 / 528.0).abs() < 1e-12);
        assert!((get("tile_intensity") - 128.0 * 256.0 / 384.0).abs() < 1e-12);
        assert_eq!(get("padding_efficiency"), 1.0);
        // (128 + 256) x 64 x 2 bytes x 4 stages = 192 KiB
        assert_eq!(get("smem_ring_kib"), 192.0);
        assert!((get("ln_predicted_us") - 190f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn a_swapped_launch_reads_the_transposed_problem() {
        let p = Problem {
            m: 17,
            n: 6144,
            k: 4096,
            dtype: Dtype::Bf16,
        };
        let plain = parse_config("64x32x64,g1,w8,s8").unwrap();
        let mut swapped = plain;
        swapped.switches.swap = true;
        let a = launch_features(&p, &plain, &h100(), 20.0);
        let b = launch_features(&p, &swapped, &h100(), 20.0);
        let at = |f: &[f64; FEATURE_COUNT], name: &str| {
            f[FEATURES.iter().position(|n| *n == name).unwrap()]
        };
        assert_eq!(at(&a, "tile_rows"), 1.0);
        assert_eq!(at(&b, "tile_rows"), 96.0);
        assert_eq!(at(&b, "swap"), 1.0);
    }

    #[test]
    fn every_feature_is_finite_at_the_extremes() {
        let g = h100();
        for (m, n, k) in [(1, 1, 1), (u64::MAX, u64::MAX, u64::MAX), (0, 0, 0)] {
            let p = Problem {
                m,
                n,
                k,
                dtype: Dtype::Fp16,
            };
            let mut c = parse_config("64x16x64,g1,w8,s8,k4").unwrap();
            for pred in [f64::NAN, -1.0, 0.0, f64::INFINITY, 1e-300, 1e300] {
                c.block_m = 0;
                let f = launch_features(&p, &c, &g, pred);
                assert!(f.iter().all(|v| v.is_finite()), "{m} {pred}: {f:?}");
            }
        }
    }
}
