//! The energy costs of a GPU (issue 15, section 3): the static power of an awake GPU and
//! the dynamic energy per tensor-core FLOP and per byte read from shared memory, L2 and
//! DRAM, each measured by `origami-calibrate --only energy` (csrc/energy_load.cu,
//! docs/calibrate.md "Energy costs"), with the enforced power limit read from NVML. They
//! come from a calibration document's measurements: the one given with `--energy-costs`,
//! else the override file's, else the one committed for the GPU's preset
//! (`calibrations/energy/<preset>.json`). Nothing here is fitted on GEMM energies.

use super::schema::HwDoc;

/// Measured energy costs of one GPU.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EnergyCosts {
    /// Average power of the GPU awake with nothing moved (a spinning warp per SM), W.
    pub static_w: f64,
    /// Dynamic energy per tensor-core FLOP (mma.sync f16, fp32 accumulate), pJ.
    pub pj_per_flop: f64,
    /// Per byte read from shared memory, pJ.
    pub pj_per_smem_byte: f64,
    /// Per byte from L2 to an SM, pJ.
    pub pj_per_l2_byte: f64,
    /// Per byte from DRAM beyond its L2 crossing, pJ.
    pub pj_per_dram_byte: f64,
    /// Per wgmma FLOP, its shared-memory operand reads included (Hopper), pJ.
    pub pj_per_flop_wgmma: Option<f64>,
    /// Per byte a TMA box copy moves from L2 into shared memory (Hopper), pJ.
    pub pj_per_tma_l2_byte: Option<f64>,
    /// Per byte of a TMA copy from DRAM beyond its L2 crossing (Hopper), pJ.
    pub pj_per_tma_dram_byte: Option<f64>,
    /// The enforced power limit when measured (NVML), W.
    pub power_limit_w: f64,
    /// Where the costs come from (a file, or the embedded document of a preset).
    pub source: String,
}

/// The measurement names, in the order of [`EnergyCosts`]'s fields.
pub const COST_NAMES: [&str; 6] = [
    "energy_static_w",
    "energy_mma_pj_per_flop",
    "energy_smem_pj_per_byte",
    "energy_l2_pj_per_byte",
    "energy_dram_pj_per_byte",
    "power_limit_w",
];

/// The costs of Hopper's wgmma and TMA path, when measured (compute capability 9.0).
pub const HOPPER_COST_NAMES: [&str; 3] = [
    "energy_wgmma_pj_per_flop",
    "energy_tma_l2_pj_per_byte",
    "energy_tma_dram_pj_per_byte",
];

/// Why a document gives no energy costs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EnergyCostsError {
    #[error(
        "{file} has no measurement '{name}': make it with origami-calibrate --only clock,energy"
    )]
    Missing { file: String, name: &'static str },
    #[error("{file}: measurement '{name}' is {value}, not a finite number (a power at least 0, a cost at least 0)")]
    Invalid {
        file: String,
        name: &'static str,
        value: f64,
    },
    #[error("no energy costs for {gpu}: measure them with origami-calibrate --only clock,energy and pass the file with --energy-costs FILE")]
    NoneForGpu { gpu: String },
}

/// Committed energy documents by preset name.
const EMBEDDED: &[(&str, &str)] = &[];

impl EnergyCosts {
    /// The costs in a calibration document's measurements (medians). A cost may be a
    /// little below zero within noise (a rate too cheap to see over the static power):
    /// those read as 0; a static power or a limit must be positive.
    pub fn from_doc(doc: &HwDoc, source: &str) -> Result<EnergyCosts, EnergyCostsError> {
        let get = |name: &'static str| -> Result<f64, EnergyCostsError> {
            let v = doc
                .measurements
                .iter()
                .find(|m| m.name == name)
                .map(|m| m.summary.median)
                .ok_or_else(|| EnergyCostsError::Missing {
                    file: source.into(),
                    name,
                })?;
            let power = name.ends_with("_w");
            if !v.is_finite() || (power && v <= 0.0) {
                return Err(EnergyCostsError::Invalid {
                    file: source.into(),
                    name,
                    value: v,
                });
            }
            Ok(v.max(0.0))
        };
        let optional = |name: &'static str| match get(name) {
            Ok(v) => Ok(Some(v)),
            Err(EnergyCostsError::Missing { .. }) => Ok(None),
            Err(e) => Err(e),
        };
        Ok(EnergyCosts {
            pj_per_flop_wgmma: optional(HOPPER_COST_NAMES[0])?,
            pj_per_tma_l2_byte: optional(HOPPER_COST_NAMES[1])?,
            pj_per_tma_dram_byte: optional(HOPPER_COST_NAMES[2])?,
            static_w: get(COST_NAMES[0])?,
            pj_per_flop: get(COST_NAMES[1])?,
            pj_per_smem_byte: get(COST_NAMES[2])?,
            pj_per_l2_byte: get(COST_NAMES[3])?,
            pj_per_dram_byte: get(COST_NAMES[4])?,
            power_limit_w: get(COST_NAMES[5])?,
            source: source.into(),
        })
    }

    /// The committed costs of a preset, if any.
    pub fn embedded(preset: &str) -> Option<Result<EnergyCosts, EnergyCostsError>> {
        let (name, text) = EMBEDDED.iter().find(|(n, _)| *n == preset)?;
        let source = format!("calibrations/energy/{name}.json");
        Some(match serde_json::from_str::<HwDoc>(text) {
            Ok(doc) => EnergyCosts::from_doc(&doc, &source),
            Err(_) => Err(EnergyCostsError::Missing {
                file: source,
                name: COST_NAMES[0],
            }),
        })
    }

    /// The costs for a GPU: `doc` (a file given, with its name) first, else the
    /// committed ones of the preset that matches `gpu_name`.
    pub fn resolve(
        doc: Option<(&HwDoc, &str)>,
        gpu_name: &str,
    ) -> Result<EnergyCosts, EnergyCostsError> {
        if let Some((doc, source)) = doc {
            return EnergyCosts::from_doc(doc, source);
        }
        let preset = super::presets::preset_for_device(gpu_name)
            .or_else(|| EMBEDDED.iter().map(|(n, _)| *n).find(|n| *n == gpu_name));
        preset.and_then(EnergyCosts::embedded).unwrap_or_else(|| {
            Err(EnergyCostsError::NoneForGpu {
                gpu: gpu_name.into(),
            })
        })
    }
}
