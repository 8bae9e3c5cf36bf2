//! A bench without a GPU, for tests and CI: [`MockBench`] implements [`GemmBench`] with
//! times that are a deterministic function of the config and the shape (a wave-quantized
//! rate with a per-config factor), sampled through the real timing policy
//! ([`super::measure::measure`], screen included) with a deterministic wobble. A few
//! configs, chosen by a hash, fail to compile or to verify, so that those paths run too.
//!
//! Its clock is simulated: the measured launches and a fixed host cost per shape advance
//! it in steps of 2^-20 s, so every difference of two readings is exact and a shape's
//! `seconds` is the same whether it ran first or last (sharded sweeps compare byte for
//! byte with one run).

use std::collections::HashMap;

use crate::dtype::Dtype;
use crate::gpu::ClockSample;
use crate::model::{Config, Problem};

use super::bench::{CompileOutcome, GemmBench, InstanceInfo};
use super::kernel::{check_problem, error_bound, instance_key, rotation_copies, smem_bytes};
use super::measure::{measure, BatchTimer, Timing, TimingPolicy};
use super::sweep_meta::fnv1a64;
use super::verify::Verification;
use super::GemmError;

/// Ticks of the simulated clock per second (a power of two: readings are exact).
const TICKS_PER_S: f64 = (1u64 << 20) as f64;
/// SMs of the simulated device (wave quantization).
const MOCK_SMS: u64 = 132;
/// L2 of the simulated device (rotation count).
const MOCK_L2_BYTES: u64 = 50 << 20;

/// The simulated device data of a shape.
#[derive(Debug, Clone, Copy)]
pub struct MockShape {
    pub problem: Problem,
    pub rotation: u32,
}

/// A deterministic bench (see the module header).
#[derive(Debug, Clone)]
pub struct MockBench {
    pub dtype: Dtype,
    /// Host seconds added per shape (inputs, reference): makes the time budget testable.
    pub host_s_per_shape: f64,
    ticks: u64,
    compiled: HashMap<Config, Result<InstanceInfo, String>>,
}

impl MockBench {
    pub fn new(dtype: Dtype) -> MockBench {
        MockBench {
            dtype,
            host_s_per_shape: 0.5,
            ticks: 0,
            compiled: HashMap::new(),
        }
    }

    fn advance(&mut self, seconds: f64) {
        self.ticks += (seconds * TICKS_PER_S).round() as u64;
    }
}

/// FNV-1a over a list of numbers: the mock's only source of variety.
fn hash(values: &[u64]) -> u64 {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    fnv1a64(&bytes)
}

fn config_values(c: &Config) -> [u64; 6] {
    [
        c.block_m.into(),
        c.block_n.into(),
        c.block_k.into(),
        c.group_m.into(),
        c.num_warps.into(),
        c.num_stages.into(),
    ]
}

fn shape_hash(c: &Config, p: &Problem) -> u64 {
    let mut v = config_values(c).to_vec();
    v.extend([p.m, p.n, p.k]);
    hash(&v)
}

/// Milliseconds of one launch of `c` on `p`: 300 TFLOP/s at full waves, a factor of
/// 0.8-1.2 per (config, shape), and 4 µs of fixed cost.
pub fn mock_kernel_ms(c: &Config, p: &Problem) -> f64 {
    let tiles = p.m.div_ceil(c.block_m.into()) * p.n.div_ceil(c.block_n.into());
    let waves = tiles.div_ceil(MOCK_SMS);
    let wave_use = tiles as f64 / (waves * MOCK_SMS) as f64;
    let factor = 0.8 + 0.4 * ((shape_hash(c, p) >> 11) as f64 / (1u64 << 53) as f64);
    p.flops() / (300e12 * wave_use) * 1e3 * factor + 0.004
}

/// Milliseconds of one cuBLAS call on `p`: 600 TFLOP/s and 3 µs.
pub fn mock_cublas_ms(p: &Problem) -> f64 {
    p.flops() / 600e12 * 1e3 + 0.003
}

/// Launches of one kernel with a deterministic wobble of ±1 % per sample; each sample
/// advances the simulated clock.
struct MockTimer<'a> {
    kernel_ms: f64,
    calls: usize,
    clock: &'a mut MockBench,
}

impl BatchTimer for MockTimer<'_> {
    type Error = GemmError;
    fn sample(&mut self, reps: u32) -> Result<f64, GemmError> {
        self.calls += 1;
        let wobble = 1.0 + 0.01 * ((self.calls % 3) as f64 - 1.0);
        let batch_ms = self.kernel_ms * f64::from(reps) * wobble + 0.002;
        self.clock.advance(batch_ms / 1e3);
        Ok(batch_ms / f64::from(reps))
    }
}

impl GemmBench for MockBench {
    type Shape = MockShape;

    fn device_name(&self) -> String {
        "mock GPU".into()
    }

    fn driver(&self) -> Option<String> {
        None
    }

    fn clocks(&self) -> Option<ClockSample> {
        None
    }

    fn elapsed_s(&self) -> f64 {
        self.ticks as f64 / TICKS_PER_S
    }

