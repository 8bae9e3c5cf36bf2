//! `origami-bench run`: one shape on any [`GemmBench`]: the given configs, the model's
//! pick or its first N, each compiled, verified against cuBLAS and timed in full beside
//! it, into a typed [`RunReport`] (written by `report::run`).

use crate::dtype::Dtype;
use crate::exit::Failure;
use crate::model::problem::{parse_config, parse_dim};
use crate::model::{Config, Problem, Selector};
use crate::stats::median;

use super::bench::GemmBench;
use super::kernel::tflops;
use super::measure::TimingPolicy;
use super::run_report::{ConfigResult, CublasResult, RanConfig, RunReport, RunShape, TimedConfig};
use super::runner::RunnerKernel;
use super::sweep::plan;
use super::GemmError;

/// Which configs to run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunChoice {
    /// These configs (each with its own prediction).
    Given(Vec<Config>),
    /// The model's first N (`None`: the pick alone).
    Model { top: Option<usize> },
}

impl RunChoice {
    /// From `--config` (repeatable; each parsed and checked against `kind`'s kernel rules)
    /// and `--top N` (at least 1).
    pub fn from_flags(
        configs: &[String],
        top: Option<usize>,
        kind: RunnerKernel,
        dtype: Dtype,
    ) -> Result<RunChoice, Failure> {
        let mut given = Vec::new();
        for c in configs {
            let c = parse_config(c).map_err(|e| Failure::bad(format!("--config: {e}")))?;
            kind.check_config(&c, dtype)?;
            given.push(c);
        }
        if top == Some(0) {
            return Err(Failure::bad("--top: must be at least 1"));
        }
        Ok(if given.is_empty() {
            RunChoice::Model { top }
        } else {
            RunChoice::Given(given)
        })
    }
}

/// The shape of `M N K` as given, checked against `kind`'s kernel rule (alignment, sizes).
pub fn problem_of(
    m: &str,
    n: &str,
    k: &str,
    dtype: Dtype,
    kind: RunnerKernel,
) -> Result<Problem, Failure> {
    let dim = |name: &str, v: &str| parse_dim(name, v).map_err(Failure::bad);
    let p = Problem {
        m: dim("M", m)?,
        n: dim("N", n)?,
        k: dim("K", k)?,
        dtype,
    };
    kind.check_problem(&p)?;
    Ok(p)
}

/// A config to run: (config, is the pick, predicted µs).
type Chosen = (Config, bool, f64);

/// The pick and every config to run.
fn chosen(
    sel: &Selector<'_>,
    p: &Problem,
    choice: &RunChoice,
) -> Result<(Config, Vec<Chosen>), GemmError> {
    let top = match choice {
        RunChoice::Model { top } => *top,
        RunChoice::Given(_) => None,
    };
    let (selection, planned) = plan(sel, p, super::sweep::Keep::of(top, None, top.is_none()))
        .map_err(|e| GemmError::BadInput(e.to_string()))?;
    let pick = selection.pick.config;
    let list = match choice {
        RunChoice::Model { .. } => planned
            .iter()
            .map(|x| (x.config, x.is_pick, x.predicted_us))
            .collect(),
        RunChoice::Given(given) => given
            .iter()
            .map(|c| {
                // The config's own prediction (its launch included); the tuning study's
                // switches are outside the model's space (no term for them): the same launch
                // without them; `cluster` and `sk` (outside the space too) on their grids; a
                // config outside the family's feasible set gets its tile's.
                let cycles = sel
                    .predict_config(p, c)
                    .or_else(|| sel.predict_config(p, &model_twin(c)))
                    .or_else(|| sel.predict_outside_space(p, c))
                    .unwrap_or_else(|| {
                        sel.predict_tile(p, (c.block_m, c.block_n, c.block_k), c.group_m)
                            .l_total
                    });
                (*c, *c == pick, sel.cycles_to_us(cycles))
            })
            .collect(),
    };
    Ok((pick, list))
}

/// The config the model prices for `c`: `c` without the tuning study's switches
/// (`cache_all`, `unpredicated`; `origami::STUDY_SWITCHES`), which no model term has.
pub fn model_twin(c: &Config) -> Config {
    Config {
        switches: c
            .switches
            .outside(crate::model::family::origami::STUDY_SWITCHES),
        ..*c
    }
}

