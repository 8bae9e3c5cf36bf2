//! Tensor-core throughput per SM (`--only tc-rate`; issue 14, "Calibration drives the
//! model": the throughput model's tensor-core term in physical units).
//!
//! What it models: how many tensor-core operations an SM completes per SM cycle, (a) for
//! `mma.sync.aligned.m16n8k16` fp16 -> fp32 against the number of resident warps (1, 2, 4,
//! 8, 16; csrc/tc_rate.cu), the issue-rate curve of the mma.sync GEMM family, and (b) on
//! compute capability 9.0, for `wgmma.mma_async` m64nNk16 fp16 with both operands in
//! shared memory (N = 16, 64, 128, 256; 1 and 2 warpgroups per CTA; csrc/tc_wgmma.cu),
//! the Hopper GEMM's rate and its "minimum N" effect, as dense FLOP per SM cycle.
//!
//! Method: one block per SM (its dynamic shared memory leaves no room for a second), every
//! warp or warpgroup runs independent work for N and 2N rounds, and a sample is the
//! difference of the per-block clock64 medians, which removes fixed costs (the
//! differential of csrc/mma_latency.cu). Sources: the PTX ISA (mma.sync and
//! wgmma.mma_async, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"), the
//! NVIDIA H100 Tensor Core GPU Architecture whitepaper (1024 dense fp16 FMA per SM per
//! clock: 4096 FLOP/cycle/SM), and the mma.sync methodology of Luo et al., arXiv:2402.13499
//! (docs/calibrate.md, "Tensor-core throughput").

use std::collections::BTreeMap;

use serde_json::json;

use super::{r, CalibError, Curve, KernelArgs, LaunchDims, Results, Runner, Skip};

/// Resident warps per SM of the mma.sync curve.
pub const WARPS: [u32; 5] = [1, 2, 4, 8, 16];
/// Independent accumulator chains per warp (TC_ILP in csrc/tc_rate.cu).
pub const MMA_ILP: u32 = 8;
/// Dense FLOP of one m16n8k16 (2 x 16 x 8 x 16).
pub const MMA_M16N8K16_FLOP: f64 = 4096.0;
/// The N of the wgmma m64nNk16 shapes measured.
pub const WGMMA_NS: [u32; 4] = [16, 64, 128, 256];
/// Warpgroups per CTA of the wgmma measurement.
pub const WGMMA_WARPGROUPS: [u32; 2] = [1, 2];
/// wgmma instructions per round of a warpgroup (one 64-wide K slice: 4 x k16, one commit
/// group, as the Hopper GEMM's consumers issue them).
pub const WGMMA_PER_ROUND: u32 = 4;

/// Dense FLOP of one wgmma m64nNk16: 2 x 64 x N x 16.
pub fn wgmma_flop(n: u32) -> f64 {
    2.0 * 64.0 * f64::from(n) * 16.0
}

/// mma.sync per SM cycle from a differential: `warps` x ILP x `iters` extra mma in
/// `dcycles` extra cycles (None when the difference is not positive).
pub fn mma_per_cycle(warps: u32, iters: u32, dcycles: f64) -> Option<f64> {
    (dcycles > 0.0).then(|| f64::from(warps * MMA_ILP) * f64::from(iters) / dcycles)
}

/// Dense wgmma FLOP per SM cycle from a differential of `iters` rounds per warpgroup.
pub fn wgmma_flop_per_cycle(n: u32, warpgroups: u32, iters: u32, dcycles: f64) -> Option<f64> {
    (dcycles > 0.0).then(|| {
        f64::from(warpgroups) * f64::from(iters) * f64::from(WGMMA_PER_ROUND) * wgmma_flop(n)
            / dcycles
    })
}

/// Why wgmma cannot run on compute capability `cc`, if so: the sm_90a cubin runs on 9.0
/// only (and wgmma exists on no other architecture).
pub fn sm90a_skip_reason(cc: [u32; 2]) -> Option<String> {
    (cc != [9, 0]).then(|| {
        format!(
            "needs compute capability 9.0 (sm_90a code: wgmma and the Hopper TMA path); this GPU is {}.{}",
            cc[0], cc[1]
        )
    })
}

/// The difference of the medians of two per-block cycle records (blocks that wrote 0 did
/// not run and are left out); None when either record is empty.
pub fn differential_cycles(short: &[u64], long: &[u64]) -> Option<f64> {
    let med = |v: &[u64]| {
        let x: Vec<f64> = v.iter().filter(|&&c| c > 0).map(|&c| c as f64).collect();
        (!x.is_empty()).then(|| crate::stats::median(&x))
    };
    Some(med(long)? - med(short)?)
}

/// A rate curve (x ascending) with its fit: the peak and where it is, the first point,
/// and the smallest x reaching 95 % of the peak (`x_95pct`).
pub fn rate_curve(x_name: &str, y_name: &str, mut points: Vec<[f64; 2]>) -> Curve {
    points.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let mut fit = BTreeMap::new();
    if let Some(peak) = points.iter().max_by(|a, b| a[1].total_cmp(&b[1])).copied() {
        fit.insert("peak".into(), peak[1]);
        fit.insert("x_at_peak".into(), peak[0]);
        fit.insert("first".into(), points[0][1]);
        if let Some(p) = points.iter().find(|p| p[1] >= 0.95 * peak[1]) {
            fit.insert("x_95pct".into(), p[0]);
        }
    }
    Curve {
        x_name: x_name.into(),
        y_name: y_name.into(),
        points,
        fit,
    }
}

