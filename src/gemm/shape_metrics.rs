//! The per-shape rows of a sweep folder, derived again from its `configs.csv`: what
//! `origami-bench report` shows for any runner that writes `origami-bench`'s layout (this
//! project's NVRTC runner, `scripts/triton_sweep.py` for Triton). The metrics (A/BF,
//! A/cuBLAS, rank of the pick, Kendall tau-b, infeasible pick) have one owner,
//! [`shape_row`]; a runner only records measurements.
//!
//! `shapes.csv` contributes what `configs.csv` cannot hold: which shapes the run finished
//! (in order), their label, cuBLAS's time and CoV (and energy under sustained load), the SM
//! clock and the seconds spent.
//! A full `shapes.csv` of an earlier report reads as such facts too (its other columns are
//! ignored and derived again, to the same values).

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;

use crate::dtype::Dtype;
use crate::model::Problem;

use super::sweep::{shape_row, ConfigRow, ShapeKey, ShapeRow};

/// One shape of a run as its runner records it: the columns of `shapes.csv` that are not
/// derived from `configs.csv`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ShapeFacts {
    pub set: String,
    #[serde(default)]
    pub label: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub dtype: String,
    /// cuBLAS's median time on the shape, ms (absent: cuBLAS was not timed).
    #[serde(default)]
    pub cublas_ms: Option<f64>,
    #[serde(default)]
    pub cublas_cov: Option<f64>,
    /// Median SM clock while the shape ran, MHz.
    #[serde(default)]
    pub sm_mhz: Option<u32>,
    /// Wall time the shape took, seconds.
    #[serde(default)]
    pub seconds: Option<f64>,
    /// cuBLAS under sustained load (`sweep --energy-s`).
    #[serde(default)]
    pub cublas_energy_mj: Option<f64>,
    #[serde(default)]
    pub cublas_energy_w: Option<f64>,
    #[serde(default)]
    pub cublas_sustained_ms: Option<f64>,
}

impl ShapeFacts {
    pub fn key(&self) -> ShapeKey {
        (self.set.clone(), self.m, self.n, self.k, self.dtype.clone())
    }
}

/// The shape rows of a run: per recorded shape (in `facts` order) the metrics of its
/// config rows. A runner writes a shape's config rows together, its pick first; a shape
/// listed twice (one shape under two layer labels) has two such runs of rows, taken in
/// order. Config rows of
/// a shape that `facts` does not list (cut off mid-write) are left out, as in a resumed
/// sweep.
pub fn shape_rows(facts: &[ShapeFacts], configs: &[ConfigRow]) -> Result<Vec<ShapeRow>, String> {
    let mut runs = runs_by_shape(configs);
    facts
        .iter()
        .map(|f| {
            let dtype: Dtype = f
                .dtype
                .parse()
                .map_err(|e| format!("shapes.csv: {}x{}x{}: {e}", f.m, f.n, f.k))?;
            let p = Problem::new(f.m, f.n, f.k, dtype)
                .map_err(|e| format!("shapes.csv: {}x{}x{}: {e}", f.m, f.n, f.k))?;
            let rows: &[ConfigRow] = runs
                .get_mut(&f.key())
                .and_then(|q| q.pop_front())
                .unwrap_or(&[]);
            let cublas = f.cublas_ms.map(|ms| (ms, f.cublas_cov.unwrap_or(f64::NAN)));
            let mut s = shape_row(&f.set, &f.label, &p, rows, cublas);
            s.cublas_cov = f.cublas_cov;
            s.sm_mhz = f.sm_mhz;
            s.seconds = f.seconds.unwrap_or(0.0);
            s.cublas_energy_mj = f.cublas_energy_mj;
            s.cublas_energy_w = f.cublas_energy_w;
            s.cublas_sustained_ms = f.cublas_sustained_ms;
            Ok(s)
        })
        .collect()
}

