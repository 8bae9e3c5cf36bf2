//! Three-tier parameter resolution (the NVIDIA port report, section 4.1), lowest to
//! highest: derived from the device's properties; the embedded calibration (preset) for
//! this GPU model; the file named by `TRITONBLAS_HW_PARAMS` (a full document, or a flat
//! override merged over the lower tiers). Every parameter remembers the tier it came from
//! (`--explain`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::derive::{derive_params, describe, DeviceProps};
use super::load::{load_file, HwError, HwFile};
use super::presets::{preset, preset_for_device, UnknownGpu, DEFAULT_PRESET};
use super::schema::{GpuDesc, ModelParams, ProvenanceKind, PARAM_NAMES};

/// Name of the environment variable holding the override file (as in the NVIDIA port
/// report).
pub const HW_PARAMS_ENV: &str = "TRITONBLAS_HW_PARAMS";

/// Where a parameter's value came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Tier {
    /// Tier 1: derived from the device's properties.
    Derived,
    /// Tier 2: an embedded preset, measured or estimated.
    Preset { name: String, kind: ProvenanceKind },
    /// Tier 3: the override file.
    File(PathBuf),
    /// Beneath the others, constants only: a fitted file embedded for the kernel family
    /// and architecture (`hw::fitted`).
    Fitted(String),
    /// Instead of the fitted tier, constants only: derived from the measurements of this
    /// calibration (`hw::calibrated`, `--calibration-only`).
    Calibrated(PathBuf),
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tier::Derived => write!(f, "derived (device properties)"),
            Tier::Preset { name, kind } => {
                let k = match kind {
                    ProvenanceKind::Measured => "calibrated",
                    ProvenanceKind::Estimated => "estimated",
                };
                write!(f, "preset {name} ({k})")
            }
            Tier::File(p) => write!(f, "file {} ({HW_PARAMS_ENV}, calibrated tier)", p.display()),
            Tier::Fitted(p) => write!(f, "fitted {p} (embedded, this architecture)"),
            Tier::Calibrated(p) => write!(
                f,
                "calibration-only, from the measurements of {} (nothing fitted on GEMM times)",
                p.display()
            ),
        }
    }
}

impl Tier {
    /// Short machine-readable label: derived, preset, file, fitted, calibrated.
    pub fn label(&self) -> &'static str {
        match self {
            Tier::Derived => "derived",
            Tier::Preset { .. } => "preset",
            Tier::File(_) => "file",
            Tier::Fitted(_) => "fitted",
            Tier::Calibrated(_) => "calibrated",
        }
    }
}

/// What the caller knows when resolving.
#[derive(Debug, Clone, Default)]
pub struct ResolveInput {
    /// Properties of the GPU found, if any.
    pub device: Option<DeviceProps>,
    /// `--gpu NAME`: use this preset whatever the device.
    pub gpu_name: Option<String>,
    /// `TRITONBLAS_HW_PARAMS`.
    pub override_file: Option<PathBuf>,
}

/// The resolved hardware: description, parameters with their tiers, constant overrides.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub gpu: GpuDesc,
    /// Where the GPU description came from (device, preset name, file).
    pub gpu_source: String,
    pub params: ModelParams,
    /// Tier of each parameter, keyed by schema name.
    pub tiers: BTreeMap<&'static str, Tier>,
    /// Overrides of the model's empirical constants, with their tier.
    pub constants: BTreeMap<String, (f64, Tier)>,
    /// Set when no GPU was found and no `--gpu` was given: the default preset was used.
    pub used_default_preset: bool,
    /// What the override file supplied, when one was given.
    pub file: Option<FileUse>,
}

/// What the override file (`TRITONBLAS_HW_PARAMS`) supplied.
#[derive(Debug, Clone, PartialEq)]
pub enum FileUse {
    /// A full document: the GPU description and every parameter (the device or preset
    /// beneath it supplies nothing but constants the file leaves out).
    Full { path: PathBuf, gpu: String },
    /// A flat override merged over the lower tiers: this many parameters and constants.
    Flat {
        path: PathBuf,
        params: usize,
        constants: usize,
    },
}

/// Resolution failure.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    UnknownGpu(#[from] UnknownGpu),
    #[error(transparent)]
    File(#[from] HwError),
}

impl crate::exit::ToExit for ResolveError {
    /// An unknown GPU name or a bad file: bad input either way.
    fn exit_code(&self) -> crate::exit::Exit {
        crate::exit::Exit::BadInput
    }
}

fn all_tiers(t: &Tier) -> BTreeMap<&'static str, Tier> {
    PARAM_NAMES.iter().map(|n| (*n, t.clone())).collect()
}

/// Resolve the three tiers.
pub fn resolve(input: &ResolveInput) -> Result<Resolved, ResolveError> {
    let mut r = base(input)?;
    if let Some(path) = &input.override_file {
        apply_file(&mut r, path)?;
    }
    Ok(r)
}

fn from_preset(name: &str, used_default: bool) -> Result<Resolved, ResolveError> {
    let doc = preset(name)?;
    let tier = Tier::Preset {
        name: name.to_ascii_lowercase(),
        kind: doc.provenance.kind,
    };
    Ok(Resolved {
        gpu: doc.gpu,
        gpu_source: format!("preset {}", name.to_ascii_lowercase()),
        params: doc.params,
        tiers: all_tiers(&tier),
        constants: doc
            .constants
            .into_iter()
            .map(|(k, v)| (k, (v, tier.clone())))
            .collect(),
        used_default_preset: used_default,
        file: None,
    })
}

