//! A learned correction of the throughput model's ranking (a tier of its own, beside the
//! analytical model): a gradient-boosted tree ensemble, fitted on a family's brute-force
//! sweep of the seed shape list only, predicts each launch's residual
//! log(measured / predicted) less its shape's median from the launch's and the shape's
//! features; the corrected time is the model's times exp(residual). The selection lets it
//! reorder only launches that the model itself places near its best.

pub mod ensemble;
pub mod features;
pub mod fit;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::hw::resolve::{Resolved, Tier};
use crate::hw::GpuDesc;
use crate::model::problem::{Config, Problem};

use ensemble::Ensemble;
use features::{launch_features, FEATURES};

/// The format of a correction file (`calibrations/fitted/*-correction.json`).
pub const FORMAT: &str = "origami-correction/1";

/// The embedded correction files: (path, text). A correction applies to its family on the
/// GPU it was fitted on (`FitRecord::gpu`, a preset: the resolved GPU's name maps to it,
/// `hw::presets::preset_for_device`), and only where every model constant comes from the
/// fitted constants file it was fitted on top of (`Correction::constants_file`): the
/// residual it learnt is that model's on that GPU. (The H100's, scored on the H200's sweeps
/// with `origami-bench fit-correction --score`, lowered the picks there: docs/correction.md.)
const EMBEDDED: [(&str, &str); 2] = [
    (
        "calibrations/fitted/h100-hopper-correction.json",
        include_str!("../../../../../calibrations/fitted/h100-hopper-correction.json"),
    ),
    (
        "calibrations/fitted/h100-triton-tma-correction.json",
        include_str!("../../../../../calibrations/fitted/h100-triton-tma-correction.json"),
    ),
];

/// The embedded files, parsed once per process (`None`: a file that does not parse, which
/// a test rules out).
fn embedded() -> &'static [Option<Arc<Correction>>] {
    static PARSED: std::sync::OnceLock<Vec<Option<Arc<Correction>>>> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| {
        EMBEDDED
            .iter()
            .map(|(path, text)| Correction::from_text(path, text).ok().map(Arc::new))
            .collect()
    })
}

/// The factor of a learnt residual `r` (log measured over predicted): exp(r) with r held
/// to [-20, 20], 1 where the ensemble gave no finite value.
fn residual_factor(r: f64) -> f64 {
    if r.is_finite() {
        r.clamp(-20.0, 20.0).exp()
    } else {
        1.0
    }
}

/// How a correction came to be, kept in its file for the record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct FitRecord {
    /// The sweep it was fitted on (a folder's `configs.csv`) and the sets fitted.
    pub sweep: String,
    pub fit_sets: Vec<String>,
    pub dtype: String,
    pub gpu: String,
    pub rows: usize,
    pub shapes: usize,
    pub trees: usize,
    pub learning_rate: f64,
    pub max_leaves: usize,
    pub min_samples_leaf: usize,
    /// The cross-validation folds that chose the size and the guard.
    #[serde(default)]
    pub folds: usize,
    /// The command that wrote the file.
    pub command: String,
}

/// The file as written (`origami-bench fit-correction --write`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CorrectionFile {
    pub format: String,
    pub family: String,
    pub architecture_major: u32,
    /// The fitted constants file (`hw::fitted`) whose model the residual is of.
    pub constants_file: String,
    /// The selection lets the correction reorder only launches the model predicts within
    /// this fraction of its best (`Correction::guard`).
    pub guard: f64,
    pub fit: FitRecord,
    pub ensemble: serde_json::Value,
}

/// A learned correction of one family's throughput model, ready to apply.
#[derive(Debug, Clone)]
pub struct Correction {
    pub path: String,
    pub family: String,
    /// The compute capability's major number of the GPUs it applies to.
    pub architecture_major: u32,
    pub constants_file: String,
    /// Only launches whose model prediction lies within `guard` (a fraction) of the best
    /// prediction may be picked: the correction reorders the model's near-best launches
    /// and never lifts one the model places far behind (its fit has seen the seed list
    /// only, and a tree ensemble extrapolates flat).
    pub guard: f64,
    pub fit: FitRecord,
    ensemble: Ensemble,
}

