//! The times a family set (`--family auto`, `--family triton-auto`) compares: each member's
//! predicted pick time through the affine map fitted for its family and architecture
//! (`calibrations/fitted/sm90-auto.json`, written by `scripts/hopper/fit_auto.py` from the
//! measured picks of the seed list). Each family's model is fitted to rank its own configs;
//! its absolute time can be off by a constant (the Hopper model's pipeline fill, ~13 us
//! on every prediction) or a factor (the mma.sync model on decode shapes), which ranking
//! never sees but a comparison across families does. The map is
//! `offset_us + scale * max(predicted_us, predicted_min_us)`, no extrapolation below the
//! smallest prediction fitted, and applies only where the member's constants are exactly
//! the fitted file the map was measured with; everywhere else the predicted time is
//! compared as it is.

use super::resolve::{Resolved, Tier};

/// One family's map (identity: offset 0, scale 1, no floor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeMap {
    pub offset_us: f64,
    pub scale: f64,
    pub predicted_min_us: f64,
}

impl Default for TimeMap {
    fn default() -> Self {
        TimeMap::IDENTITY
    }
}

const EMBEDDED: &str = include_str!("../../../../calibrations/fitted/sm90-auto.json");

impl TimeMap {
    pub const IDENTITY: TimeMap = TimeMap {
        offset_us: 0.0,
        scale: 1.0,
        predicted_min_us: 0.0,
    };

    /// The time compared for a pick predicted at `predicted_us`.
    pub fn apply(&self, predicted_us: f64) -> f64 {
        self.offset_us + self.scale * predicted_us.max(self.predicted_min_us)
    }

    /// The time of one config among a shape's configs, for the energy model
    /// (`model::objective`), given the fastest prediction among them, `shape_min_us`. Where
    /// that lies below the map's floor, the larger of the map and the floor's time scaled
    /// by `predicted_us / shape_min_us`; elsewhere the map. The floor keeps a
    /// comparison across families from extrapolating, but within a shape whose
    /// predictions fall below it, it would give every config one time and leave their
    /// order by energy to the predicted power alone, while measured, their times differ
    /// more than their powers (docs/energy.md, "Below the time map's floor"). Here the
    /// fastest config keeps the floor's time and the others the model's ratios to it,
    /// until the map (steeper) overtakes. Increasing in `predicted_us`; the identity map
    /// unchanged.
    pub fn apply_within_shape(&self, predicted_us: f64, shape_min_us: f64) -> f64 {
        let mapped = self.apply(predicted_us);
        if !(shape_min_us > 0.0 && shape_min_us < self.predicted_min_us) {
            return mapped;
        }
        mapped.max(self.apply(self.predicted_min_us) * predicted_us / shape_min_us)
    }

    /// The map for `family` under a resolution: the fitted one when the GPU has the
    /// file's architecture and every constant came from the file the map names; else the
    /// identity.
    pub fn for_resolution(family: &str, res: &Resolved) -> TimeMap {
        Self::from_doc(EMBEDDED, family, res).unwrap_or(TimeMap::IDENTITY)
    }

