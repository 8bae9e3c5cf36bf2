//! S-curve plot of the warp-specialized persistent GEMM model: the ratio predicted /
//! measured of every row, sorted, with the 1.0 line and the +-10 % band; points coloured by
//! input dtype. PNG through plotters with an embedded font (DejaVu Sans, assets/fonts,
//! Bitstream Vera license).

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

use super::table::OutputRow;
use super::PerfError;

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
const FAMILY: &str = "origami-predict-sans";
static REGISTER: Once = Once::new();

fn register() {
    REGISTER.call_once(|| {
        // The font is embedded and known good; a failure here would only lose text.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn plot_err(path: &Path, e: impl std::fmt::Display) -> PerfError {
    PerfError::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Writes the s-curve PNG of the rows that have a measurement; returns how many points.
pub fn scurve_png(rows: &[OutputRow], title: &str, path: &Path) -> Result<usize, PerfError> {
    register();
    let mut pts: Vec<(f64, &str)> = rows
        .iter()
        .filter_map(|r| r.ratio.map(|x| (x, r.dtype.as_str())))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut dtypes: Vec<&str> = pts.iter().map(|p| p.1).collect();
    dtypes.sort();
    dtypes.dedup();
    let n = pts.len();
    let ymax = pts.iter().map(|p| p.0).fold(1.2f64, f64::max).min(10.0) * 1.05;

    let root = BitMapBackend::new(path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..(n.max(1) as f64), 0f64..ymax)
        .map_err(|e| plot_err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("rows sorted by ratio")
        .y_desc("predicted / measured")
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .draw()
        .map_err(|e| plot_err(path, e))?;
    let band = RGBAColor(120, 120, 120, 0.15);
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(0.0, 0.9), (n.max(1) as f64, 1.1)],
            band.filled(),
        )))
        .map_err(|e| plot_err(path, e))?;
    chart
        .draw_series(LineSeries::new(
            vec![(0.0, 1.0), (n.max(1) as f64, 1.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(|e| plot_err(path, e))?;
    for (di, dt) in dtypes.iter().enumerate() {
        let color = PALETTE[di % PALETTE.len()];
        chart
            .draw_series(
                pts.iter()
                    .enumerate()
                    .filter(|(_, p)| p.1 == *dt)
                    .map(|(i, p)| Circle::new((i as f64 + 0.5, p.0.min(ymax)), 4, color.filled())),
            )
            .map_err(|e| plot_err(path, e))?
            .label(dt.to_string())
            .legend(move |(x, y)| Circle::new((x + 8, y), 4, color.filled()));
    }
    chart
        .configure_series_labels()
        .label_font((FAMILY, 14))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| plot_err(path, e))?;
    root.present().map_err(|e| plot_err(path, e))?;
    Ok(n)
}