/// How `run` measures, beyond the timing policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunOptions {
    /// Seed of the random inputs.
    pub seed: u64,
    /// Energy window under sustained load (`--energy-s`), seconds.
    pub energy_s: Option<f64>,
    /// Timings of every launch (cuBLAS and the configs), in alternating order
    /// ([`pass_order`]); each launch reports its median over them (`--passes`).
    pub passes: usize,
    /// Seconds of untimed cuBLAS launches before the first timing (`--warm-s`; 0: none):
    /// the GPU then starts every pass at the clock it holds under sustained load.
    pub warm_s: f64,
    /// Passes after the first each in a random order of their own, drawn from `seed` and
    /// the pass number, instead of backward and forward (`--shuffle`; [`pass_order`]).
    pub shuffle: bool,
}

impl RunOptions {
    /// One pass, no energy window.
    pub fn once(seed: u64) -> RunOptions {
        RunOptions {
            seed,
            energy_s: None,
            passes: 1,
            warm_s: 0.0,
            shuffle: false,
        }
    }
}

/// The most passes `--passes` takes.
pub const MAX_PASSES: usize = 8;
/// The longest `--warm-s`.
pub const MAX_WARM_S: f64 = 60.0;

/// Untimed cuBLAS timings, back to back, until `seconds` have passed; the seconds spent
/// (`None` when asked for none).
fn warm_up<B: GemmBench>(
    bench: &mut B,
    data: &B::Shape,
    policy: &TimingPolicy,
    seconds: f64,
) -> Result<Option<f64>, GemmError> {
    if seconds <= 0.0 {
        return Ok(None);
    }
    let t0 = std::time::Instant::now();
    while t0.elapsed().as_secs_f64() < seconds {
        bench.time_cublas(data, policy)?;
    }
    Ok(Some(t0.elapsed().as_secs_f64()))
}