/// A correction file that cannot be used, in one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CorrectionError {
    #[error("{path}: not a correction file: {why}")]
    Parse { path: String, why: String },
    #[error("{path}: format '{found}', expected '{FORMAT}'")]
    Format { path: String, found: String },
    #[error("{path}: guard {guard} is not a finite fraction in [0, 10]")]
    Guard { path: String, guard: f64 },
    #[error("{path}: the ensemble's features ({found}) are not this version's ({expected})")]
    Features {
        path: String,
        found: String,
        expected: String,
    },
    #[error("{path}: {why}")]
    Ensemble { path: String, why: String },
}

impl Correction {
    /// Parse and check a correction file's text (`path` names it in errors).
    pub fn from_text(path: &str, text: &str) -> Result<Correction, CorrectionError> {
        let file: CorrectionFile =
            serde_json::from_str(text).map_err(|e| CorrectionError::Parse {
                path: path.into(),
                why: e.to_string(),
            })?;
        if file.format != FORMAT {
            return Err(CorrectionError::Format {
                path: path.into(),
                found: file.format,
            });
        }
        if !(file.guard.is_finite() && (0.0..=10.0).contains(&file.guard)) {
            return Err(CorrectionError::Guard {
                path: path.into(),
                guard: file.guard,
            });
        }
        let ensemble = Ensemble::from_json(&file.ensemble.to_string()).map_err(|e| {
            CorrectionError::Ensemble {
                path: path.into(),
                why: e.to_string(),
            }
        })?;
        if ensemble.features.iter().map(String::as_str).ne(FEATURES) {
            return Err(CorrectionError::Features {
                path: path.into(),
                found: ensemble.features.join(","),
                expected: FEATURES.join(","),
            });
        }
        Ok(Correction {
            path: path.into(),
            family: file.family,
            architecture_major: file.architecture_major,
            constants_file: file.constants_file,
            guard: file.guard,
            fit: file.fit,
            ensemble,
        })
    }

    /// A correction around a fitted ensemble (what `origami-bench fit-correction` scores
    /// before it writes the file).
    pub fn new(
        family: &str,
        architecture_major: u32,
        constants_file: &str,
        guard: f64,
        fit: FitRecord,
        ensemble: Ensemble,
    ) -> Correction {
        Correction {
            path: "(being fitted)".into(),
            family: family.into(),
            architecture_major,
            constants_file: constants_file.into(),
            guard,
            fit,
            ensemble,
        }
    }

    /// The file's text for this correction.
    pub fn file_text(&self) -> String {
        let ensemble: serde_json::Value =
            serde_json::from_str(&self.ensemble.to_json()).unwrap_or(serde_json::Value::Null);
        let file = CorrectionFile {
            format: FORMAT.into(),
            family: self.family.clone(),
            architecture_major: self.architecture_major,
            constants_file: self.constants_file.clone(),
            guard: self.guard,
            fit: self.fit.clone(),
            ensemble,
        };
        serde_json::to_string(&file).unwrap_or_default() + "\n"
    }

    /// The embedded correction for a family under a resolution, if one applies (see
    /// [`EMBEDDED`]).
    pub fn for_resolution(family: &str, res: &Resolved) -> Option<Arc<Correction>> {
        embedded().iter().flatten().find_map(|c| {
            if c.family != family
                || res.gpu.compute_capability[0] != c.architecture_major
                || crate::hw::presets::preset_for_device(&res.gpu.name) != Some(c.fit.gpu.as_str())
            {
                return None;
            }
            let all_from_file = !res.constants.is_empty()
                && res
                    .constants
                    .values()
                    .all(|(_, tier)| matches!(tier, Tier::Fitted(p) if *p == c.constants_file));
            all_from_file.then(|| Arc::clone(c))
        })
    }

    /// The factor the correction puts on the model's time of launch `c` on `p`, the model
    /// predicting `predicted_us`: exp of the learnt residual (a positive finite number).
    pub fn factor(&self, p: &Problem, c: &Config, gpu: &GpuDesc, predicted_us: f64) -> f64 {
        residual_factor(
            self.ensemble
                .predict(&launch_features(p, c, gpu, predicted_us)),
        )
    }