    fn compile(&mut self, configs: &[Config], progress: &(dyn Fn() + Sync)) -> CompileOutcome {
        let mut failures = Vec::new();
        for c in configs {
            let key = instance_key(c);
            let r = if hash(&config_values(&key)) % 20 == 7 {
                Err("mock: the compiler gave up".to_string())
            } else {
                Ok(InstanceInfo {
                    registers: 64 + (c.block_m * c.block_n / (c.num_warps * 16)).min(191) as i32,
                    local_bytes: 0,
                    smem_bytes: smem_bytes(&key, self.dtype) as u32,
                })
            };
            if let Err(e) = &r {
                failures.push(format!("{key}: {e}"));
            }
            self.compiled.insert(key, r);
            progress();
        }
        failures.sort();
        failures.dedup();
        CompileOutcome {
            failures,
            threads: 1,
        }
    }

    fn instance(&self, c: &Config) -> Result<InstanceInfo, String> {
        match self.compiled.get(&instance_key(c)) {
            Some(r) => r.clone(),
            None => Err(format!("config {c} was not compiled")),
        }
    }

    fn prepare(&mut self, p: &Problem, _seed: u64) -> Result<MockShape, GemmError> {
        check_problem(p)?;
        self.advance(self.host_s_per_shape);
        Ok(MockShape {
            problem: *p,
            rotation: rotation_copies(p, MOCK_L2_BYTES),
        })
    }

    fn rotation(&self, data: &MockShape) -> u32 {
        data.rotation
    }

    fn time_cublas(
        &mut self,
        data: &MockShape,
        policy: &TimingPolicy,
    ) -> Result<Timing, GemmError> {
        let mut t = MockTimer {
            kernel_ms: mock_cublas_ms(&data.problem),
            calls: 0,
            clock: self,
        };
        measure(&mut t, policy, data.rotation, None, true, None)
    }

    fn verify(
        &mut self,
        data: &mut MockShape,
        c: &Config,
    ) -> Result<(Verification, f64), GemmError> {
        self.instance(c).map_err(GemmError::Runtime)?;
        let h = shape_hash(c, &data.problem);
        let passed = h % 40 != 3;
        let ms = mock_kernel_ms(c, &data.problem) + 0.002;
        self.advance(ms / 1e3);
        let bound = error_bound(self.dtype);
        let rel_err = if passed { 1e-4 } else { 0.5 };
        Ok((
            Verification {
                rel_err,
                ref_norm: 1.0,
                unwritten: 0,
                bound,
                passed,
            },
            ms,
        ))
    }

    /// A deterministic stand-in for the energy counter (the tick logic is
    /// `energy::sustained_queued`'s, tested there): 300 W plus 25 W per warp, at the kernel's
    /// mock time (cuBLAS: 450 W), the window's seconds on the clock.
    fn sustained(
        &mut self,
        data: &MockShape,
        c: Option<&Config>,
        ms_per_launch: f64,
        min_window_s: f64,
    ) -> Result<Option<super::energy::Sustained>, GemmError> {
        let (ms, watts) = match c {
            Some(c) => (
                mock_kernel_ms(c, &data.problem),
                300.0 + 25.0 * f64::from(c.num_warps),
            ),
            None => (ms_per_launch, 450.0),
        };
        self.advance(min_window_s);
        let launches = (min_window_s * 1e3 / ms).max(1.0) as u64;
        Ok(Some(super::energy::Sustained {
            mj_per_launch: watts * ms,
            avg_w: watts,
            window_s: min_window_s,
            launches,
            ms_per_launch: ms,
            busy: 1.0,
            sm_mhz: Some(1755.0),
            sm_mhz_min: Some(1740.0),
            throttle: vec!["sw_power_cap".into()],
        }))
    }

    fn time_config(
        &mut self,
        data: &MockShape,
        c: &Config,
        policy: &TimingPolicy,
        best_ms: Option<f64>,
        full: bool,
        first_ms: Option<f64>,
    ) -> Result<Timing, GemmError> {
        self.instance(c).map_err(GemmError::Runtime)?;
        let mut t = MockTimer {
            kernel_ms: mock_kernel_ms(c, &data.problem),
            calls: 0,
            clock: self,
        };
        measure(&mut t, policy, data.rotation, best_ms, full, first_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::problem::parse_config;

    #[test]
    fn times_are_deterministic_and_the_clock_exact() {
        let p = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        let c = parse_config("128x128x32,g8,w8,s3").unwrap();
        assert_eq!(mock_kernel_ms(&c, &p), mock_kernel_ms(&c, &p));
        let run = |warm: f64| {
            let mut b = MockBench::new(Dtype::Fp16);
            b.advance(warm);
            b.compile(&[c], &|| {});
            let t0 = b.elapsed_s();
            let mut d = b.prepare(&p, 1).unwrap();
            let (v, first) = b.verify(&mut d, &c).unwrap();
            let t = b
                .time_config(&d, &c, &TimingPolicy::default(), None, true, Some(first))
                .unwrap();
            (v.passed, t, b.elapsed_s() - t0)
        };
        let (a, b) = (run(0.0), run(1234.567));
        assert_eq!(a, b, "a shape's seconds do not depend on when it ran");
        assert!(a.2 > 0.5);
    }
}
