//! PNG plots of a sweep (plotters, embedded font): predicted vs measured time of every
//! config, one panel per shape (log-log, pick in red, brute-force best in green), and A/BF
//! and A/cuBLAS per shape (bars, with the 95 % and 80 % goal lines). [`sweep_plots`] draws
//! both into a sweep folder under the names `gemm::sweep_files` gives them.

use std::path::Path;

use plotters::prelude::*;

use super::font::{register, FAMILY};
use crate::exit::Failure;
use crate::gemm::sweep::{ConfigRow, ShapeRow};
use crate::gemm::sweep_files::{SweepRows, PLOT_ABF, PLOT_PRED_VS_MEAS};

/// Draw a summarized sweep folder's plots into it: predicted vs measured, then A/BF. A
/// sweep without shapes has none.
pub fn sweep_plots(dir: &Path, rows: &SweepRows) -> Result<(), Failure> {
    if rows.shapes.is_empty() {
        return Ok(());
    }
    predicted_vs_measured_png(&rows.shapes, &rows.configs, &dir.join(PLOT_PRED_VS_MEAS))
        .map_err(Failure::runtime)?;
    abf_png(&rows.shapes, &dir.join(PLOT_ABF)).map_err(Failure::runtime)
}

/// The bounds of a log axis, µs: from 1e-6 µs to about 30 years, so that an extreme value
/// cannot ask the axis for an endless run of decades.
const LOG_AXIS_US: (f64, f64) = (1e-6, 1e15);

/// A log axis over `[lo, hi]` with the plots' margins (0.8x, 1.25x), kept finite, positive,
/// within [`LOG_AXIS_US`] and non-empty whatever the values.
pub(crate) fn log_span(lo: f64, hi: f64) -> (f64, f64) {
    let (min, max) = LOG_AXIS_US;
    let clamp = |v: f64| if v.is_nan() { min } else { v.clamp(min, max) };
    let lo = clamp(lo * 0.8);
    let hi = clamp(hi * 1.25);
    if hi > lo {
        (lo, hi)
    } else {
        (lo.min(max / 10.0), (lo * 10.0).min(max))
    }
}

