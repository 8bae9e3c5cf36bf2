//! From what a caller asks (a GPU found or a preset name, the `TRITONBLAS_HW_PARAMS` file,
//! a kernel family, a model variant, with or without the fitted tier) to a ready
//! [`Selector`] and the provenance of every number in it. Every binary sets up the model
//! through here, and so will the Python and C bindings: the order of the tiers (derived,
//! preset, file; the family's fitted constants beneath them) is decided in this one place.

use std::path::{Path, PathBuf};

use crate::dtype::Dtype;
use crate::exit::{Exit, ToExit};
use crate::hw::calibrated::calibrated_constants;
use crate::hw::fitted::apply_fitted;
use crate::hw::load::{load_file, HwFile};
use crate::hw::presets::{preset_names, DEFAULT_PRESET};
use crate::hw::resolve::ResolveError;
use crate::hw::{resolve, DeviceProps, FileUse, ResolveInput, Resolved, Tier, HW_PARAMS_ENV};
use crate::model::family::{family, KernelFamily, FAMILY_NAMES};
use crate::model::select::NoFeasibleConfig;
use crate::model::{ModelConstants, Selector, Variant};

/// What the caller asks for.
#[derive(Debug, Clone)]
pub struct SetupRequest {
    /// Properties of the GPU in hand (tier 1 and the preset matching it), if any.
    pub device: Option<DeviceProps>,
    /// A preset by name (`--gpu NAME`): used whatever the device.
    pub gpu_name: Option<String>,
    /// The override file (`TRITONBLAS_HW_PARAMS`), full or flat.
    pub override_file: Option<PathBuf>,
    /// Kernel family by name (`triton`, `origami`, `seed`: the NVIDIA port report's config
    /// space).
    pub family: String,
    /// Model variant by name (`origami`, `seed`: the NVIDIA port report's model as published).
    pub model: String,
    /// Leave out the constants fitted for the family on this architecture.
    pub no_fitted: bool,
    /// The calibration-only tier (`hw::calibrated`): the throughput model's constants
    /// from the measurements of the full document in the override file, and no fitted
    /// constant.
    pub calibration_only: bool,
}

impl SetupRequest {
    /// A family on a GPU preset with the fitted tier, the `origami` model and no override
    /// file: what `origami-select --family FAMILY --gpu GPU` sets up with no
    /// `TRITONBLAS_HW_PARAMS`.
    pub fn on_preset(gpu: &str, family: &str) -> SetupRequest {
        SetupRequest {
            device: None,
            gpu_name: Some(gpu.to_string()),
            override_file: None,
            family: family.to_string(),
            model: "origami".to_string(),
            no_fitted: false,
            calibration_only: false,
        }
    }

    /// A request with the override file taken from `TRITONBLAS_HW_PARAMS` (unset or empty:
    /// none).
    pub fn from_env(
        device: Option<DeviceProps>,
        gpu_name: Option<String>,
        family: &str,
        model: &str,
        no_fitted: bool,
    ) -> SetupRequest {
        SetupRequest {
            device,
            gpu_name,
            override_file: override_file_from_env(),
            family: family.to_string(),
            model: model.to_string(),
            no_fitted,
            calibration_only: false,
        }
    }
}