    /// [`Correction::factor`] of many launches of one problem at once (the same values,
    /// faster: the ensemble walks each tree for every launch in turn): `launches` holds
    /// each config and its model time in microseconds.
    pub fn factors(&self, p: &Problem, launches: &[(&Config, f64)], gpu: &GpuDesc) -> Vec<f64> {
        let rows: Vec<_> = launches
            .iter()
            .map(|(c, us)| launch_features(p, c, gpu, *us))
            .collect();
        self.ensemble
            .predict_rows(&rows)
            .into_iter()
            .map(residual_factor)
            .collect()
    }

    /// The least and greatest factor [`Correction::factor`] can return.
    pub fn factor_bounds(&self) -> (f64, f64) {
        let (lo, hi) = self.ensemble.bounds();
        (lo.clamp(-20.0, 20.0).exp(), hi.clamp(-20.0, 20.0).exp())
    }

    /// The number of trees.
    pub fn trees(&self) -> usize {
        self.ensemble.trees.len()
    }
}

#[cfg(test)]
mod tests {
    use super::ensemble::{Node, Tree};
    use super::*;
    use crate::dtype::Dtype;
    use crate::hw::presets::preset;
    use crate::model::{Scope, Selector};

    fn record() -> FitRecord {
        FitRecord {
            sweep: "test".into(),
            fit_sets: vec!["seed_shapes".into()],
            dtype: "fp16".into(),
            gpu: "h100-sxm".into(),
            rows: 0,
            shapes: 0,
            trees: 1,
            learning_rate: 1.0,
            max_leaves: 2,
            min_samples_leaf: 1,
            folds: 0,
            command: "test".into(),
        }
    }

    /// One tree: `feature` at most `threshold` -> `low`, else `high`.
    fn stump(feature: &str, threshold: f64, low: f64, high: f64) -> Ensemble {
        let f = FEATURES.iter().position(|n| *n == feature).unwrap() as u32;
        Ensemble {
            features: FEATURES.iter().map(|s| s.to_string()).collect(),
            base: 0.0,
            trees: vec![Tree {
                nodes: vec![
                    Node {
                        feature: f,
                        threshold,
                        left: 1,
                        right: 2,
                        value: 0.0,
                    },
                    Node::leaf(low),
                    Node::leaf(high),
                ],
            }],
        }
    }