    fn from_doc(text: &str, family: &str, res: &Resolved) -> Option<TimeMap> {
        let doc: serde_json::Value = serde_json::from_str(text).ok()?;
        let major = doc.get("architecture_major")?.as_u64()?;
        if u64::from(res.gpu.compute_capability[0]) != major {
            return None;
        }
        let m = doc.get("families")?.get(family)?;
        let file = m.get("constants_file")?.as_str()?;
        let all_from_file = !res.constants.is_empty()
            && res
                .constants
                .values()
                .all(|(_, tier)| matches!(tier, Tier::Fitted(p) if p == file));
        if !all_from_file {
            return None;
        }
        let map = TimeMap {
            offset_us: m.get("offset_us")?.as_f64()?,
            scale: m.get("scale")?.as_f64()?,
            predicted_min_us: m.get("predicted_min_us")?.as_f64()?,
        };
        // A map that could compare a time at or below zero is refused (identity instead).
        (map.scale > 0.0 && map.apply(map.predicted_min_us) > 0.0).then_some(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::fitted::apply_fitted;
    use crate::hw::presets::preset;
    use crate::hw::resolve::Resolved;

    #[test]
    fn within_a_shape_below_the_floor_the_ratios_are_kept() {
        let m = TimeMap {
            offset_us: -16.25,
            scale: 1.29,
            predicted_min_us: 14.0,
        };
        let floor = m.apply(14.0);
        // A shape at or above the floor: the map itself.
        for p in [14.0, 20.0, 300.0] {
            assert_eq!(m.apply_within_shape(p, 14.0), m.apply(p));
            assert_eq!(m.apply_within_shape(p, 16.0), m.apply(p));
        }
        // A shape below it: the fastest at the floor's time, the others at its ratios,
        // increasing, and the map again where it is the larger.
        assert!((m.apply_within_shape(10.0, 10.0) - floor).abs() < 1e-12);
        assert!((m.apply_within_shape(12.0, 10.0) - 1.2 * floor).abs() < 1e-12);
        let ts: Vec<f64> = (0..400)
            .map(|i| m.apply_within_shape(10.0 + 0.25 * f64::from(i), 10.0))
            .collect();
        assert!(ts.windows(2).all(|w| w[1] > w[0]), "not increasing");
        assert_eq!(m.apply_within_shape(100.0, 10.0), m.apply(100.0));
        // The identity map, and a shape without a usable minimum, are left alone.
        assert_eq!(TimeMap::IDENTITY.apply_within_shape(3.0, 1.0), 3.0);
        assert_eq!(m.apply_within_shape(12.0, f64::INFINITY), m.apply(12.0));
        assert_eq!(m.apply_within_shape(12.0, 0.0), m.apply(12.0));
    }

    fn resolved(gpu: &str, family: &str, fitted: bool) -> Resolved {
        let doc = preset(gpu).unwrap();
        let mut r = Resolved {
            gpu: doc.gpu.clone(),
            gpu_source: gpu.into(),
            params: doc.params,
            tiers: Default::default(),
            constants: Default::default(),
            used_default_preset: false,
            file: None,
        };
        if fitted {
            apply_fitted(&mut r, family);
        }
        r
    }

    #[test]
    fn the_embedded_maps_apply_to_their_fitted_constants_on_sm90_only() {
        for fam in ["hopper", "origami", "triton", "triton-tma"] {
            let m = TimeMap::for_resolution(fam, &resolved("h100-sxm", fam, true));
            assert_ne!(m, TimeMap::IDENTITY, "{fam}");
            assert!(m.apply(0.0) > 0.0, "{fam}: floor keeps the time positive");
            assert!(m.apply(1e4) > m.apply(1e3), "{fam}: increasing");
            // no fitted constants (--no-fitted), or another architecture: identity
            let none = TimeMap::for_resolution(fam, &resolved("h100-sxm", fam, false));
            assert_eq!(none, TimeMap::IDENTITY, "{fam}");
            let a100 = TimeMap::for_resolution(fam, &resolved("a100", fam, true));
            assert_eq!(a100, TimeMap::IDENTITY, "{fam}");
        }
        // a family the file does not name
        let t = TimeMap::for_resolution("seed", &resolved("h100-sxm", "seed", true));
        assert_eq!(t, TimeMap::IDENTITY);
    }

    #[test]
    fn one_constant_from_elsewhere_turns_the_map_off() {
        let mut r = resolved("h100-sxm", "hopper", true);
        r.constants
            .insert("tp_time_scale".into(), (0.2, Tier::File("x.json".into())));
        assert_eq!(TimeMap::for_resolution("hopper", &r), TimeMap::IDENTITY);
    }

    #[test]
    fn the_map_is_affine_above_its_floor() {
        let m = TimeMap {
            offset_us: -10.0,
            scale: 2.0,
            predicted_min_us: 8.0,
        };
        assert_eq!(m.apply(20.0), 30.0);
        assert_eq!(m.apply(3.0), 6.0);
        assert_eq!(TimeMap::IDENTITY.apply(7.5), 7.5);
        let bad = r#"{"architecture_major": 9, "families": {"hopper": {"constants_file": "f", "offset_us": -20, "scale": 1, "predicted_min_us": 5}}}"#;
        let mut r = resolved("h100-sxm", "hopper", false);
        r.constants
            .insert("x".into(), (1.0, Tier::Fitted("f".into())));
        assert_eq!(TimeMap::from_doc(bad, "hopper", &r), None);
    }
}
