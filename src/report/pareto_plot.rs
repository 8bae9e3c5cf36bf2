//! PNG of time/energy fronts (issue 15, section 4): one panel per shape, sustained time
//! (x, µs) against energy per GEMM (y, mJ), log-log. Every config priced in grey, the
//! predicted front as a blue line; where measurements are given (`origami-bench report`
//! on a sweep with `--energy-s`), the measured configs in orange and their front as an
//! orange line.

use std::path::Path;

use plotters::prelude::*;

use super::font::{register, FAMILY};

/// One panel: (time µs, energy mJ) points.
#[derive(Debug, Clone, Default)]
pub struct ParetoPanel {
    pub title: String,
    /// Every config priced by the model.
    pub predicted: Vec<(f64, f64)>,
    /// The predicted front, fastest first.
    pub predicted_front: Vec<(f64, f64)>,
    /// Measured configs (sustained ms x 1000, mJ), if any.
    pub measured: Vec<(f64, f64)>,
    /// Their front, fastest first.
    pub measured_front: Vec<(f64, f64)>,
}

/// The Pareto front of `points` (smaller time and smaller energy are better), fastest
/// first; non-finite points are left out.
pub fn front(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    crate::model::objective::front_of(points)
        .into_iter()
        .map(|i| points[i])
        .collect()
}

/// A log axis over the panel's positive finite values (`plots::log_span`'s margins and
/// bounds).
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    super::plots::log_span(lo, hi)
}

fn err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// Draw `panels` into `path` (at most 36 panels; more are left out, and the title says so).
pub fn pareto_png(panels: &[ParetoPanel], title: &str, path: &Path) -> Result<(), String> {
    register();
    const MAX: usize = 36;
    let shown = &panels[..panels.len().min(MAX)];
    let n = shown.len().max(1);
    let cols = (n as f64).sqrt().ceil() as usize;
    let rows = n.div_ceil(cols);
    let (pw, ph) = (340u32, 280u32);
    let root =
        BitMapBackend::new(path, (pw * cols as u32, ph * rows as u32 + 40)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let (head, body) = root.split_vertically(40);
    let more = if panels.len() > MAX {
        format!(" (first {MAX} of {} shapes)", panels.len())
    } else {
        String::new()
    };
    head.draw_text(
        &format!("{title}{more}"),
        &(FAMILY, 16).into_text_style(&head),
        (10, 10),
    )
    .map_err(|e| err(path, e))?;
    let areas = body.split_evenly((rows, cols));
    for (p, area) in shown.iter().zip(areas.iter()) {
        let all = || {
            p.predicted
                .iter()
                .chain(&p.measured)
                .chain(&p.predicted_front)
                .chain(&p.measured_front)
        };
        let (x0, x1) = span(all().map(|q| q.0));
        let (y0, y1) = span(all().map(|q| q.1));
        let mut chart = ChartBuilder::on(area)
            .caption(&p.title, (FAMILY, 13))
            .margin(6)
            .x_label_area_size(20)
            .y_label_area_size(40)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(|e| err(path, e))?;
        chart
            .configure_mesh()
            .x_labels(3)
            .y_labels(3)
            .label_style((FAMILY, 9))
            .x_desc("µs")
            .y_desc("mJ")
            .disable_mesh()
            .draw()
            .map_err(|e| err(path, e))?;
        let ok = |q: &&(f64, f64)| q.0 > 0.0 && q.1 > 0.0 && q.0.is_finite() && q.1.is_finite();
        chart
            .draw_series(
                p.predicted
                    .iter()
                    .filter(ok)
                    .map(|q| Circle::new(*q, 2, BLACK.mix(0.2).filled())),
            )
            .map_err(|e| err(path, e))?;
        chart
            .draw_series(LineSeries::new(
                p.predicted_front.iter().filter(ok).copied(),
                BLUE.stroke_width(2),
            ))
            .map_err(|e| err(path, e))?;
        chart
            .draw_series(
                p.measured
                    .iter()
                    .filter(ok)
                    .map(|q| Circle::new(*q, 3, RGBColor(230, 120, 0).filled())),
            )
            .map_err(|e| err(path, e))?;
        chart
            .draw_series(LineSeries::new(
                p.measured_front.iter().filter(ok).copied(),
                RGBColor(230, 120, 0).stroke_width(2),
            ))
            .map_err(|e| err(path, e))?;
    }
    root.present().map_err(|e| err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_keeps_what_nothing_beats_in_both() {
        let pts = [
            (1.0, 10.0),
            (2.0, 5.0),
            (2.5, 6.0), // slower and costlier than (2, 5)
            (3.0, 4.0),
            (0.5, f64::NAN),
            (4.0, 4.0), // ties (3, 4) in energy, slower
        ];
        assert_eq!(front(&pts), vec![(1.0, 10.0), (2.0, 5.0), (3.0, 4.0)]);
        assert!(front(&[]).is_empty());
    }

    #[test]
    fn panels_render() {
        let dir = std::env::temp_dir().join(format!("origami-pareto-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.png");
        let pts = vec![(1.0, 3.0), (2.0, 2.0), (3.0, 2.5)];
        let panel = ParetoPanel {
            title: "4096x4096x4096".into(),
            predicted_front: front(&pts),
            predicted: pts.clone(),
            measured: vec![(1.1, 3.2), (f64::INFINITY, 1.0)],
            measured_front: front(&[(1.1, 3.2)]),
        };
        pareto_png(&[panel.clone(), ParetoPanel::default()], "fronts", &path).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 1000);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