fn base(input: &ResolveInput) -> Result<Resolved, ResolveError> {
    if let Some(name) = &input.gpu_name {
        return from_preset(name, false);
    }
    let Some(dev) = &input.device else {
        return from_preset(DEFAULT_PRESET, true);
    };
    let mut r = Resolved {
        gpu: describe(dev),
        gpu_source: format!("device ({})", dev.name),
        params: derive_params(dev),
        tiers: all_tiers(&Tier::Derived),
        constants: BTreeMap::new(),
        used_default_preset: false,
        file: None,
    };
    if let Some(name) = preset_for_device(&dev.name) {
        let p = from_preset(name, false)?;
        r.params = p.params;
        r.tiers = p.tiers;
        r.constants = p.constants;
    }
    Ok(r)
}

fn apply_file(r: &mut Resolved, path: &Path) -> Result<(), ResolveError> {
    let tier = Tier::File(path.to_path_buf());
    match load_file(path)? {
        HwFile::Full(doc) => {
            r.file = Some(FileUse::Full {
                path: path.to_path_buf(),
                gpu: doc.gpu.name.clone(),
            });
            r.gpu = doc.gpu;
            r.gpu_source = format!("file {}", path.display());
            r.params = doc.params;
            r.tiers = all_tiers(&tier);
            for (k, v) in doc.constants {
                r.constants.insert(k, (v, tier.clone()));
            }
        }
        HwFile::Override(ov) => {
            r.file = Some(FileUse::Flat {
                path: path.to_path_buf(),
                params: ov.params.len(),
                constants: ov.constants.len(),
            });
            for (k, v) in ov.params {
                let name = PARAM_NAMES
                    .iter()
                    .find(|n| **n == k)
                    .expect("override keys are validated");
                r.params.set(name, v);
                r.tiers.insert(name, tier.clone());
            }
            for (k, v) in ov.constants {
                r.constants.insert(k, (v, tier.clone()));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tmp(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("origami-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        p
    }

    #[test]
    fn no_device_uses_default_preset() {
        let r = resolve(&ResolveInput::default()).unwrap();
        assert!(r.used_default_preset);
        assert_eq!(r.tiers["l2_perf_ratio"].label(), "preset");
    }

    #[test]
    fn flat_override_merges_one_parameter() {
        let p = tmp("flat.json", r#"{"mma_latency": 40}"#);
        let r = resolve(&ResolveInput {
            gpu_name: Some("rtx4090".into()),
            override_file: Some(p),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(r.params.mma_latency, 40.0);
        assert_eq!(r.params.l2_perf_ratio, 1896.0);
        assert_eq!(r.tiers["mma_latency"].label(), "file");
        assert_eq!(r.tiers["l2_perf_ratio"].label(), "preset");
        assert!(matches!(
            r.file,
            Some(FileUse::Flat {
                params: 1,
                constants: 0,
                ..
            })
        ));
    }

    #[test]
    fn a_full_document_supplies_the_gpu_whatever_the_preset() {
        let p = tmp(
            "full.json",
            include_str!("../../../../calibrations/h200.json"),
        );
        let r = resolve(&ResolveInput {
            gpu_name: Some("a100".into()),
            override_file: Some(p.clone()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(r.gpu.name, "NVIDIA H200");
        assert_eq!(r.tiers["l2_perf_ratio"], Tier::File(p.clone()));
        assert_eq!(
            r.file,
            Some(FileUse::Full {
                path: p,
                gpu: "NVIDIA H200".into()
            })
        );
        assert!(resolve(&ResolveInput::default()).unwrap().file.is_none());
    }

    #[test]
    fn device_without_preset_is_derived() {
        let dev = DeviceProps {
            name: "Tesla T4".into(),
            compute_capability: [7, 5],
            sm_count: 40,
            l2_bytes: 4 << 20,
            smem_per_block_optin_bytes: 65536,
            registers_per_sm: 65536,
            sm_clock_mhz: 1590.0,
            mem_clock_mhz: 5001.0,
            mem_bus_width_bits: 256,
        };
        let r = resolve(&ResolveInput {
            device: Some(dev),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(r.tiers["dram_perf_ratio"], Tier::Derived);
        assert_eq!(r.gpu.sm_count, 40);
    }

    #[test]
    fn device_with_preset_uses_preset_params_and_device_description() {
        let dev = DeviceProps {
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: [9, 0],
            sm_count: 132,
            l2_bytes: 52_428_800,
            smem_per_block_optin_bytes: 232_448,
            registers_per_sm: 65536,
            sm_clock_mhz: 1980.0,
            mem_clock_mhz: 2619.0,
            mem_bus_width_bits: 5120,
        };
        let r = resolve(&ResolveInput {
            device: Some(dev),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(r.tiers["l2_perf_ratio"].label(), "preset");
        assert!(r.gpu_source.starts_with("device"));
    }

    #[test]
    fn missing_file_is_an_error_naming_it() {
        let e = resolve(&ResolveInput {
            override_file: Some("/nonexistent/hw.json".into()),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("/nonexistent/hw.json"), "{e}");
    }
}
