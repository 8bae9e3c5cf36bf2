//! From what a caller asks (a GPU found or a preset name, the `TRITONBLAS_HW_PARAMS` file,
//! a kernel family, a model variant, with or without the fitted tier) to a ready
//! [`Selector`] and the provenance of every number in it. Every binary sets up the model
//! through here, and so will the Python and C bindings: the order of the tiers (derived,
//! preset, file; the family's fitted constants beneath them) is decided in this one place.

use std::path::PathBuf;

use crate::dtype::Dtype;
use crate::exit::{Exit, ToExit};
use crate::hw::fitted::apply_fitted;
use crate::hw::presets::{preset_names, DEFAULT_PRESET};
use crate::hw::resolve::ResolveError;
use crate::hw::{resolve, DeviceProps, ResolveInput, Resolved, HW_PARAMS_ENV};
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
}

impl SetupRequest {
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
    Constants(#[from] crate::model::constants::ConstantError),
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

/// [`setup`], handing `notice` the default-preset notice (when no GPU was found and no
/// preset named) as soon as the hardware is resolved: before the constants are checked,
/// so that a tool shows it even when they then fail.
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
    if let Some(text) = default_preset_notice(&resolved) {
        notice(&text);
    }
    if !req.no_fitted {
        apply_fitted(&mut resolved, family.name());
    }
    let constants = constants_of(&resolved)?;
    Ok(Setup {
        resolved,
        constants,
        family,
        variant,
    })
}

/// The model constants of a resolution: the defaults with every tier's overrides applied.
pub fn constants_of(
    res: &Resolved,
) -> Result<ModelConstants, crate::model::constants::ConstantError> {
    ModelConstants::with_overrides(res.constants.iter().map(|(k, (v, _))| (k.as_str(), *v)))
}

impl Setup {
    /// The selector of this setup's family for one input type.
    pub fn selector(&self, dtype: Dtype) -> Result<Selector<'static>, SetupError> {
        Selector::new(
            self.family,
            &self.resolved.gpu,
            &self.resolved.params,
            &self.constants,
            self.variant,
            dtype,
        )
        .map_err(|source| SetupError::NoFeasibleConfig {
            family: self.family.name(),
            source,
        })
    }

    /// The notice a tool prints on stderr when no GPU was found and no preset was named.
    pub fn default_preset_notice(&self) -> Option<String> {
        default_preset_notice(&self.resolved)
    }
}

fn default_preset_notice(res: &Resolved) -> Option<String> {
    res.used_default_preset.then(|| {
        format!(
            "no GPU found; using the embedded preset '{DEFAULT_PRESET}' (choose with --gpu NAME: {})",
            preset_names()
        )
    })
}

/// Properties of GPU 0 when a driver and a GPU are present; `None` otherwise, or when
/// `ORIGAMI_NO_GPU` is set (tests, and users who want the preset on a GPU machine).
pub fn detect_device() -> Option<DeviceProps> {
    if std::env::var_os("ORIGAMI_NO_GPU").is_some() {
        return None;
    }
    use crate::gpu::probe;
    if !probe::is_present(probe::Library::Driver) {
        return None;
    }
    match probe::device_count() {
        Ok(n) if n > 0 => probe::device_props(0).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(gpu: &str, family: &str, no_fitted: bool) -> SetupRequest {
        SetupRequest {
            device: None,
            gpu_name: Some(gpu.to_string()),
            override_file: None,
            family: family.to_string(),
            model: "origami".to_string(),
            no_fitted,
        }
    }

    #[test]
    fn fitted_tier_applies_on_hopper_unless_left_out() {
        let s = setup(&req("h100-sxm", "triton", false)).unwrap();
        assert_eq!(s.constants.scoring(), crate::model::Scoring::Throughput);
        let s = setup(&req("h100-sxm", "triton", true)).unwrap();
        assert_eq!(s.constants, ModelConstants::default());
        let s = setup(&req("a100", "triton", false)).unwrap();
        assert_eq!(s.constants, ModelConstants::default());
        assert!(s.default_preset_notice().is_none());
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

    #[test]
    fn a_bad_constant_in_the_file_names_the_file_and_the_field() {
        let dir = std::env::temp_dir().join(format!("origami-setup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("badconst.json");
        std::fs::write(&file, r#"{"constants": {"nope": 1}}"#).unwrap();
        let mut r = req("h200", "triton", false);
        r.gpu_name = None;
        r.override_file = Some(file.clone());
        let e = setup(&r).err().unwrap();
        assert!(matches!(e, SetupError::File(_)), "{e}");
        assert!(
            e.to_string().starts_with(&format!(
                "{HW_PARAMS_ENV}: {}: field 'constants.nope': unknown constant",
                file.display()
            )),
            "{e}"
        );
    }

    #[test]
    fn the_default_preset_is_announced() {
        let mut r = req("h200", "origami", false);
        r.gpu_name = None;
        let s = setup(&r).unwrap();
        let notice = s.default_preset_notice().unwrap();
        assert!(notice.contains(DEFAULT_PRESET), "{notice}");
        assert!(s.selector(Dtype::Fp16).is_ok());
    }
}