impl Runner<'_> {
    /// csrc/tc_rate.cu (all GPUs) and csrc/tc_wgmma.cu (compute capability 9.0).
    pub fn tc_rate(&mut self, res: &mut Results) -> Result<(), CalibError> {
        self.mma_rate(res)?;
        let cc = self.gpu.props().compute_capability;
        match sm90a_skip_reason(cc) {
            Some(why) => res.skipped.push(Skip {
                what: "wgmma throughput (tc-rate)".into(),
                why,
            }),
            None => self.wgmma_rate(res)?,
        }
        Ok(())
    }

    fn mma_rate(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let sms = gpu.props().sm_count;
        let k = self.kernel("tc_rate", "tc_mma_rate")?;
        let iters: u32 = if self.cfg.quick { 1024 } else { 4096 };
        let words = self.random_f16_words();
        let input = gpu.upload(&words)?;
        let out = gpu.alloc_zeros::<f32>(512)?;
        let mut cycles = gpu.alloc_zeros::<u64>(sms as usize)?;
        let policy = self.cfg.policy;
        let mut points = Vec::new();
        for w in WARPS {
            let threads = 32 * w;
            let (smem, fit) = self.exclusive_smem(&k, threads, 0)?;
            let dims = LaunchDims::linear(sms, threads).with_smem(smem);
            let name = r::mma_rate_metric(w);
            let m = {
                let cycles = &mut cycles;
                let mut run = |n: u32| -> Result<Vec<u64>, CalibError> {
                    gpu.zero(cycles)?;
                    gpu.launch(
                        &k,
                        dims,
                        KernelArgs::new().buf(&input).u32(n).buf(&out).buf(&*cycles),
                    )?;
                    Ok(gpu.download(&*cycles)?)
                };
                self.sampled(&name, "mma/cycle/SM", policy, |_| {
                    let c1 = run(iters)?;
                    let c2 = run(2 * iters)?;
                    let d = differential_cycles(&c1, &c2).ok_or_else(|| {
                        CalibError::Measurement("tc_mma_rate: no block reported cycles".into())
                    })?;
                    mma_per_cycle(w, iters, d).ok_or_else(|| {
                        CalibError::Measurement(format!(
                            "tc_mma_rate: 2N rounds took no longer than N ({d} cycles)"
                        ))
                    })
                })?
            };
            points.push([f64::from(w), m.median()]);
            let flop = m.median() * MMA_M16N8K16_FLOP;
            res.metrics.push(
                m.with(
                    "instruction",
                    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
                )
                .with("warps_per_sm", w)
                .with("chains_per_warp", MMA_ILP)
                .with("iters", json!([iters, 2 * iters]))
                .with("flop_per_cycle_per_sm", flop)
                .with("grid", json!([sms, threads]))
                .with("dynamic_smem_bytes", smem)
                .with("blocks_that_fit_per_sm", fit)
                .with(
                    "method",
                    "one block per SM; (median over blocks of cycles(2N) - cycles(N)) / (warps x chains x N), clock64",
                ),
            );
        }
        res.curves.insert(
            r::MMA_RATE_CURVE.into(),
            rate_curve("warps_per_sm", "mma_per_cycle_per_sm", points),
        );
        Ok(())
    }

    fn wgmma_rate(&mut self, res: &mut Results) -> Result<(), CalibError> {
        let gpu = self.gpu;
        let sms = gpu.props().sm_count;
        let iters: u32 = if self.cfg.quick { 512 } else { 2048 };
        let out = gpu.alloc_zeros::<f32>(256)?;
        let mut cycles = gpu.alloc_zeros::<u64>(sms as usize)?;
        let policy = self.cfg.policy;
        for wgs in WGMMA_WARPGROUPS {
            let mut points = Vec::new();
            for n in WGMMA_NS {
                let k = self.kernel_sm90a("tc_wgmma", &format!("tc_wgmma_n{n}"))?;
                let threads = 128 * wgs;
                let need = 1024 + wgs * 8192 + n * 128;
                let (smem, fit) = self.exclusive_smem(&k, threads, need)?;
                let dims = LaunchDims::linear(sms, threads).with_smem(smem);
                let seed: u32 = rand::Rng::random(&mut self.rng);
                let name = r::wgmma_rate_metric(n, wgs);
                let m = {
                    let cycles = &mut cycles;
                    let mut run = |i: u32| -> Result<Vec<u64>, CalibError> {
                        gpu.zero(cycles)?;
                        gpu.launch(
                            &k,
                            dims,
                            KernelArgs::new()
                                .u32(i)
                                .u32(seed)
                                .u32(0)
                                .buf(&out)
                                .buf(&*cycles),
                        )?;
                        Ok(gpu.download(&*cycles)?)
                    };
                    self.sampled(&name, "FLOP/cycle/SM", policy, |_| {
                        let c1 = run(iters)?;
                        let c2 = run(2 * iters)?;
                        let d = differential_cycles(&c1, &c2).ok_or_else(|| {
                            CalibError::Measurement(format!(
                                "tc_wgmma_n{n}: no CTA reported cycles"
                            ))
                        })?;
                        wgmma_flop_per_cycle(n, wgs, iters, d).ok_or_else(|| {
                            CalibError::Measurement(format!(
                                "tc_wgmma_n{n}: 2N rounds took no longer than N ({d} cycles)"
                            ))
                        })
                    })?
                };
                points.push([f64::from(n), m.median()]);
                res.metrics.push(
                    m.with(
                        "instruction",
                        format!("wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16"),
                    )
                    .with("n", n)
                    .with("warpgroups_per_cta", wgs)
                    .with("wgmma_per_round", WGMMA_PER_ROUND)
                    .with("iters", json!([iters, 2 * iters]))
                    .with("flop_per_wgmma", wgmma_flop(n))
                    .with("grid", json!([sms, threads]))
                    .with("dynamic_smem_bytes", smem)
                    .with("blocks_that_fit_per_sm", fit)
                    .with(
                        "operands",
                        "A 64x64 per warpgroup and B Nx64 fp16 in shared memory, 128B swizzle, descriptors as csrc/hopper_gemm.cu",
                    )
                    .with(
                        "method",
                        "one CTA per SM; per round 4 x m64nNk16 into one accumulator, commit, wait_group 1; (median over CTAs of cycles(2N) - cycles(N)) -> dense FLOP per cycle",
                    ),
                );
            }
            res.curves.insert(
                r::wgmma_rate_curve(wgs),
                rate_curve("n", "dense_flop_per_cycle_per_sm", points),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_of_the_rates() {
        // 16 warps x 8 chains x 4096 rounds in 819200 cycles: 0.64 mma per cycle per SM
        let r = mma_per_cycle(16, 4096, 819_200.0).unwrap();
        assert!((r - 0.64).abs() < 1e-12);
        // x 4096 FLOP = 2621 FLOP/cycle/SM (mma.sync's ~64 % of Hopper's 4096)
        assert!((r * MMA_M16N8K16_FLOP - 2621.44).abs() < 1e-9);
        assert_eq!(mma_per_cycle(1, 10, 0.0), None);
        assert_eq!(mma_per_cycle(1, 10, -5.0), None);
        // m64n256k16 = 524288 FLOP; at the whitepaper's 4096 FLOP/cycle/SM one takes 128
        // cycles: 2 warpgroups x 1000 rounds x 4 in 1024000 cycles is the peak
        assert_eq!(wgmma_flop(256), 524_288.0);
        assert_eq!(wgmma_flop(16), 32_768.0);
        let f = wgmma_flop_per_cycle(256, 2, 1000, 1_024_000.0).unwrap();
        assert!((f - 4096.0).abs() < 1e-9);
        assert_eq!(wgmma_flop_per_cycle(64, 1, 10, 0.0), None);
    }

    #[test]
    fn wgmma_and_tma_run_on_compute_capability_9_0_only() {
        assert_eq!(sm90a_skip_reason([9, 0]), None);
        for cc in [[8, 0], [8, 6], [8, 9], [10, 0], [12, 0]] {
            let why = sm90a_skip_reason(cc).unwrap();
            assert!(why.contains("9.0"), "{why}");
            assert!(why.contains(&format!("{}.{}", cc[0], cc[1])), "{why}");
        }
    }

    #[test]
    fn the_differential_uses_the_medians_of_blocks_that_ran() {
        // block 3 never ran (0): left out; medians 110 and 210
        let short = [100, 110, 120, 0];
        let long = [200, 210, 220, 0];
        assert_eq!(differential_cycles(&short, &long), Some(100.0));
        assert_eq!(differential_cycles(&[0, 0], &long), None);
        assert_eq!(differential_cycles(&short, &[]), None);
    }

    #[test]
    fn the_curve_is_sorted_and_fitted() {
        let c = rate_curve(
            "warps_per_sm",
            "mma_per_cycle_per_sm",
            vec![
                [4.0, 0.60],
                [1.0, 0.16],
                [16.0, 0.64],
                [2.0, 0.32],
                [8.0, 0.63],
            ],
        );
        let xs: Vec<f64> = c.points.iter().map(|p| p[0]).collect();
        assert_eq!(xs, vec![1.0, 2.0, 4.0, 8.0, 16.0]);
        assert_eq!(c.fit["peak"], 0.64);
        assert_eq!(c.fit["x_at_peak"], 16.0);
        assert_eq!(c.fit["first"], 0.16);
        // 0.60 >= 0.95 x 0.64 = 0.608? no; 0.63 yes: 8 warps
        assert_eq!(c.fit["x_95pct"], 8.0);
        let empty = rate_curve("x", "y", vec![]);
        assert!(empty.points.is_empty() && empty.fit.is_empty());
    }
}
