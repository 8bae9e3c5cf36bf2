//! The energy costs of a GPU (issue 15, section 3): the static power of an awake GPU, the
//! active power of SMs full of issuing warps, and the dynamic energy per tensor-core FLOP
//! and per byte read from shared memory, L2 and DRAM (and on Hopper per wgmma FLOP and
//! TMA byte), each measured by `origami-calibrate --only energy` (csrc/energy_load.cu,
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
    /// Per FLOP of mma.sync (f16) and of wgmma whose A operand is zero
    /// (`energy_mma_zero_a_pj_per_flop`, `energy_wgmma_zero_a_pj_per_flop`): the FLOP over a
    /// tile's zero-filled rows past M, N or K, pJ. Without them such FLOP cost as real ones.
    pub pj_per_flop_zero: Option<f64>,
    pub pj_per_flop_wgmma_zero: Option<f64>,
    /// Per tensor-core FLOP of mma.sync m16n8k8 tf32 (the origami kernel's fp32 path;
    /// compute capability 8.0 and later, `energy_mma_tf32_pj_per_flop`), pJ.
    pub pj_per_flop_tf32: Option<f64>,
    /// Per byte a TMA box copy moves from L2 into shared memory (Hopper), pJ.
    pub pj_per_tma_l2_byte: Option<f64>,
    /// Per byte of a TMA copy from DRAM beyond its L2 crossing (Hopper), pJ.
    pub pj_per_tma_dram_byte: Option<f64>,
    /// Per byte of a TMA box outside its tensor, which the copy engine zero-fills without
    /// reading (`energy_tma_zero_pj_per_byte`; Hopper): a tile's rows past M or N. Without
    /// it such bytes cost the shared-memory write, pJ.
    pub pj_per_tma_zero_byte: Option<f64>,
    /// Average power of every SM full of spinning warps (`energy_active_w`), W: what SMs
    /// with work draw besides their operations. When measured, the costs of the loads that
    /// kept every SM that busy (mma.sync, ld.shared, the L2 and DRAM loads, wgmma) are
    /// taken above it; TMA's (one thread per SM) stay above the static power.
    pub active_w: Option<f64>,
    /// How the dynamic power follows the SM clock under a power limit: P ~ x^a at clock
    /// fraction x ([`DVFS_EXPONENT`]).
    pub dvfs_exponent: f64,
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

/// Dynamic power P = C V^2 f with the voltage following the clock in the DVFS range: P
/// grows as the cube of the clock, energy per operation as its square (the textbook CMOS
/// relation; the GPU's own voltage table is not exposed). Not fitted.
pub const DVFS_EXPONENT: f64 = 3.0;

/// The active power's measurement name.
pub const ACTIVE_W: &str = "energy_active_w";

/// An operation's cost above the active power, pJ: its measured cost `pj` (above the
/// static power) at `rate` operations per second, less the active power
/// `active_above_static_w` its load drew besides (0 for a load that did not keep every SM
/// busy); as measured when the rate is unknown. The cost stays at the clock it was
/// measured at: the loads that reach the power limit (mma.sync, wgmma) ran there at about
/// the clock a power-capped GEMM runs at. (Bringing them to full clock by the cube rule
/// over-predicted the seed list's energies: docs/energy.md.)
pub fn cost_above(pj: f64, rate: f64, active_above_static_w: f64) -> f64 {
    if !(rate.is_finite() && rate > 0.0) {
        return pj;
    }
    ((pj * 1e-12 * rate - active_above_static_w).max(0.0) / rate * 1e12).max(0.0)
}

/// The tf32 mma.sync cost's measurement name (optional: documents measured before it had
/// none; a tf32 launch then prices its FLOP at the f16 cost).
pub const TF32_COST_NAME: &str = "energy_mma_tf32_pj_per_flop";

/// The zero-operand costs' measurement names, mma.sync then wgmma (optional: without them
/// the FLOP on zero-filled rows cost as real ones).
pub const ZERO_COST_NAMES: [&str; 2] = [
    "energy_mma_zero_a_pj_per_flop",
    "energy_wgmma_zero_a_pj_per_flop",
];