fn err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// One panel per shape: x predicted µs, y measured µs, log-log.
pub fn predicted_vs_measured_png(
    shapes: &[ShapeRow],
    configs: &[ConfigRow],
    path: &Path,
) -> Result<(), String> {
    register();
    let n = shapes.len().max(1);
    let cols = (n as f64).sqrt().ceil() as usize;
    let rows = n.div_ceil(cols);
    let (pw, ph) = (300u32, 260u32);
    let root =
        BitMapBackend::new(path, (pw * cols as u32, ph * rows as u32 + 40)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let (title, body) = root.split_vertically(40);
    title
        .draw_text(
            "predicted (x) vs measured (y) time per config, µs, log-log; red: pick, green: best",
            &(FAMILY, 18).into_text_style(&title),
            (10, 10),
        )
        .map_err(|e| err(path, e))?;
    let panels = body.split_evenly((rows, cols));
    for (s, area) in shapes.iter().zip(panels.iter()) {
        let pts: Vec<(f64, f64, &ConfigRow)> = configs
            .iter()
            .filter(|c| c.key() == s.key())
            .filter_map(|c| c.timed().map(|ms| (c.predicted_us.max(1e-3), ms * 1e3, c)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let lo = |f: &dyn Fn(&(f64, f64, &ConfigRow)) -> f64| {
            pts.iter().map(f).fold(f64::INFINITY, f64::min)
        };
        let hi =
            |f: &dyn Fn(&(f64, f64, &ConfigRow)) -> f64| pts.iter().map(f).fold(0.0f64, f64::max);
        let (x0, x1) = log_span(lo(&|p| p.0), hi(&|p| p.0));
        let (y0, y1) = log_span(lo(&|p| p.1), hi(&|p| p.1));
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{}x{}x{} tau {:.2}",
                    s.m,
                    s.n,
                    s.k,
                    s.kendall_tau.unwrap_or(f64::NAN)
                ),
                (FAMILY, 13),
            )
            .margin(6)
            .x_label_area_size(18)
            .y_label_area_size(34)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(|e| err(path, e))?;
        chart
            .configure_mesh()
            .x_labels(3)
            .y_labels(3)
            .label_style((FAMILY, 9))
            .disable_mesh()
            .draw()
            .map_err(|e| err(path, e))?;
        chart
            .draw_series(
                pts.iter()
                    .map(|p| Circle::new((p.0, p.1), 2, BLUE.mix(0.35).filled())),
            )
            .map_err(|e| err(path, e))?;
        let best = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        chart
            .draw_series(
                pts.iter()
                    .filter(|p| p.1 == best)
                    .map(|p| Circle::new((p.0, p.1), 5, GREEN.filled())),
            )
            .map_err(|e| err(path, e))?;
        chart
            .draw_series(
                pts.iter()
                    .filter(|p| p.2.is_pick == 1)
                    .map(|p| Cross::new((p.0, p.1), 6, RED.stroke_width(2))),
            )
            .map_err(|e| err(path, e))?;
    }
    root.present().map_err(|e| err(path, e))
}

/// A/BF and A/cuBLAS per shape: horizontal bars, one row per shape in sweep order
/// (labelled "set MxNxK"), with the 0.95 and 0.80 goal lines.
pub fn abf_png(shapes: &[ShapeRow], path: &Path) -> Result<(), String> {
    register();
    let n = shapes.len().max(1);
    let h = (90 + 20 * n as u32).max(300);
    let root = BitMapBackend::new(path, (1000, h)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let xmax = shapes
        .iter()
        .filter_map(|s| s.a_cublas)
        .fold(1.1f64, f64::max)
        .min(3.0);
    let labels: Vec<String> = shapes
        .iter()
        .map(|s| format!("{} {}x{}x{}", s.set, s.m, s.n, s.k))
        .collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "A/BF (blue) and A/cuBLAS (orange) per shape; lines at 0.95 and 0.80",
            (FAMILY, 18),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(230)
        .build_cartesian_2d(0f64..xmax, 0f64..n as f64)
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n * 2)
        .y_label_formatter(&|y| {
            // Row i spans [n-1-i, n-i): label at its middle.
            let f = y.fract();
            if (f - 0.5).abs() < 1e-6 {
                let i = n - 1 - y.floor() as usize;
                labels.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc("ratio")
        .label_style((FAMILY, 11))
        .draw()
        .map_err(|e| err(path, e))?;
    let orange = RGBColor(255, 127, 14);
    for (i, s) in shapes.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        if let Some(v) = s.a_bf {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y + 0.5), (v.min(xmax), y + 0.9)],
                    BLUE.filled(),
                )))
                .map_err(|e| err(path, e))?;
        }
        if let Some(v) = s.a_cublas {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y + 0.1), (v.min(xmax), y + 0.5)],
                    orange.filled(),
                )))
                .map_err(|e| err(path, e))?;
        }
    }
    for (x, c) in [(0.95, GREEN), (0.80, RED)] {
        chart
            .draw_series(LineSeries::new(
                vec![(x, 0.0), (x, n as f64)],
                c.stroke_width(1),
            ))
            .map_err(|e| err(path, e))?;
    }
    root.present().map_err(|e| err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::gemm::sweep::{shape_row, Planned};
    use crate::model::problem::parse_config;
    use crate::model::Problem;

    #[test]
    fn log_axes_stay_bounded_on_extreme_values() {
        assert_eq!(log_span(1.0, 10.0), (0.8, 12.5));
        for (lo, hi) in [
            (1.0, f64::INFINITY),
            (1.0, 1e308),
            (f64::NAN, f64::NAN),
            (0.0, 0.0),
            (-5.0, 1e300),
            (1e300, 1e308),
        ] {
            let (a, b) = log_span(lo, hi);
            assert!(
                a.is_finite() && b.is_finite() && a > 0.0 && b > a,
                "{lo} {hi}"
            );
            assert!(a >= LOG_AXIS_US.0 && b <= LOG_AXIS_US.1, "{lo} {hi}");
        }
    }

    #[test]
    fn plots_render() {
        let p = Problem::new(512, 512, 512, Dtype::Fp16).unwrap();
        let rows: Vec<ConfigRow> = [
            "64x64x32,g8,w4,s3",
            "128x64x32,g8,w4,s3",
            "32x32x32,g8,w4,s2",
        ]
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut r = ConfigRow::planned(
                "seed",
                &p,
                &Planned {
                    config: parse_config(s).unwrap(),
                    model_rank: i + 1,
                    predicted_cycles: 1000.0 * (i + 1) as f64,
                    predicted_us: (i + 1) as f64,
                    is_pick: i == 0,
                },
            );
            r.measured_ms = Some(0.001 * (3 - i) as f64);
            r.passed = 1;
            r
        })
        .collect();
        let s = shape_row("seed", "", &p, &rows, Some((0.001, 0.0)));
        let dir = std::env::temp_dir().join(format!("origami-plots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.png");
        let b = dir.join("b.png");
        predicted_vs_measured_png(std::slice::from_ref(&s), &rows, &a).unwrap();
        abf_png(&[s], &b).unwrap();
        assert!(std::fs::metadata(&a).unwrap().len() > 1000);
        assert!(std::fs::metadata(&b).unwrap().len() > 1000);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
