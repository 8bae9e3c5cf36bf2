//! The selection as a library call (this project), for the Python and C bindings: an
//! [`Engine`] is set up once (hardware tiers and constants as `origami-select` resolves
//! them: `setup.rs`), builds each family's selector for an input type the first time that
//! type is asked, and then answers `select`, `rank`, `score`, `explain` and batches from
//! any thread. Picks are exactly `origami-select`'s: the same family set, the same
//! per-shape choice (`model::family_set`), the same error messages (`pick::PickError`).
//! Single picks go through a bounded LRU cache keyed on (M, N, K, type).

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use crate::dtype::Dtype;
use crate::exit::{Exit, ToExit};
use crate::hw::resolve::Resolved;
use crate::hw::DeviceProps;
use crate::lru::Lru;
use crate::model::family_set::{Choice, FamilySet};
use crate::model::problem::parse_config;
use crate::model::select::{Ranked, Scope};
use crate::model::{Config, Problem, Selector};
use crate::pick::{auto_summary, supported_dtype, PickError, SELECT_DTYPES};
use crate::report::selection::json::report_json;
use crate::report::selection::triton::{grid, kernel_kwargs};
use crate::report::selection::{Columns, KernelInfo, Listing, SelectionReport};
use crate::setup::{setup, variant_named, Setup, SetupRequest};

/// Picks kept by default in an engine's cache.
pub const DEFAULT_CACHE_ENTRIES: usize = 4096;

/// The fewest shapes a thread of a batch takes (below it, threads cost more than they
/// save: a pick takes tens of microseconds).
pub const BATCH_CHUNK: usize = 64;

/// What an engine is set up from: the same choices as `origami-select`'s flags.
#[derive(Debug, Clone, Default)]
pub struct EngineRequest {
    /// Properties of the GPU in hand (the caller's to find: the core loads no driver).
    pub device: Option<DeviceProps>,
    /// A preset by name (`--gpu`), whatever the device.
    pub gpu: Option<String>,
    /// A hardware file (`TRITONBLAS_HW_PARAMS`), full or flat.
    pub hw_file: Option<PathBuf>,
    /// Family or family set (`--family`); empty: `triton`.
    pub family: String,
    /// Model variant (`--model`); empty: `origami`.
    pub model: String,
    /// Leave out the family's fitted constants (`--no-fitted`).
    pub no_fitted: bool,
    /// Leave out the family's learned correction (`--no-correction`, docs/correction.md).
    pub no_correction: bool,
    /// Picks the cache keeps (0: no cache).
    pub cache_entries: Option<usize>,
    /// The calibration-only tier (`--calibration-only`): the throughput model's constants
    /// from the measurements of the calibration in `hw_file`, nothing fitted.
    pub calibration_only: bool,
}

/// Why an engine call failed: `origami-select`'s error, or a config that cannot be scored.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Pick(#[from] PickError),
    #[error("config '{text}': {why}")]
    Config { text: String, why: String },
}

impl ToExit for EngineError {
    fn exit_code(&self) -> Exit {
        match self {
            EngineError::Pick(e) => e.exit_code(),
            EngineError::Config { .. } => Exit::BadInput,
        }
    }
}

impl From<crate::setup::SetupError> for EngineError {
    fn from(e: crate::setup::SetupError) -> Self {
        EngineError::Pick(e.into())
    }
}

/// One ranked config of one shape, with everything needed to launch it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub dtype: Dtype,
    /// The family whose kernel this config is for (a set's member, for `triton-auto`).
    pub family: &'static str,
    /// The Triton kernel function, when the family is a Triton kernel.
    pub kernel: Option<&'static str>,
    pub config: Config,
    /// The config as `origami-select` writes it (`128x256x64,g8,w8,s3,flatten`).
    pub config_text: String,
    pub predicted_cycles: f64,
    pub predicted_us: f64,
    pub smem_bytes: u64,
    pub registers: Option<u32>,
    /// Programs of the launch (a persistent kernel: min(SMs, tiles)).
    pub grid: u64,
    /// NUM_PROGRAMS of a persistent kernel (the GPU's SMs).
    pub num_programs: Option<u32>,
    /// The launch's keyword arguments by the kernel's names, as a JSON object
    /// (`--format triton`'s `kwargs`).
    pub kwargs: serde_json::Value,
}

