//! Writing to stdout without a panic: every tool writes its output, `--help` and
//! `--version` included, through [`write_stdout`], so a closed pipe or a full disk is a
//! one-line error and exit 1 (`Failure::output`), never exit 101 and never exit 0 with the
//! output lost.

use std::io::Write;

use crate::exit::Failure;

/// A number as an error message shows it: as Rust prints it when that is short, else in
/// scientific notation (a subnormal or 1e300 would print hundreds of digits).
pub fn shown(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() <= 24 {
        plain
    } else {
        format!("{v:e}")
    }
}

/// Write `text` to stdout and flush it.
pub fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failure::output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_numbers_show_in_scientific_notation() {
        assert_eq!(shown(0.5), "0.5");
        assert_eq!(shown(-1.0), "-1");
        assert_eq!(shown(f64::NAN), "NaN");
        assert_eq!(shown(1e300), "1e300");
        assert_eq!(shown(-1.617940027608192e-300), "-1.617940027608192e-300");
        assert_eq!(shown(123456.789), "123456.789");
    }
}
