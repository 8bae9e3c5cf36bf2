//! The text tables of a sweep folder, what `origami-bench sweep`, `merge` and `report`
//! print on stdout: one line per shape (pick, brute-force best and cuBLAS in TFLOP/s, A/BF,
//! A/cuBLAS, rank of the pick, Kendall tau-b, registers), as in the NVIDIA port report
//! (section 7.2), then the summary lines per set. The folder's files belong to
//! `gemm::sweep_files`, its plots to `report::plots`.

use crate::gemm::sweep::{summarize, ShapeRow};

/// What `report`, `sweep` and `merge` print on stdout: the per-shape table, a blank
/// line, the summary lines.
pub fn report_text(shapes: &[ShapeRow]) -> String {
    format!("{}\n{}", shapes_table(shapes), summary_text(shapes))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:.1}%", 100.0 * x))
}

fn num(v: Option<f64>, d: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.d$}"))
}

/// The per-shape table (text, for people), as in the NVIDIA port report (section 7.2).
pub fn shapes_table(shapes: &[ShapeRow]) -> String {
    let mut t = format!(
        "{:<24} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8} {:>6} {:>6}  {:<20} {:<20}\n",
        "shape",
        "pick TF",
        "BF TF",
        "cuBLAS",
        "A/BF",
        "A/cuB",
        "rank",
        "tau",
        "regs",
        "pick",
        "best"
    );
    for s in shapes {
        t.push_str(&format!(
            "{:<24} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8} {:>6} {:>6}  {:<20} {:<20}\n",
            format!("{}x{}x{}", s.m, s.n, s.k),
            num(s.pick_tflops, 1),
            num(s.bf_tflops, 1),
            num(s.cublas_tflops, 1),
            pct(s.a_bf),
            pct(s.a_cublas),
            s.pick_rank
                .map_or("-".into(), |r| format!("#{r}/{}", s.n_timed)),
            num(s.kendall_tau, 3),
            s.pick_registers.map_or("-".into(), |r| r.to_string()),
            s.pick,
            s.bf_config
        ));
    }
    t
}

/// The summary lines (text).
pub fn summary_text(shapes: &[ShapeRow]) -> String {
    let mut sets: Vec<String> = Vec::new();
    for s in shapes {
        if !sets.contains(&s.set) {
            sets.push(s.set.clone());
        }
    }
    let mut t = String::new();
    let mut line = |name: &str, rows: Vec<&ShapeRow>| {
        let s = summarize(&rows);
        t.push_str(&format!(
            "{name:<14} shapes {:>3}  A/BF median {} min {} mean {}  tau {}  infeasible picks {}  A/cuBLAS median {}  BF/cuBLAS median {}\n",
            s.n_shapes,
            pct(s.abf_median),
            pct(s.abf_min),
            pct(s.abf_mean),
            num(s.kendall_tau_mean, 3),
            s.infeasible_picks,
            pct(s.a_cublas_median),
            pct(s.bf_cublas_median)
        ));
    };
    for name in &sets {
        line(name, shapes.iter().filter(|s| &s.set == name).collect());
    }
    if sets.len() > 1 {
        line("all", shapes.iter().collect());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::gemm::sweep::{measured_row, shape_row};
    use crate::model::Problem;

    fn shape() -> ShapeRow {
        let p = Problem::new(512, 512, 512, Dtype::Fp16).unwrap();
        let mk = |s: &str, pick: bool, ms: f64| measured_row("seed_shapes", &p, s, pick, ms);
        let rows = vec![
            mk("64x64x32,g8,w4,s3", true, 0.01),
            mk("128x64x32,g8,w4,s3", false, 0.012),
        ];
        shape_row("seed_shapes", "", &p, &rows, Some((0.005, 0.01)))
    }

    #[test]
    fn tables_show_the_shape_and_the_summary() {
        let shapes = [shape()];
        let t = shapes_table(&shapes);
        assert!(t.contains("512x512x512") && t.contains("100.0%"));
        let summary = summary_text(&shapes);
        assert!(summary.contains("A/BF median 100.0%"));
        assert_eq!(report_text(&shapes), format!("{t}\n{summary}"));
    }
}