type Built = Result<Selector<'static>, String>;

/// A set-up selection: thread-safe, its selectors built on first use.
pub struct Engine {
    set: FamilySet,
    setups: Vec<Setup>,
    /// Per member, per input type of [`SELECT_DTYPES`].
    selectors: Vec<[OnceLock<Built>; SELECT_DTYPES.len()]>,
    cache: Mutex<Lru<(u64, u64, u64, Dtype), Pick>>,
    notice: Option<String>,
}

fn dtype_slot(d: Dtype) -> usize {
    SELECT_DTYPES.iter().position(|x| *x == d).unwrap_or(0)
}

impl Engine {
    /// Set up: family (or set), model, hardware tiers and constants, as `origami-select`
    /// does; the selectors are built when a type is first asked.
    pub fn new(req: &EngineRequest) -> Result<Engine, EngineError> {
        let family = if req.family.trim().is_empty() {
            "triton"
        } else {
            req.family.as_str()
        };
        let model = if req.model.trim().is_empty() {
            "origami"
        } else {
            req.model.as_str()
        };
        let set =
            FamilySet::named(family).ok_or_else(|| PickError::UnknownFamily(family.to_string()))?;
        variant_named(model).map_err(PickError::from)?;
        let mut setups = Vec::with_capacity(set.members.len());
        let mut notice = None;
        for f in &set.members {
            let request = SetupRequest {
                device: req.device.clone(),
                gpu_name: req.gpu.clone(),
                override_file: req.hw_file.clone(),
                family: f.name().to_string(),
                model: model.to_string(),
                no_fitted: req.no_fitted,
                calibration_only: req.calibration_only,
            };
            let mut s = setup(&request).map_err(PickError::from)?;
            if req.no_correction {
                s = s.without_correction();
            }
            if notice.is_none() {
                notice = crate::setup::hardware_notice(&request, &s.resolved);
            }
            setups.push(s);
        }
        let selectors = set.members.iter().map(|_| Default::default()).collect();
        Ok(Engine {
            set,
            setups,
            selectors,
            cache: Mutex::new(Lru::new(req.cache_entries.unwrap_or(DEFAULT_CACHE_ENTRIES))),
            notice,
        })
    }

