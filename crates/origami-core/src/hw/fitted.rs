//! Fitted model constants per kernel family and architecture: the flat calibration files
//! `origami-bench refit` wrote from measured sweeps (`calibrations/fitted/`), embedded and
//! applied beneath every other source of constants when the GPU has the architecture
//! they were measured on. Today: the H200 (sm_90) fits of the `origami` and `triton`
//! families (throughput model; `docs/throughput.md`) and the H100 fit of the `triton-tma`
//! family (docs/triton-tma.md) and the H200 fit of the `hopper` family
//! (docs/hopper-kernel.md), applied on compute capability 9.x.
//! A preset's or `TRITONBLAS_HW_PARAMS`'s constants win over them; `--no-fitted` leaves
//! them out (the model as the NVIDIA port report published it).

use std::collections::BTreeMap;

use super::resolve::{Resolved, Tier};
use super::schema::GpuDesc;

/// One embedded fitted file.
struct FittedFile {
    family: &'static str,
    major: u32,
    path: &'static str,
    text: &'static str,
}

const FILES: [FittedFile; 4] = [
    FittedFile {
        family: "origami",
        major: 9,
        path: "calibrations/fitted/h200-origami.json",
        text: include_str!("../../../../calibrations/fitted/h200-origami.json"),
    },
    FittedFile {
        family: "triton",
        major: 9,
        path: "calibrations/fitted/h200-triton-throughput.json",
        text: include_str!("../../../../calibrations/fitted/h200-triton-throughput.json"),
    },
    FittedFile {
        family: "triton-tma",
        major: 9,
        path: "calibrations/fitted/h100-triton-tma.json",
        text: include_str!("../../../../calibrations/fitted/h100-triton-tma.json"),
    },
    FittedFile {
        family: "hopper",
        major: 9,
        path: "calibrations/fitted/h200-hopper.json",
        text: include_str!("../../../../calibrations/fitted/h200-hopper.json"),
    },
];

/// The fitted constants for a family on a GPU: (file, constants); `None` when none were
/// fitted on its architecture.
pub fn fitted_constants(
    family: &str,
    gpu: &GpuDesc,
) -> Option<(&'static str, BTreeMap<String, f64>)> {
    let f = FILES
        .iter()
        .find(|f| f.family == family && f.major == gpu.compute_capability[0])?;
    let v: serde_json::Value =
        serde_json::from_str(f.text).expect("embedded fitted file is valid JSON");
    let constants = v
        .get("constants")
        .and_then(|c| c.as_object())
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
                .collect()
        })
        .unwrap_or_default();
    Some((f.path, constants))
}

/// Add the family's fitted constants to a resolution, beneath what it already has.
pub fn apply_fitted(res: &mut Resolved, family: &str) {
    if let Some((path, constants)) = fitted_constants(family, &res.gpu) {
        for (k, v) in constants {
            res.constants
                .entry(k)
                .or_insert((v, Tier::Fitted(path.to_string())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constants::ModelConstants;
    use crate::hw::presets::preset;

    #[test]
    fn embedded_files_parse_into_valid_constants_for_hopper_only() {
        let h = preset("h100-sxm").unwrap().gpu;
        for fam in ["origami", "triton", "triton-tma"] {
            let (path, c) = fitted_constants(fam, &h).unwrap();
            assert!(
                path.ends_with(&format!("-{fam}.json")) || path.contains(fam),
                "{path}"
            );
            assert_eq!(c.get("throughput_model"), Some(&1.0));
            ModelConstants::with_overrides(c.iter().map(|(k, v)| (k.as_str(), *v))).unwrap();
        }
        assert!(fitted_constants("seed", &h).is_none());
        assert!(fitted_constants("triton", &preset("a100").unwrap().gpu).is_none());
    }
}
