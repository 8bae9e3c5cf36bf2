//! Writing to stdout without a panic: every tool writes its output, `--help` and
//! `--version` included, through [`write_stdout`], so a closed pipe or a full disk is a
//! one-line error and exit 1 (`Failure::output`), never exit 101 and never exit 0 with the
//! output lost.

use std::io::Write;

use crate::exit::{Exit, Failure};

/// Write `text` to stdout and flush it.
pub fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failure::output)
}

/// What a clap parse error means for a tool: `Ok(exit)` when it was `--help` or
/// `--version` and the text was written (exit 0) or could not be (`tool: error: ...` on
/// stderr, exit 1); `Err(e)` for a usage error, which `usage::parse_args` reports.
pub fn clap_display(tool: &str, e: clap::Error) -> Result<Exit, clap::Error> {
    if e.use_stderr() {
        return Err(e);
    }
    Ok(match write_stdout(&e.render().to_string()) {
        Ok(()) => Exit::Ok,
        Err(f) => {
            eprintln!("{tool}: error: {}", f.msg);
            f.exit
        }
    })
}