    /// The family or set name the engine selects for.
    pub fn family(&self) -> &'static str {
        self.set.name
    }

    /// The member families, in tie-break order.
    pub fn members(&self) -> Vec<&'static str> {
        self.set.members.iter().map(|f| f.name()).collect()
    }

    /// The resolved hardware (every value with its tier), of the first member.
    pub fn hardware(&self) -> &Resolved {
        &self.setups[0].resolved
    }

    /// The CLI's notice on where the hardware numbers come from, when it has one.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// (hits, misses, entries, capacity) of the pick cache.
    pub fn cache_stats(&self) -> (u64, u64, usize, usize) {
        let c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let (h, m) = c.stats();
        (h, m, c.len(), c.capacity())
    }

    /// Empty the pick cache.
    pub fn clear_cache(&self) {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn selector(&self, member: usize, dtype: Dtype) -> Result<&Selector<'static>, String> {
        let built = self.selectors[member][dtype_slot(dtype)].get_or_init(|| {
            self.setups[member].selector(dtype).map_err(|e| match e {
                crate::setup::SetupError::NoFeasibleConfig { source, .. } => source.to_string(),
                e => e.to_string(),
            })
        });
        built.as_ref().map_err(String::clone)
    }

    /// The problem, checked as `origami-select` checks M N K and the type.
    pub fn problem(&self, m: u64, n: u64, k: u64, dtype: &str) -> Result<Problem, EngineError> {
        let dtype = supported_dtype(dtype.parse::<Dtype>().map_err(PickError::from)?)?;
        let p = Problem::new(m, n, k, dtype).map_err(PickError::from)?;
        if let Some(reason) = self.set.violation(&p) {
            return Err(PickError::Unrunnable {
                family: self.set.name,
                reason,
            }
            .into());
        }
        Ok(p)
    }

    fn choose(&self, p: &Problem, scope: Scope) -> Result<Choice<'_>, EngineError> {
        let dtype = p.dtype;
        // A single family that cannot rank the type fails with the CLI's whole message
        // (built again only on that error path).
        if !self.set.is_choice() && self.selector(0, dtype).is_err() {
            if let Err(e) = self.setups[0].selector(dtype) {
                return Err(PickError::from(e).into());
            }
        }
        Ok(self
            .set
            .choose_scoped(p, |i| self.selector(i, dtype), scope)
            .map_err(PickError::from)?)
    }

    fn pick_of(&self, p: &Problem, s: &Selector<'_>, r: &Ranked) -> Pick {
        let kernel = KernelInfo::of(s);
        Pick {
            m: p.m,
            n: p.n,
            k: p.k,
            dtype: p.dtype,
            family: kernel.family,
            kernel: kernel.triton_kernel,
            config: r.config,
            config_text: r.config.to_string(),
            predicted_cycles: r.latency_cycles,
            predicted_us: r.latency_us,
            smem_bytes: r.smem_bytes,
            registers: r.registers,
            grid: grid(&kernel, p, &r.config),
            num_programs: kernel.persistent.then_some(kernel.sm_count),
            kwargs: kernel_kwargs(&kernel, &r.config),
        }
    }

    /// The pick for one shape (cached).
    pub fn select(&self, m: u64, n: u64, k: u64, dtype: &str) -> Result<Pick, EngineError> {
        let p = self.problem(m, n, k, dtype)?;
        self.select_problem(&p)
    }

    /// The pick for a checked problem (cached).
    pub fn select_problem(&self, p: &Problem) -> Result<Pick, EngineError> {
        let key = (p.m, p.n, p.k, p.dtype);
        if let Some(hit) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(hit);
        }
        let choice = self.choose(p, Scope::Pick)?;
        let pick = self.pick_of(p, choice.selector, &choice.selection.pick);
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(key, pick.clone());
        Ok(pick)
    }

    /// The `top` best configs of the chosen family for one shape, best first (`--top`).
    pub fn rank(
        &self,
        m: u64,
        n: u64,
        k: u64,
        dtype: &str,
        top: usize,
    ) -> Result<Vec<Pick>, EngineError> {
        if top == 0 {
            return Err(PickError::NoTop.into());
        }
        let p = self.problem(m, n, k, dtype)?;
        let choice = self.choose(&p, Scope::All)?;
        Ok(choice
            .selector
            .ranked(&choice.selection, top)
            .iter()
            .map(|r| self.pick_of(&p, choice.selector, r))
            .collect())
    }

    /// Predicted microseconds of one config (`128x128x64,g8,w4,s3`, switches as words) for
    /// one shape, by the first member whose space holds it.
    pub fn score(
        &self,
        m: u64,
        n: u64,
        k: u64,
        dtype: &str,
        config: &str,
    ) -> Result<f64, EngineError> {
        let p = self.problem(m, n, k, dtype)?;
        let c = parse_config(config).map_err(|why| EngineError::Config {
            text: config.to_string(),
            why,
        })?;
        let mut last = None;
        for (i, f) in self.set.members.iter().enumerate() {
            if f.problem_violation(&p).is_some() {
                continue;
            }
            match self.selector(i, p.dtype) {
                Ok(s) => {
                    if let Some(cycles) = s.predict_config(&p, &c) {
                        return Ok(s.cycles_to_us(cycles));
                    }
                    last = Some(format!(
                        "not a feasible config of family {} for {} on {}",
                        f.name(),
                        p.dtype,
                        s.gpu.name
                    ));
                }
                Err(why) => last = Some(why),
            }
        }
        Err(EngineError::Config {
            text: config.to_string(),
            why: last.unwrap_or_else(|| "no family of the set can run the shape".into()),
        })
    }

    /// `origami-select M N K --explain --format json`'s document for one shape.
    pub fn explain(&self, m: u64, n: u64, k: u64, dtype: &str) -> Result<String, EngineError> {
        let p = self.problem(m, n, k, dtype)?;
        let choice = self.choose(&p, Scope::All)?;
        let auto = auto_summary(&self.set, &choice, |i| {
            self.selector(i, p.dtype)
                .ok()
                .map(|s| s.constants.scoring())
        });
        let s = choice.selector;
        let report = SelectionReport::new(
            choice.selection.clone(),
            s,
            &self.setups[choice.chosen].resolved,
            Listing {
                top: crate::pick::DEFAULT_TOP,
                all: false,
            },
            true,
        )
        .in_set(Columns::of(&self.set), auto);
        let mut text = serde_json::to_string_pretty(&report_json(&report))
            .map_err(|e| PickError::Output(std::io::Error::other(e)))?;
        text.push('\n');
        Ok(text)
    }

    /// The picks of many shapes of one type, in order, each its own result (one bad shape
    /// does not fail the others). Not cached: a batch is its own cache. Large batches are
    /// split over the machine's cores (`std::thread::available_parallelism`), in chunks
    /// of at least [`BATCH_CHUNK`] shapes; the picks do not depend on the split.
    pub fn select_batch(
        &self,
        shapes: &[(u64, u64, u64)],
        dtype: &str,
    ) -> Vec<Result<Pick, EngineError>> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.select_batch_on(shapes, dtype, threads)
    }

    /// [`Engine::select_batch`] on at most `threads` threads.
    pub fn select_batch_on(
        &self,
        shapes: &[(u64, u64, u64)],
        dtype: &str,
        threads: usize,
    ) -> Vec<Result<Pick, EngineError>> {
        let one = |&(m, n, k): &(u64, u64, u64)| -> Result<Pick, EngineError> {
            let p = self.problem(m, n, k, dtype)?;
            let choice = self.choose(&p, Scope::Pick)?;
            Ok(self.pick_of(&p, choice.selector, &choice.selection.pick))
        };
        let threads = threads.clamp(1, shapes.len().div_ceil(BATCH_CHUNK).max(1));
        if threads == 1 {
            return shapes.iter().map(one).collect();
        }
        let chunk = shapes.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = shapes
                .chunks(chunk)
                .map(|part| {
                    let h = scope.spawn(move || part.iter().map(one).collect::<Vec<_>>());
                    (part.len(), h)
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|(len, h)| match h.join() {
                    Ok(v) => v,
                    // A panic is a bug; it must not take the caller down with it: every
                    // shape of the chunk reports it.
                    Err(_) => (0..len)
                        .map(|_| {
                            Err(EngineError::Config {
                                text: String::new(),
                                why: "internal error while selecting a batch".into(),
                            })
                        })
                        .collect(),
                })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(family: &str) -> Engine {
        Engine::new(&EngineRequest {
            gpu: Some("h100-sxm".into()),
            family: family.into(),
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn engines_are_shared_between_threads() {
        fn sync<T: Send + Sync>() {}
        sync::<Engine>();
    }

    #[test]
    fn a_pick_matches_the_selector_and_carries_its_launch() {
        let e = engine("triton-tma");
        let p = e.select(4096, 4096, 4096, "fp16").unwrap();
        let s = e.setups[0].selector(Dtype::Fp16).unwrap();
        let direct = s
            .select(&Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap(), false)
            .unwrap();
        assert_eq!(p.config, direct.pick.config);
        assert_eq!(p.predicted_us, direct.pick.latency_us);
        assert_eq!(p.family, "triton-tma");
        assert_eq!(p.num_programs, Some(132));
        assert_eq!(p.kwargs["NUM_PROGRAMS"], 132);
        assert_eq!(p.kwargs["BLOCK_SIZE_M"], p.config.block_m);
        assert!(p.grid <= 132);
        assert_eq!(p.config_text, p.config.to_string());
    }

    #[test]
    fn the_cache_answers_the_second_time() {
        let e = engine("triton");
        let a = e.select(1000, 2000, 3000, "fp16").unwrap();
        let b = e.select(1000, 2000, 3000, "fp16").unwrap();
        assert_eq!(a, b);
        let (hits, misses, len, _) = e.cache_stats();
        assert_eq!((hits, misses, len), (1, 1, 1));
        e.clear_cache();
        assert_eq!(e.cache_stats().2, 0);
    }

    #[test]
    fn batches_match_single_picks_and_keep_bad_rows_apart() {
        let e = engine("triton-auto");
        let shapes = [
            (4096, 4096, 4096),
            (0, 1, 1),
            (3000, 3000, 3000),
            (1, 6144, 4096),
        ];
        let batch = e.select_batch(&shapes, "bf16");
        assert_eq!(batch.len(), 4);
        assert!(batch[1].is_err());
        for (i, &(m, n, k)) in shapes.iter().enumerate() {
            if i == 1 {
                continue;
            }
            assert_eq!(
                batch[i].as_ref().unwrap(),
                &e.select(m, n, k, "bf16").unwrap()
            );
        }
    }

    #[test]
    fn a_batch_split_over_threads_equals_one_thread() {
        let e = engine("triton");
        let shapes: Vec<(u64, u64, u64)> = (1..=300u64)
            .map(|i| (i * 7, 64 * (1 + i % 40), 64 * (1 + (i * 13) % 50)))
            .collect();
        let one = e.select_batch_on(&shapes, "fp16", 1);
        let four = e.select_batch_on(&shapes, "fp16", 4);
        assert_eq!(one.len(), 300);
        assert_eq!(four.len(), 300);
        for (a, b) in one.iter().zip(&four) {
            assert_eq!(a.as_ref().unwrap(), b.as_ref().unwrap());
        }
    }

    #[test]
    fn rank_is_best_first_and_its_head_is_the_pick() {
        let e = engine("origami");
        let r = e.rank(2048, 2048, 2048, "fp16", 5).unwrap();
        assert_eq!(r.len(), 5);
        assert_eq!(
            r[0].config,
            e.select(2048, 2048, 2048, "fp16").unwrap().config
        );
        assert!(r.windows(2).all(|w| w[0].predicted_us <= w[1].predicted_us));
        assert!(matches!(
            e.rank(2048, 2048, 2048, "fp16", 0),
            Err(EngineError::Pick(PickError::NoTop))
        ));
    }

    #[test]
    fn score_prices_a_config_and_refuses_strangers() {
        let e = engine("triton");
        let pick = e.select(4096, 4096, 4096, "fp16").unwrap();
        let us = e
            .score(4096, 4096, 4096, "fp16", &pick.config_text)
            .unwrap();
        // The selector's own price of the config at its GROUP_SIZE_M (the pick's time is
        // phase 1's, at the default group).
        let s = e.setups[0].selector(Dtype::Fp16).unwrap();
        let p = Problem::new(4096, 4096, 4096, Dtype::Fp16).unwrap();
        let cycles = s.predict_config(&p, &pick.config).unwrap();
        assert_eq!(us, s.cycles_to_us(cycles));
        assert!(us > 0.0 && (us / pick.predicted_us - 1.0).abs() < 0.25);
        let bad = e.score(4096, 4096, 4096, "fp16", "7x7x7").unwrap_err();
        assert!(bad.to_string().starts_with("config '7x7x7': "), "{bad}");
        let stranger = e
            .score(4096, 4096, 4096, "fp16", "32x32x32,g1,w1,s9")
            .unwrap_err();
        assert!(
            stranger.to_string().contains("not a feasible config"),
            "{stranger}"
        );
    }

    #[test]
    fn bad_inputs_carry_the_cli_messages() {
        let msg = |r: Result<Engine, EngineError>| r.err().unwrap().to_string();
        assert!(msg(Engine::new(&EngineRequest {
            family: "nope".into(),
            ..Default::default()
        }))
        .starts_with("--family: unknown family 'nope'"));
        assert!(msg(Engine::new(&EngineRequest {
            gpu: Some("x999".into()),
            ..Default::default()
        }))
        .starts_with("--gpu: "));
        let e = engine("triton-tma");
        let err = e.select(4096, 4096, 4100, "fp16").unwrap_err();
        assert!(
            err.to_string().starts_with("--family triton-tma: "),
            "{err}"
        );
        assert_eq!(err.exit_code(), Exit::BadInput);
        assert!(e
            .select(4096, 4096, 4096, "int3")
            .unwrap_err()
            .to_string()
            .starts_with("--dtype: "));
        assert!(e
            .select(0, 4096, 4096, "fp16")
            .unwrap_err()
            .to_string()
            .starts_with("M"));
    }

    #[test]
    fn explain_is_the_cli_json_document() {
        let e = engine("triton-auto");
        let doc: serde_json::Value =
            serde_json::from_str(&e.explain(1, 6144, 4096, "fp16").unwrap()).unwrap();
        let pick = e.select(1, 6144, 4096, "fp16").unwrap();
        assert_eq!(doc["auto"]["chosen"], pick.family);
        assert_eq!(doc["pick"]["BLOCK_SIZE_M"], pick.config.block_m);
        assert_eq!(doc["problem"]["M"], 1);
        assert!(doc["phase2"].is_array() || doc["phase2"].is_object());
    }
}