/// The file named by `TRITONBLAS_HW_PARAMS`, when set and not empty.
pub fn override_file_from_env() -> Option<PathBuf> {
    std::env::var_os(HW_PARAMS_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The model, set up: hardware with the tier of every value, the constants in force, the
/// family and the variant.
pub struct Setup {
    pub resolved: Resolved,
    pub constants: ModelConstants,
    pub family: &'static dyn KernelFamily,
    pub variant: Variant,
    /// The learned correction of the family's model (`model::correction`), where one was
    /// fitted on the constants in force; its selectors apply it.
    pub correction: Option<std::sync::Arc<crate::model::correction::Correction>>,
}

/// Why a setup failed; every case is bad input.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("--family: unknown family '{0}' (known: {known})", known = FAMILY_NAMES.join(", "))]
    UnknownFamily(String),
    #[error("--model: unknown model '{0}' (known: origami, seed)")]
    UnknownModel(String),
    #[error("{HW_PARAMS_ENV}: {0}")]
    File(crate::hw::load::HwError),
    #[error("--gpu: {0}")]
    Gpu(crate::hw::presets::UnknownGpu),
    #[error("hardware parameters: {0}")]
    Constants(#[from] crate::constants::ConstantError),
    #[error("--calibration-only: {0}")]
    CalibrationOnly(String),
    #[error("--family {family}: {source}")]
    NoFeasibleConfig {
        family: &'static str,
        source: NoFeasibleConfig,
    },
}

impl ToExit for SetupError {
    fn exit_code(&self) -> Exit {
        Exit::BadInput
    }
}

impl From<ResolveError> for SetupError {
    fn from(e: ResolveError) -> Self {
        match e {
            ResolveError::File(e) => SetupError::File(e),
            ResolveError::UnknownGpu(e) => SetupError::Gpu(e),
        }
    }
}

/// A kernel family by name.
pub fn family_named(name: &str) -> Result<&'static dyn KernelFamily, SetupError> {
    family(name).ok_or_else(|| SetupError::UnknownFamily(name.to_string()))
}

/// A model variant by name.
pub fn variant_named(name: &str) -> Result<Variant, SetupError> {
    Variant::parse(name).ok_or_else(|| SetupError::UnknownModel(name.to_string()))
}

/// Resolve the hardware tiers, add the family's fitted tier beneath them (unless left
/// out), and validate the constants.
pub fn setup(req: &SetupRequest) -> Result<Setup, SetupError> {
    setup_announcing(req, |_| {})
}

/// [`setup`], handing `notice` the line that says which hardware is used (see
/// [`hardware_notice`]) as soon as the hardware is resolved and the fitted tier added
/// beneath it (before the calibration-only tier, which can fail): before the constants
/// are checked, so that a tool shows it even when they then fail.
pub fn setup_announcing(
    req: &SetupRequest,
    notice: impl FnOnce(&str),
) -> Result<Setup, SetupError> {
    let family = family_named(&req.family)?;
    let variant = variant_named(&req.model)?;
    let mut resolved = resolve(&ResolveInput {
        device: req.device.clone(),
        gpu_name: req.gpu_name.clone(),
        override_file: req.override_file.clone(),
    })?;
    if !req.calibration_only && !req.no_fitted {
        apply_fitted(&mut resolved, family.name());
    }
    // with the fitted tier in place, so that the line can say what it fills in
    if let Some(text) = hardware_notice(req, &resolved) {
        notice(&text);
    }
    if req.calibration_only {
        apply_calibrated(&mut resolved, req.override_file.as_deref())?;
    }
    let constants = constants_of(&resolved)?;
    let correction = crate::model::correction::Correction::for_resolution(family.name(), &resolved);
    Ok(Setup {
        resolved,
        constants,
        family,
        variant,
        correction,
    })
}

/// Add the calibration-only tier's constants (`hw::calibrated`) from the measured full
/// document in the override file, beneath any constant the file itself sets.
fn apply_calibrated(resolved: &mut Resolved, file: Option<&Path>) -> Result<(), SetupError> {
    let path = file.ok_or_else(|| {
        SetupError::CalibrationOnly(format!(
            "needs {HW_PARAMS_ENV} naming a measured calibration (origami-calibrate --output FILE)"
        ))
    })?;
    let doc = match load_file(path).map_err(SetupError::File)? {
        HwFile::Full(doc) => doc,
        HwFile::Override(_) => {
            return Err(SetupError::CalibrationOnly(format!(
                "{} is a flat override; the tier needs a full measured document",
                path.display()
            )))
        }
    };
    let derived = calibrated_constants(&doc)
        .map_err(|e| SetupError::CalibrationOnly(format!("{}: {e}", path.display())))?;
    for d in derived {
        resolved
            .constants
            .entry(d.name.to_string())
            .or_insert((d.value, Tier::Calibrated(path.to_path_buf())));
    }
    Ok(())
}

/// The line a tool prints on stderr to say which hardware it uses, when that is not
/// simply the GPU found or the preset named:
///
/// - no GPU found and no preset named: the default preset, and how to choose another;
/// - a full document in `TRITONBLAS_HW_PARAMS`: that file supplies the GPU and every
///   parameter (the highest tier), so `--gpu NAME` or the GPU found is ignored, and the
///   line says so;
/// - a flat override: the preset or GPU beneath it, and how many values the file changes;
///   once the family's fitted tier is added beneath the file, also how many constants the
///   file leaves to that fitted file, which then come from it and not from the defaults
///   (`--no-fitted` leaves them out).
pub fn hardware_notice(req: &SetupRequest, res: &Resolved) -> Option<String> {
    let file_note = |path: &std::path::Path| format!("{} ({HW_PARAMS_ENV})", path.display());
    match &res.file {
        Some(FileUse::Full { path, gpu }) => Some(match (&req.gpu_name, &req.device) {
            (Some(name), _) => format!(
                "hardware from the full document {} ('{gpu}'); --gpu {name} is ignored",
                file_note(path)
            ),
            (None, Some(dev)) => format!(
                "hardware from the full document {} ('{gpu}'); the GPU found ('{}') is ignored",
                file_note(path),
                dev.name
            ),
            (None, None) => format!(
                "hardware from the full document {} ('{gpu}')",
                file_note(path)
            ),
        }),
        Some(FileUse::Flat {
            path,
            params,
            constants,
        }) => {
            let values = flat_values(*params, *constants);
            let from = file_note(path);
            let line = if res.used_default_preset {
                format!(
                    "no GPU found; using the embedded preset '{DEFAULT_PRESET}' with {values} from {from} (choose the preset with --gpu NAME: {})",
                    preset_names()
                )
            } else if let Some(name) = &req.gpu_name {
                format!(
                    "preset '{}' with {values} from {from}",
                    name.trim().to_ascii_lowercase()
                )
            } else if let Some(dev) = &req.device {
                format!("the GPU found ('{}') with {values} from {from}", dev.name)
            } else {
                format!("{} with {values} from {from}", res.gpu_source)
            };
            Some(line + &fitted_beneath(res))
        }
        None => res.used_default_preset.then(|| {
            format!(
                "no GPU found; using the embedded preset '{DEFAULT_PRESET}' (choose with --gpu NAME: {})",
                preset_names()
            )
        }),
    }
}

/// "; N constants from the embedded fitted FILE beneath it (--no-fitted leaves them out)"
/// ("1 constant ... leaves it out")
/// for the constants of a resolution that came from the fitted tier, or "" for none.
fn fitted_beneath(res: &Resolved) -> String {
    let mut files: Vec<&str> = Vec::new();
    let mut n = 0usize;
    for (_, tier) in res.constants.values() {
        if let Tier::Fitted(path) = tier {
            n += 1;
            if !files.contains(&path.as_str()) {
                files.push(path);
            }
        }
    }
    if n == 0 {
        return String::new();
    }
    format!(
        "; {} from the embedded fitted {} beneath it (--no-fitted leaves {} out)",
        flat_values(0, n),
        files.join(", "),
        if n == 1 { "it" } else { "them" }
    )
}

/// "1 parameter and 3 constants", "2 parameters", "1 constant".
fn flat_values(params: usize, constants: usize) -> String {
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    match (params, constants) {
        (p, 0) => count(p, "parameter"),
        (0, c) => count(c, "constant"),
        (p, c) => format!("{} and {}", count(p, "parameter"), count(c, "constant")),
    }
}

/// The model constants of a resolution: the defaults with every tier's overrides applied.
pub fn constants_of(res: &Resolved) -> Result<ModelConstants, crate::constants::ConstantError> {
    ModelConstants::with_overrides(res.constants.iter().map(|(k, (v, _))| (k.as_str(), *v)))
}

impl Setup {
    /// This setup without the learned correction (the model alone: `--no-correction`).
    pub fn without_correction(mut self) -> Self {
        self.correction = None;
        self
    }

    /// The selector of this setup's family for one input type.
    pub fn selector(&self, dtype: Dtype) -> Result<Selector<'static>, SetupError> {
        self.selector_over(dtype, self.family.configs())
    }

    /// [`Setup::selector`] over these configs of the family in place of its space (each
    /// priced and judged feasible as the space's are).
    pub fn selector_over(
        &self,
        dtype: Dtype,
        configs: Vec<crate::model::Config>,
    ) -> Result<Selector<'static>, SetupError> {
        Selector::over(
            self.family
                .candidates_of(configs, dtype, &self.resolved.gpu),
            self.family,
            &self.resolved.gpu,
            &self.resolved.params,
            &self.constants,
            self.variant,
            dtype,
        )
        .map(|s| {
            s.with_time_map(crate::hw::time_map::TimeMap::for_resolution(
                self.family.name(),
                &self.resolved,
            ))
            .with_correction(self.correction.clone())
        })
        .map_err(|source| SetupError::NoFeasibleConfig {
            family: self.family.name(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(gpu: &str, family: &str, no_fitted: bool) -> SetupRequest {
        SetupRequest {
            no_fitted,
            ..SetupRequest::on_preset(gpu, family)
        }
    }

    #[test]
    fn the_calibration_only_tier_comes_from_a_measured_document() {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let with = |file: Option<&str>| SetupRequest {
            override_file: file.map(|f| repo.join(f)),
            calibration_only: true,
            ..req("h100-sxm", "triton", false)
        };
        let s = setup(&with(Some("calibrations/h200.json"))).unwrap();
        // no fitted constant; every tp_* the tier sets comes from the calibration
        assert!(s
            .resolved
            .constants
            .values()
            .all(|(_, t)| t.label() != "fitted"));
        let (v, t) = &s.resolved.constants["tp_time_scale"];
        assert_eq!((*v, t.label()), (1.0, "calibrated"));
        assert_eq!(s.constants.scoring(), crate::model::Scoring::Throughput);
        let why = |r: Result<Setup, SetupError>| r.err().unwrap().to_string();
        assert!(why(setup(&with(None))).contains("needs TRITONBLAS_HW_PARAMS"));
        // an estimated document has no measurements
        assert!(
            why(setup(&with(Some("calibrations/a100.json")))).contains("needs a measured document")
        );
        let flat = repo.join("calibrations/fitted/h200-hopper.json");
        let e = why(setup(&SetupRequest {
            override_file: Some(flat),
            ..with(None)
        }));
        assert!(e.contains("flat override"), "{e}");
    }

    #[test]
    fn fitted_tier_applies_on_hopper_unless_left_out() {
        let s = setup(&req("h100-sxm", "triton", false)).unwrap();
        assert_eq!(s.constants.scoring(), crate::model::Scoring::Throughput);
        let s = setup(&req("h100-sxm", "triton", true)).unwrap();
        assert_eq!(s.constants, ModelConstants::default());
        let s = setup(&req("a100", "triton", false)).unwrap();
        assert_eq!(s.constants, ModelConstants::default());
    }

    #[test]
    fn bad_names_are_bad_input_with_the_flag_named() {
        let e = setup(&req("h100-sxm", "nope", false)).err().unwrap();
        assert_eq!(e.exit_code(), Exit::BadInput);
        assert!(e.to_string().starts_with("--family: unknown family 'nope'"));
        let e = setup(&req("nope", "triton", false)).err().unwrap();
        assert!(e.to_string().starts_with("--gpu: "), "{e}");
        let mut r = req("h200", "triton", false);
        r.model = "x".into();
        let e = setup(&r).err().unwrap();
        assert_eq!(
            e.to_string(),
            "--model: unknown model 'x' (known: origami, seed)"
        );
    }

    fn file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("origami-setup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        file
    }

    /// The notice `setup_announcing` gives for a request, and the setup's result.
    fn notice_of(r: &SetupRequest) -> (Option<String>, Result<Setup, SetupError>) {
        let mut notice = None;
        let s = setup_announcing(r, |n| notice = Some(n.to_string()));
        (notice, s)
    }

    #[test]
    fn a_bad_constant_in_the_file_names_the_file_and_the_field() {
        let f = file("badconst.json", r#"{"constants": {"nope": 1}}"#);
        let mut r = req("h200", "triton", false);
        r.gpu_name = None;
        r.override_file = Some(f.clone());
        let (notice, s) = notice_of(&r);
        let e = s.err().unwrap();
        assert!(matches!(e, SetupError::File(_)), "{e}");
        assert!(
            e.to_string().starts_with(&format!(
                "{HW_PARAMS_ENV}: {}: field 'constants.nope': unknown constant",
                f.display()
            )),
            "{e}"
        );
        assert!(
            notice.is_none(),
            "a file that does not load supplies nothing"
        );
    }

    #[test]
    fn the_default_preset_is_announced() {
        let mut r = req("h200", "origami", false);
        r.gpu_name = None;
        let (notice, s) = notice_of(&r);
        let notice = notice.unwrap();
        assert!(
            notice.starts_with(
                "no GPU found; using the embedded preset 'h100-sxm' (choose with --gpu NAME: "
            ),
            "{notice}"
        );
        assert!(s.unwrap().selector(Dtype::Fp16).is_ok());
        // A named preset needs no notice.
        assert!(notice_of(&req("a100", "origami", false)).0.is_none());
    }

    #[test]
    fn a_full_document_says_it_supplies_the_hardware_and_what_it_overrides() {
        let full = file("full.json", include_str!("../../../calibrations/h200.json"));
        let shown = full.display().to_string();
        let mut r = req("a100", "triton", false);
        r.override_file = Some(full);
        let (notice, s) = notice_of(&r);
        assert_eq!(
            notice.unwrap(),
            format!("hardware from the full document {shown} ({HW_PARAMS_ENV}) ('NVIDIA H200'); --gpu a100 is ignored")
        );
        assert_eq!(s.unwrap().resolved.gpu.name, "NVIDIA H200");
        r.gpu_name = None;
        assert_eq!(
            notice_of(&r).0.unwrap(),
            format!("hardware from the full document {shown} ({HW_PARAMS_ENV}) ('NVIDIA H200')")
        );
        r.device = Some(DeviceProps {
            name: "Tesla T4".into(),
            compute_capability: [7, 5],
            sm_count: 40,
            l2_bytes: 4 << 20,
            smem_per_block_optin_bytes: 65536,
            registers_per_sm: 65536,
            sm_clock_mhz: 1590.0,
            mem_clock_mhz: 5001.0,
            mem_bus_width_bits: 256,
        });
        assert!(notice_of(&r)
            .0
            .unwrap()
            .ends_with("; the GPU found ('Tesla T4') is ignored"));
    }

    #[test]
    fn a_flat_override_says_what_it_changes_on_which_preset() {
        let flat = file(
            "flat.json",
            r#"{"mma_latency": 40, "constants": {"tie_band": 0.02, "occupancy": 2}}"#,
        );
        let shown = flat.display().to_string();
        let mut r = req("a100", "triton", false);
        r.override_file = Some(flat);
        assert_eq!(
            notice_of(&r).0.unwrap(),
            format!(
                "preset 'a100' with 1 parameter and 2 constants from {shown} ({HW_PARAMS_ENV})"
            )
        );
        r.gpu_name = None;
        let notice = notice_of(&r).0.unwrap();
        assert!(
            notice.starts_with(&format!("no GPU found; using the embedded preset 'h100-sxm' with 1 parameter and 2 constants from {shown} ({HW_PARAMS_ENV}) (choose the preset with --gpu NAME: ")),
            "{notice}"
        );
        assert_eq!(flat_values(2, 0), "2 parameters");
        assert_eq!(flat_values(0, 1), "1 constant");
    }

    #[test]
    fn a_flat_override_says_how_many_constants_the_fitted_file_fills_in() {
        // a refit's file that named only the constants it moved: the family's embedded
        // fitted constants fill in the rest, and the notice says so
        let flat = file("partial.json", r#"{"constants": {"tp_time_scale": 0.3}}"#);
        let mut r = req("h100-sxm", "triton-tma", false);
        r.override_file = Some(flat.clone());
        let s = setup(&r).unwrap();
        let notice = hardware_notice(&r, &s.resolved).unwrap();
        let fitted = s
            .resolved
            .constants
            .values()
            .filter(|(_, t)| matches!(t, Tier::Fitted(_)))
            .count();
        assert!(fitted > 1, "{fitted}");
        assert_eq!(
            notice,
            format!(
                "preset 'h100-sxm' with 1 constant from {} ({HW_PARAMS_ENV}); {fitted} constants from the embedded fitted calibrations/fitted/h100-triton-tma.json beneath it (--no-fitted leaves them out)",
                flat.display()
            )
        );
        // the tools' line (setup_announcing) is the same; without the fitted tier, no count
        assert_eq!(notice_of(&r).0.unwrap(), notice);
        r.no_fitted = true;
        let s = setup(&r).unwrap();
        assert!(!hardware_notice(&r, &s.resolved).unwrap().contains("fitted"));
    }
}
