//! The embedded plot font (DejaVu Sans, assets/fonts, Bitstream Vera license), registered
//! once with plotters under [`FAMILY`]: plotters without default features has no system
//! font lookup. Shared by every plot of `report` (src/perf/plot.rs registers its own copy).

use std::sync::Once;

use plotters::style::FontStyle;

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// Font family name to use in plotters text styles.
pub const FAMILY: &str = "origami-report-sans";
static REGISTER: Once = Once::new();

/// Register the font (idempotent).
pub fn register() {
    REGISTER.call_once(|| {
        // The font is embedded and known good; a failure would only lose text.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}