    fn hopper_selector(correction: Option<Correction>) -> Selector<'static> {
        crate::setup::setup(&crate::setup::SetupRequest::on_preset("h100-sxm", "hopper"))
            .unwrap()
            .without_correction()
            .selector(Dtype::Fp16)
            .unwrap()
            .with_correction(correction.map(Arc::new))
    }

    /// The hopper selector alone and with a correction of exp(0.3) on every launch.
    fn plain_and_constant_corrected() -> (Selector<'static>, Selector<'static>) {
        let c = Correction::new(
            "hopper",
            9,
            "x",
            0.1,
            record(),
            stump("stages", 100.0, 0.3, 0.3),
        );
        (hopper_selector(None), hopper_selector(Some(c)))
    }

    const SHAPES: [(u64, u64, u64); 5] = [
        (17, 6144, 4096),
        (1024, 1024, 1024),
        (4100, 576, 7168),
        (333, 4096, 4096),
        (8192, 8192, 8192),
    ];

    #[test]
    fn a_config_outside_the_space_gets_its_plain_launchs_factor() {
        let (plain, corrected) = plain_and_constant_corrected();
        let p = Problem::new(8192, 8192, 8192, Dtype::Fp16).unwrap();
        for text in ["128x256x64,g16,w12,s4,sk", "128x256x64,g16,w12,s4,cluster"] {
            let cfg = crate::model::problem::parse_config(text).unwrap();
            let a = plain.predict_outside_space(&p, &cfg).unwrap();
            let b = corrected.predict_outside_space(&p, &cfg).unwrap();
            assert!((b / a - 0.3f64.exp()).abs() < 1e-9, "{text}: {b} vs {a}");
        }
    }

    #[test]
    fn a_constant_correction_scales_every_time_and_changes_no_order() {
        let (plain, corrected) = plain_and_constant_corrected();
        for (m, n, k) in SHAPES {
            let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
            let a = plain.select(&p, false).unwrap();
            let b = corrected.select(&p, false).unwrap();
            assert_eq!(a.pick.config, b.pick.config, "{m}x{n}x{k}");
            let (ra, rb) = (plain.ranked(&a, 50), corrected.ranked(&b, 50));
            for (x, y) in ra.iter().zip(&rb) {
                assert_eq!(x.config, y.config);
                assert!((y.latency_cycles / x.latency_cycles - 0.3f64.exp()).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn the_pick_moves_only_within_the_guard() {
        // a correction that makes every split-K launch look 100 times faster
        let fast_split = |guard| {
            Correction::new(
                "hopper",
                9,
                "x",
                guard,
                record(),
                stump("split_k", 1.5, 0.0, -4.6),
            )
        };
        let p = Problem::new(8192, 8192, 8192, Dtype::Fp16).unwrap();
        let plain = hopper_selector(None).select(&p, false).unwrap().pick.config;
        assert_eq!(plain.split_k, 1);
        // the model puts every split launch of 8192^3 far behind: a small guard keeps the
        // model's pick, an unbounded one takes a split launch
        let small = hopper_selector(Some(fast_split(0.02)));
        assert_eq!(small.select(&p, false).unwrap().pick.config, plain);
        let wide = hopper_selector(Some(fast_split(10.0)));
        assert!(wide.select(&p, false).unwrap().pick.config.split_k > 1);
    }

    #[test]
    fn a_pick_alone_is_the_first_of_the_full_corrected_ranking() {
        for guard in [0.0, 0.05, 0.3] {
            let c = Correction::new(
                "hopper",
                9,
                "x",
                guard,
                record(),
                stump("log2_block_n", 6.5, 0.08, -0.05),
            );
            let s = hopper_selector(Some(c));
            for (m, n, k) in SHAPES {
                let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
                let full = s.select_scoped(&p, Scope::All).unwrap();
                let quick = s.select_scoped(&p, Scope::Pick).unwrap();
                assert_eq!(
                    full.pick.config, quick.pick.config,
                    "{m}x{n}x{k} guard {guard}"
                );
                let first = s.ranked(&full, 1)[0].config;
                assert!(first.same_grid(&full.pick.config), "{m}x{n}x{k}: {first}");
            }
        }
    }

    #[test]
    fn with_the_embedded_correction_a_pick_alone_is_the_full_rankings_first() {
        let set = crate::setup::setup(&crate::setup::SetupRequest::on_preset("h100-sxm", "hopper"))
            .unwrap();
        for dtype in [Dtype::Fp16, Dtype::Bf16] {
            let s = set.selector(dtype).unwrap();
            assert!(s.correction().is_some());
            for (m, n, k) in SHAPES.into_iter().chain([
                (1, 1536, 7168),
                (128, 24576, 1536),
                (16384, 32768, 512),
                (3000, 3000, 3000),
                (64, 64, 64),
            ]) {
                let p = Problem::new(m, n, k, dtype).unwrap();
                let full = s.select_scoped(&p, Scope::All).unwrap();
                let quick = s.select_scoped(&p, Scope::Pick).unwrap();
                assert_eq!(full.pick.config, quick.pick.config, "{m}x{n}x{k} {dtype}");
                let first = s.ranked(&quick, 1)[0].config;
                assert!(first.same_grid(&full.pick.config), "{m}x{n}x{k}: {first}");
            }
        }
    }

    #[test]
    fn bad_files_are_refused_in_one_line() {
        let good = Correction::new(
            "hopper",
            9,
            "f.json",
            0.1,
            record(),
            stump("stages", 4.0, 0.1, -0.1),
        );
        let text = good.file_text();
        let back = Correction::from_text("c.json", &text).unwrap();
        assert_eq!(back.guard, 0.1);
        assert_eq!(back.constants_file, "f.json");
        for (bad, what) in [
            ("{", "not a correction file"),
            (&text.replace(FORMAT, "other/1"), "format"),
            (&text.replace("\"guard\":0.1", "\"guard\":-1.0"), "guard"),
            (&text.replace("\"stages\"", "\"stagez\""), "features"),
        ] {
            let e = Correction::from_text("c.json", bad)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("c.json") && e.contains(what) && !e.contains('\n'),
                "{e}"
            );
        }
    }

    #[test]
    fn the_factor_is_positive_and_finite_for_any_prediction() {
        let c = Correction::new(
            "hopper",
            9,
            "x",
            0.1,
            record(),
            stump("ln_predicted_us", 1.0, 50.0, -50.0),
        );
        let gpu = preset("h100-sxm").unwrap().gpu;
        let p = Problem::new(1, 1, 1, Dtype::Fp16).unwrap();
        let cfg = crate::model::problem::parse_config("64x16x64,w8,s4").unwrap();
        for us in [f64::NAN, 0.0, -3.0, 1e-9, 1e9, f64::INFINITY] {
            let f = c.factor(&p, &cfg, &gpu, us);
            assert!(f.is_finite() && f > 0.0, "{us}: {f}");
        }
        let (lo, hi) = c.factor_bounds();
        assert!(lo > 0.0 && hi.is_finite() && lo <= hi);
    }

    #[test]
    fn many_launches_at_once_get_each_launch_s_own_factor_bit_for_bit() {
        let gpu = preset("h100-sxm").unwrap().gpu;
        for (path, text) in EMBEDDED {
            let c = Correction::from_text(path, text).unwrap();
            for (m, n, k) in [
                (4096u64, 4096u64, 4096u64),
                (1, 6144, 4096),
                (333, 4096, 14336),
            ] {
                let p = Problem::new(m, n, k, Dtype::Fp16).unwrap();
                let cfgs: Vec<Config> = ["128x256x64,g8,w8,s3", "64x64x128,g1,w4,s5,flatten"]
                    .iter()
                    .map(|t| crate::model::problem::parse_config(t).unwrap())
                    .collect();
                let launches: Vec<(&Config, f64)> = cfgs.iter().zip([12.5, 480.0]).collect();
                let many = c.factors(&p, &launches, &gpu);
                let one: Vec<f64> = launches
                    .iter()
                    .map(|(cfg, us)| c.factor(&p, cfg, &gpu, *us))
                    .collect();
                assert_eq!(many, one, "{path} {m}x{n}x{k}");
            }
            assert!(c
                .factors(&Problem::new(8, 8, 8, Dtype::Fp16).unwrap(), &[], &gpu)
                .is_empty());
        }
    }

    #[test]
    fn the_embedded_file_parses_and_applies_only_over_its_fitted_constants() {
        assert!(embedded().iter().all(Option::is_some));
        let req = |gpu: &str, family: &str, no_fitted: bool| crate::setup::SetupRequest {
            no_fitted,
            ..crate::setup::SetupRequest::on_preset(gpu, family)
        };
        let on = |gpu, family, no_fitted| {
            crate::setup::setup(&req(gpu, family, no_fitted))
                .unwrap()
                .correction
                .is_some()
        };
        assert!(on("h100-sxm", "hopper", false));
        // fitted on the H100: not on the H200, whose picks it lowered
        assert!(!on("h200", "hopper", false));
        assert!(!on("h100-sxm", "hopper", true));
        // the triton-tma family's, fitted on the H100 too (since 2026-11-28)
        assert!(on("h100-sxm", "triton-tma", false));
        assert!(!on("h200", "triton-tma", false));
        assert!(!on("h100-sxm", "triton-tma", true));
        assert!(!on("h100-sxm", "origami", false));
        let c = Correction::for_resolution(
            "hopper",
            &crate::setup::setup(&req("h100-sxm", "hopper", false))
                .unwrap()
                .resolved,
        )
        .unwrap();
        assert_eq!(c.constants_file, "calibrations/fitted/h200-hopper.json");
        assert!(c.trees() > 0 && c.guard >= 0.0);
        // a constant from elsewhere (a user's override) leaves it out
        let mut res = crate::setup::setup(&req("h100-sxm", "hopper", false))
            .unwrap()
            .resolved;
        res.constants.insert(
            "tp_time_scale".into(),
            (1.0, Tier::File("user.json".into())),
        );
        assert!(Correction::for_resolution("hopper", &res).is_none());
    }
}