/// The zero-filled TMA box's cost's measurement name (optional: documents measured before
/// it had none).
pub const TMA_ZERO_COST_NAME: &str = "energy_tma_zero_pj_per_byte";

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
const EMBEDDED: &[(&str, &str)] = &[
    (
        "h100-sxm",
        include_str!("../../../../calibrations/energy/h100-sxm.json"),
    ),
    (
        "h200",
        include_str!("../../../../calibrations/energy/h200.json"),
    ),
];

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
        let detail = |name: &str, key: &str| {
            doc.measurements
                .iter()
                .find(|m| m.name == name)
                .and_then(|m| m.details.get(key))
                .and_then(|v| v.as_f64())
        };
        let static_w = get(COST_NAMES[0])?;
        let active_w = optional(ACTIVE_W)?.filter(|w| *w > static_w);
        let above = active_w.map_or(0.0, |a| a - static_w);
        let a = DVFS_EXPONENT;
        // a cost at full clock, above the active power when `active` (its load kept
        // every SM busy); as measured when its rate or clock is not recorded
        let net = |name: &'static str, pj: f64, active: bool| {
            let rate = detail(name, "ops_per_s").unwrap_or(f64::NAN);
            cost_above(pj, rate, if active { above } else { 0.0 })
        };
        let l2 = net(COST_NAMES[3], get(COST_NAMES[3])?, true);
        // DRAM: the whole path above the active power, less the L2 part
        let dram_meas = get(COST_NAMES[4])?;
        let dram_path = detail(COST_NAMES[4], "dram_path_pj_per_byte")
            .map(|p| net(COST_NAMES[4], p, true) - l2);
        let tma_l2 = optional(HOPPER_COST_NAMES[1])?.map(|v| net(HOPPER_COST_NAMES[1], v, false));
        let tma_dram = optional(HOPPER_COST_NAMES[2])?.map(|v| {
            match (
                detail(HOPPER_COST_NAMES[2], "dram_path_pj_per_byte"),
                tma_l2,
            ) {
                (Some(p), Some(l2)) => net(HOPPER_COST_NAMES[2], p, false) - l2,
                _ => v,
            }
        });
        Ok(EnergyCosts {
            pj_per_flop_wgmma: optional(HOPPER_COST_NAMES[0])?
                .map(|v| net(HOPPER_COST_NAMES[0], v, true)),
            pj_per_flop_tf32: optional(TF32_COST_NAME)?.map(|v| net(TF32_COST_NAME, v, true)),
            pj_per_flop_zero: optional(ZERO_COST_NAMES[0])?
                .map(|v| net(ZERO_COST_NAMES[0], v, true)),
            pj_per_flop_wgmma_zero: optional(ZERO_COST_NAMES[1])?
                .map(|v| net(ZERO_COST_NAMES[1], v, true)),
            pj_per_tma_l2_byte: tma_l2,
            pj_per_tma_dram_byte: tma_dram.map(|v| v.max(0.0)),
            pj_per_tma_zero_byte: optional(TMA_ZERO_COST_NAME)?
                .map(|v| net(TMA_ZERO_COST_NAME, v, false).max(0.0)),
            static_w,
            pj_per_flop: net(COST_NAMES[1], get(COST_NAMES[1])?, true),
            pj_per_smem_byte: net(COST_NAMES[2], get(COST_NAMES[2])?, true),
            pj_per_l2_byte: l2,
            pj_per_dram_byte: dram_path.unwrap_or(dram_meas).max(0.0),
            active_w,
            dvfs_exponent: a,
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

    /// Whether a power limit can be met by slowing the clock: above the static power (at or
    /// below it no clock meets it, and the model would leave a launch uncapped).
    pub fn limit_reachable(&self, limit_w: f64) -> bool {
        limit_w > self.static_w
    }

    /// A calibration document given for its energy costs (`--energy-costs FILE`): the
    /// full document, or why it cannot be one (a one-line reason without the path).
    pub fn load_doc(path: &std::path::Path) -> Result<HwDoc, String> {
        match super::load::load_file(path) {
            Ok(super::load::HwFile::Full(doc)) => Ok(*doc),
            Ok(super::load::HwFile::Override(_)) => {
                Err("a flat override has no measurements: give origami-calibrate's output".into())
            }
            Err(e) => Err(e.to_string()),
        }
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
        super::presets::preset_for_device(gpu_name)
            .and_then(EnergyCosts::embedded)
            .unwrap_or_else(|| {
                Err(EnergyCostsError::NoneForGpu {
                    gpu: gpu_name.into(),
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_is_taken_above_the_active_power_its_load_drew() {
        // 1 pJ at 1e14 per second: 100 W above static; 40 W of it the SMs' active power
        assert!((cost_above(1.0, 1e14, 40.0) - 0.6).abs() < 1e-12);
        assert_eq!(cost_above(1.0, 1e14, 0.0), 1.0);
        // never below 0; an unknown rate leaves the cost as measured
        assert_eq!(cost_above(1.0, 1e14, 500.0), 0.0);
        assert_eq!(cost_above(1.0, f64::NAN, 40.0), 1.0);
    }

    #[test]
    fn the_committed_h100_costs_parse_with_the_tma_path_and_its_zero_fill() {
        let c = EnergyCosts::embedded("h100-sxm").unwrap().unwrap();
        let (l2, zero) = (
            c.pj_per_tma_l2_byte.unwrap(),
            c.pj_per_tma_zero_byte.unwrap(),
        );
        // a zero-filled byte costs less than one read from L2 (16.3 against 36.2 pJ)
        assert!(zero > 0.0 && zero < l2, "{c:?}");
    }

    #[test]
    fn the_h200_has_costs_of_its_own_its_hbm3e_cheaper_per_byte() {
        let h200 = EnergyCosts::embedded("h200").unwrap().unwrap();
        let h100 = EnergyCosts::embedded("h100-sxm").unwrap().unwrap();
        assert_eq!(h200.source, "calibrations/energy/h200.json");
        assert_eq!(h200.power_limit_w, 700.0);
        // measured 2026-11-28: DRAM beyond L2 69.2 pJ/B (TMA 78.0) against the H100's 91.0 (95.3)
        assert!(h200.pj_per_dram_byte < h100.pj_per_dram_byte, "{h200:?}");
        assert!(h200.pj_per_tma_dram_byte.unwrap() < h100.pj_per_tma_dram_byte.unwrap());
        let by_name = EnergyCosts::resolve(None, "NVIDIA H200").unwrap();
        assert_eq!(by_name.source, h200.source);
    }

    #[test]
    fn costs_come_from_a_documents_measurements() {
        let text = include_str!("../../../../results/h100/calibrate-full-2026-11-26.json");
        let mut doc: HwDoc = serde_json::from_str(text).unwrap();
        assert!(matches!(
            EnergyCosts::from_doc(&doc, "x"),
            Err(EnergyCostsError::Missing {
                name: "energy_static_w",
                ..
            })
        ));
        let one = doc.measurements[0].clone();
        let add = |doc: &mut HwDoc, name: &str, v: f64, rate: Option<f64>| {
            let mut m = one.clone();
            m.name = name.into();
            m.summary.median = v;
            m.details.clear();
            if let Some(r) = rate {
                m.details.insert("ops_per_s".into(), serde_json::json!(r));
            }
            doc.measurements.push(m);
        };
        add(&mut doc, "energy_static_w", 150.0, None);
        add(&mut doc, "energy_mma_pj_per_flop", 1.0, Some(5e14));
        add(&mut doc, "energy_smem_pj_per_byte", 6.0, Some(3e13));
        add(&mut doc, "energy_l2_pj_per_byte", 40.0, Some(8e12));
        add(&mut doc, "energy_dram_pj_per_byte", 90.0, Some(3e12));
        add(&mut doc, "power_limit_w", 700.0, None);
        let plain = EnergyCosts::from_doc(&doc, "x").unwrap();
        assert_eq!((plain.pj_per_flop, plain.active_w), (1.0, None));
        assert_eq!(plain.pj_per_flop_wgmma, None);
        // with the active power measured: every full-occupancy load's cost above it
        add(&mut doc, "energy_active_w", 350.0, None);
        let c = EnergyCosts::from_doc(&doc, "x").unwrap();
        assert_eq!(c.active_w, Some(350.0));
        // 1 pJ x 5e14 = 500 W, 200 W of it active: 0.6 pJ
        assert!((c.pj_per_flop - 0.6).abs() < 1e-12, "{c:?}");
        assert!((c.pj_per_l2_byte - 15.0).abs() < 1e-9, "{c:?}");
        assert_eq!(c.dvfs_exponent, DVFS_EXPONENT);
        assert_eq!(c.pj_per_flop_tf32, None);
        // tf32's cost, when measured, is taken above the active power as the f16 one
        add(&mut doc, "energy_mma_tf32_pj_per_flop", 2.0, Some(2.5e14));
        let t = EnergyCosts::from_doc(&doc, "x").unwrap();
        // 2 pJ x 2.5e14 = 500 W, 200 W of it active: 1.2 pJ
        assert!((t.pj_per_flop_tf32.unwrap() - 1.2).abs() < 1e-12, "{t:?}");
        assert_eq!((t.pj_per_flop_zero, t.pj_per_flop_wgmma_zero), (None, None));
        // the zero-operand cost likewise: 0.8 pJ x 5e14 = 400 W, 200 W active: 0.4 pJ
        add(&mut doc, "energy_mma_zero_a_pj_per_flop", 0.8, Some(5e14));
        let z = EnergyCosts::from_doc(&doc, "x").unwrap();
        assert!((z.pj_per_flop_zero.unwrap() - 0.4).abs() < 1e-12, "{z:?}");
        // TMA's zero fill, when measured, stays above the static power (one issuing thread)
        assert_eq!(z.pj_per_tma_zero_byte, None);
        add(&mut doc, "energy_tma_zero_pj_per_byte", 16.0, Some(3.5e12));
        let f = EnergyCosts::from_doc(&doc, "x").unwrap();
        assert_eq!(f.pj_per_tma_zero_byte, Some(16.0));
        // a non-finite cost is refused with its name
        let i = doc
            .measurements
            .iter()
            .position(|m| m.name == "energy_l2_pj_per_byte")
            .unwrap();
        doc.measurements[i].summary.median = f64::NAN;
        assert!(matches!(
            EnergyCosts::from_doc(&doc, "x"),
            Err(EnergyCostsError::Invalid {
                name: "energy_l2_pj_per_byte",
                ..
            })
        ));
    }
}