/// The order of `n` launches in pass `pass_no` (1, 2, ...): forward in odd passes,
/// backward in even ones. Under a power cap the clocks drift while a run goes on, and a
/// launch's time follows its place; over an even number of alternating passes a steady
/// drift adds the same to every launch's median (its places sum to the same). It also
/// follows the launch before it (after a slower, lower-power one it runs faster:
/// results/h100/triton-tma/flatten-twins/), which alternating passes keep the same; with
/// `shuffle_seed` every pass is a random permutation drawn from the seed and `pass_no`.
pub fn pass_order(n: usize, pass_no: usize, shuffle_seed: Option<u64>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    match shuffle_seed {
        Some(seed) => {
            use rand::seq::SliceRandom;
            use rand::SeedableRng;
            let mut rng = rand::rngs::StdRng::seed_from_u64(
                seed ^ (pass_no as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            );
            order.shuffle(&mut rng);
        }
        None if pass_no % 2 == 0 => order.reverse(),
        None => {}
    }
    order
}

/// Run the chosen configs on `p`. Returns the report and the messages of configs that
/// failed to compile (their rows say "not compiled").
pub fn run_configs<B: GemmBench>(
    bench: &mut B,
    sel: &Selector<'_>,
    p: &Problem,
    choice: &RunChoice,
    policy: &TimingPolicy,
    opts: RunOptions,
) -> Result<(RunReport, Vec<String>), GemmError> {
    let (seed, energy_s) = (opts.seed, opts.energy_s);
    let (pick, configs) = chosen(sel, p, choice)?;
    let cfgs: Vec<Config> = configs.iter().map(|c| c.0).collect();
    let compile_failures = bench.compile(&cfgs, &|| {}).failures;
    let mut data = bench.prepare(p, seed)?;
    let warmed_s = warm_up(bench, &data, policy, opts.warm_s)?;
    let cb = bench.time_cublas(&data, policy)?;
    let cbs = cb
        .summary()
        .ok_or_else(|| GemmError::Runtime("cuBLAS gave no finite sample".into()))?;
    let mut results = Vec::new();
    for (c, is_pick, predicted_us) in &configs {
        let inst = match bench.instance(c) {
            Ok(i) => i,
            Err(e) => {
                results.push(ConfigResult {
                    config: c.to_string(),
                    error: Some(e),
                    ran: None,
                });
                continue;
            }
        };
        let (v, first_ms) = bench.verify(&mut data, c)?;
        let mut timed = None;
        if v.passed {
            let t = bench.time_config(&data, c, policy, None, true, Some(first_ms))?;
            timed = t.summary().map(|s| TimedConfig {
                median_ms: s.median,
                cov: s.cov,
                samples: s.n,
                reps: t.reps,
                tflops: tflops(p, s.median),
                vs_cublas: cbs.median / s.median,
                sustained: None,
                pass_ms: Vec::new(),
            });
            if let (Some(w), Some(tc)) = (energy_s, timed.as_mut()) {
                tc.sustained = bench.sustained(&data, Some(c), tc.median_ms, w)?;
            }
        }
        results.push(ConfigResult {
            config: c.to_string(),
            error: None,
            ran: Some(RanConfig {
                is_pick: *is_pick,
                predicted_us: *predicted_us,
                registers: inst.registers,
                local_bytes: inst.local_bytes,
                spills: inst.local_bytes > 0,
                smem_bytes: inst.smem_bytes,
                rel_err: v.rel_err,
                unwritten: v.unwritten,
                bound: v.bound,
                passed: v.passed,
                timed,
            }),
        });
    }
    let mut cublas_ms = cbs.median;
    let mut cublas_passes = Vec::new();
    if opts.passes > 1 {
        let passed = later_passes(bench, &data, policy, &configs, &results, cbs.median, opts)?;
        cublas_passes = passed[0].clone();
        cublas_ms = median(&cublas_passes);
        let timed = results
            .iter_mut()
            .filter_map(|r| r.ran.as_mut()?.timed.as_mut());
        for (t, times) in timed.zip(&passed[1..]) {
            t.median_ms = median(times);
            t.tflops = tflops(p, t.median_ms);
            t.pass_ms = times.clone();
        }
        for t in results
            .iter_mut()
            .filter_map(|r| r.ran.as_mut()?.timed.as_mut())
        {
            t.vs_cublas = cublas_ms / t.median_ms;
        }
    }
    let report = RunReport {
        shape: RunShape {
            m: p.m,
            n: p.n,
            k: p.k,
            dtype: p.dtype.to_string(),
        },
        gpu: bench.device_name(),
        family: sel.family.name().to_string(),
        model_pick: pick.to_string(),
        cublas: CublasResult {
            median_ms: cublas_ms,
            cov: cbs.cov,
            samples: cbs.n,
            tflops: tflops(p, cublas_ms),
            pass_ms: cublas_passes,
            reps: cb.reps,
            sustained: match energy_s {
                Some(w) => bench.sustained(&data, None, cbs.median, w)?,
                None => None,
            },
        },
        configs: results,
        rotation_copies: bench.rotation(&data),
        clocks: bench.clocks(),
        warmed_s,
    };
    Ok((report, compile_failures))
}

/// Passes 2..=`opts.passes` over cuBLAS and the configs that were timed in pass 1 (in
/// that order, [`pass_order`]); per launch (cuBLAS first, then the timed configs in
/// order) its pass-1 median followed by the later passes' medians.
fn later_passes<B: GemmBench>(
    bench: &mut B,
    data: &B::Shape,
    policy: &TimingPolicy,
    configs: &[Chosen],
    results: &[ConfigResult],
    cublas_ms: f64,
    opts: RunOptions,
) -> Result<Vec<Vec<f64>>, GemmError> {
    // (config or None for cuBLAS, its pass-1 median)
    let mut launches: Vec<(Option<Config>, f64)> = vec![(None, cublas_ms)];
    for ((c, _, _), r) in configs.iter().zip(results) {
        if let Some(t) = r.ran.as_ref().and_then(|x| x.timed.as_ref()) {
            launches.push((Some(*c), t.median_ms));
        }
    }
    let mut times: Vec<Vec<f64>> = launches.iter().map(|l| vec![l.1]).collect();
    for pass in 2..=opts.passes {
        for i in pass_order(launches.len(), pass, opts.shuffle.then_some(opts.seed)) {
            let t = match &launches[i] {
                (None, _) => bench.time_cublas(data, policy)?,
                (Some(c), first) => bench.time_config(data, c, policy, None, true, Some(*first))?,
            };
            if let Some(s) = t.summary() {
                times[i].push(s.median);
            }
        }
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::mock::MockBench;
    use crate::model::problem::parse_config;
    use crate::setup::{setup, SetupRequest};

    #[test]
    fn flags_become_a_choice_and_a_problem() {
        assert_eq!(
            RunChoice::from_flags(&[], None, RunnerKernel::Origami, Dtype::Fp16),
            Ok(RunChoice::Model { top: None })
        );
        assert!(RunChoice::from_flags(&[], Some(0), RunnerKernel::Origami, Dtype::Fp16).is_err());
        let bad =
            RunChoice::from_flags(&["64x64".into()], None, RunnerKernel::Origami, Dtype::Fp16)
                .unwrap_err();
        assert!(bad.msg.starts_with("--config"), "{bad}");
        let e = problem_of("64", "64", "100", Dtype::Fp16, RunnerKernel::Origami).unwrap_err();
        assert!(e.msg.contains("multiple of 8"), "{e}");
        assert_eq!(
            problem_of("64", "32", "16", Dtype::Bf16, RunnerKernel::Origami)
                .unwrap()
                .n,
            32
        );
    }

    /// The origami family on the H100 preset, with its fitted tier.
    fn h100_origami() -> crate::setup::Setup {
        setup(&SetupRequest {
            device: None,
            gpu_name: Some("h100-sxm".into()),
            override_file: None,
            family: "origami".into(),
            model: "origami".into(),
            no_fitted: false,
            calibration_only: false,
        })
        .unwrap()
    }

    #[test]
    fn a_run_on_the_mock_reports_the_pick_and_given_configs() {
        let s = h100_origami();
        let sel = s.selector(Dtype::Fp16).unwrap();
        let p = Problem::new(1024, 1024, 1024, Dtype::Fp16).unwrap();
        let pol = TimingPolicy::default();
        let mut b = MockBench::new(Dtype::Fp16);
        let mut run = |choice: RunChoice, opts: RunOptions| {
            run_configs(&mut b, &sel, &p, &choice, &pol, opts)
                .unwrap()
                .0
        };
        let r = run(RunChoice::Model { top: None }, RunOptions::once(1));
        assert_eq!(r.configs.len(), 1);
        assert_eq!(r.configs[0].config, r.model_pick);
        let given = vec![
            parse_config("64x64x32,g8,w4,s3").unwrap(),
            parse_config("64x64x32,g8,w4,s3,cache_all,unpredicated").unwrap(),
        ];
        let r = run(RunChoice::Given(given), RunOptions::once(1));
        assert_eq!(r.configs[0].config, "64x64x32,g8,w4,s3");
        // the study's switches have no model term: the same launch's prediction
        let predicted = |i: usize| r.configs[i].ran.as_ref().unwrap().predicted_us;
        assert_eq!(predicted(0), predicted(1));
        assert_eq!(
            model_twin(&parse_config("64x64x32,g8,w4,s3,cache_all").unwrap()),
            parse_config("64x64x32,g8,w4,s3").unwrap()
        );
        let r = run(RunChoice::Model { top: Some(3) }, RunOptions::once(1));
        assert_eq!(r.configs.len(), 3);
        assert!(r.configs[0].ran.as_ref().unwrap().is_pick);
        // Four passes: every timed launch keeps its four medians and reports their median.
        let opts = RunOptions {
            passes: 4,
            warm_s: 0.01,
            ..RunOptions::once(1)
        };
        let r = run(RunChoice::Model { top: Some(3) }, opts);
        assert_eq!(r.cublas.pass_ms.len(), 4);
        assert!(r.warmed_s.is_some_and(|w| w >= 0.01));
        assert_eq!(r.cublas.median_ms, median(&r.cublas.pass_ms));
        let mut timed = 0;
        for t in r
            .configs
            .iter()
            .filter_map(|c| c.ran.as_ref()?.timed.as_ref())
        {
            timed += 1;
            assert_eq!(t.pass_ms.len(), 4);
            assert_eq!(t.median_ms, median(&t.pass_ms));
            assert!((t.vs_cublas - r.cublas.median_ms / t.median_ms).abs() < 1e-12);
        }
        assert!(timed > 0);
    }

    #[test]
    fn a_tf32_run_on_the_mock_prices_fp32_tiles() {
        let s = h100_origami();
        let sel = s.selector(Dtype::Tf32).unwrap();
        let p = Problem::new(1000, 1000, 1004, Dtype::Tf32).unwrap();
        let mut b = MockBench::new(Dtype::Tf32);
        let (r, _) = run_configs(
            &mut b,
            &sel,
            &p,
            &RunChoice::Model { top: Some(3) },
            &TimingPolicy::default(),
            RunOptions::once(1),
        )
        .unwrap();
        assert_eq!(r.configs.len(), 3);
        for c in &r.configs {
            let cfg = parse_config(&c.config).unwrap();
            // tf32's BLOCK_K is at most 64, and every pick is priced
            assert!(cfg.block_k <= 64, "{}", c.config);
            assert!(c.ran.as_ref().unwrap().predicted_us > 0.0);
        }
    }

    #[test]
    fn passes_alternate() {
        assert_eq!(pass_order(3, 1, None), vec![0, 1, 2]);
        assert_eq!(pass_order(3, 2, None), vec![2, 1, 0]);
        assert_eq!(pass_order(3, 3, None), vec![0, 1, 2]);
        assert!(pass_order(0, 2, None).is_empty());
        // shuffled: a seeded permutation of its own every pass
        let shuffled: Vec<Vec<usize>> = (2..5).map(|p| pass_order(40, p, Some(7))).collect();
        for o in &shuffled {
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..40).collect::<Vec<_>>());
        }
        assert!(shuffled[0] != shuffled[1] && shuffled[1] != shuffled[2]);
        assert_eq!(pass_order(40, 2, Some(7)), shuffled[0]);
        assert_ne!(pass_order(40, 2, Some(8)), shuffled[0]);
    }
}