/// The runs of consecutive config rows of one shape, per shape in file order: a run ends
/// where the shape changes or where a second pick of the same shape begins the next run.
fn runs_by_shape(configs: &[ConfigRow]) -> HashMap<ShapeKey, VecDeque<&[ConfigRow]>> {
    let mut runs: HashMap<ShapeKey, VecDeque<&[ConfigRow]>> = HashMap::new();
    let mut start = 0;
    let mut has_pick = configs.first().is_some_and(|r| r.is_pick == 1);
    for i in 1..=configs.len() {
        let ends = i == configs.len()
            || configs[i].key() != configs[start].key()
            || (configs[i].is_pick == 1 && has_pick);
        if ends {
            runs.entry(configs[start].key())
                .or_default()
                .push_back(&configs[start..i]);
            start = i;
            has_pick = false;
        }
        if i < configs.len() && configs[i].is_pick == 1 {
            has_pick = true;
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::sweep::Planned;
    use crate::model::problem::parse_config;

    fn config(set: &str, p: &Problem, cfg: &str, pick: bool, pred: f64, ms: f64) -> ConfigRow {
        let mut r = ConfigRow::planned(
            set,
            p,
            &Planned {
                config: parse_config(cfg).unwrap(),
                model_rank: 1,
                predicted_cycles: pred,
                predicted_us: pred / 1000.0,
                is_pick: pick,
            },
        );
        r.measured_ms = Some(ms);
        r.passed = 1;
        r.spills = Some(0);
        r
    }

    #[test]
    fn derived_rows_equal_the_sweeps_own_and_read_from_a_reduced_file() {
        let p = Problem::new(1024, 1024, 1024, Dtype::Fp16).unwrap();
        let rows = vec![
            config("t", &p, "128x128x32,g8,w8,s3", true, 100.0, 0.020),
            config("t", &p, "64x64x32,g8,w4,s3", false, 200.0, 0.016),
            config("t", &p, "32x32x32,g8,w4,s3", false, 300.0, 0.040),
        ];
        let mut want = shape_row("t", "layer", &p, &rows, Some((0.010, 0.02)));
        want.sm_mhz = Some(1980);
        want.seconds = 1.5;
        // A runner's reduced shapes.csv: the facts only, in any column order.
        let text = "m,n,k,set,dtype,label,cublas_ms,cublas_cov,sm_mhz,seconds\n\
                    1024,1024,1024,t,fp16,layer,0.01,0.02,1980,1.5\n\
                    2048,1024,1024,t,fp16,,,,,\n";
        let facts: Vec<ShapeFacts> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut other = rows[0].clone();
        other.m = 4096; // a shape the facts do not list: left out
        let mut configs = rows.clone();
        configs.push(other);
        let got = shape_rows(&facts, &configs).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], want);
        // No config rows and no cuBLAS: an empty, infeasible shape rather than an error.
        assert_eq!(got[1].n_configs, 0);
        assert_eq!(got[1].pick_infeasible, 1);
        assert_eq!(got[1].cublas_ms, None);
    }

    #[test]
    fn a_shape_listed_twice_takes_its_runs_in_order() {
        let p = Problem::new(1, 28672, 4096, Dtype::Fp16).unwrap();
        let first = vec![
            config("llm", &p, "16x64x128,g1,w4,s3", true, 100.0, 0.030),
            config("llm", &p, "32x64x128,g1,w4,s3", false, 200.0, 0.020),
        ];
        let second = vec![
            config("llm", &p, "16x64x128,g1,w4,s3", true, 100.0, 0.010),
            config("llm", &p, "32x64x128,g1,w4,s3", false, 200.0, 0.020),
        ];
        let text = "set,label,m,n,k,dtype\nllm,a,1,28672,4096,fp16\nllm,b,1,28672,4096,fp16\n";
        let facts: Vec<ShapeFacts> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        let configs: Vec<ConfigRow> = first.iter().chain(&second).cloned().collect();
        let got = shape_rows(&facts, &configs).unwrap();
        assert_eq!(got[0], shape_row("llm", "a", &p, &first, None));
        assert_eq!(got[1], shape_row("llm", "b", &p, &second, None));
        assert_eq!((got[0].n_configs, got[1].pick_rank), (2, Some(1)));
    }

    #[test]
    fn a_bad_dtype_is_named() {
        let f = ShapeFacts {
            set: "t".into(),
            label: String::new(),
            m: 1,
            n: 1,
            k: 1,
            dtype: "fp4".into(),
            cublas_ms: None,
            cublas_cov: None,
            sm_mhz: None,
            seconds: None,
            cublas_energy_mj: None,
            cublas_energy_w: None,
            cublas_sustained_ms: None,
        };
        assert!(shape_rows(&[f], &[]).unwrap_err().contains("1x1x1"));
    }
}
