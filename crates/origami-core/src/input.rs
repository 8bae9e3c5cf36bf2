//! Reading the tools' input files (hardware files, shape lists, model CSVs, perf
//! descriptions, sweep folders' CSV and JSON files): only regular files are opened, and no
//! more than [`MAX_INPUT_BYTES`] is read, so a FIFO, `/dev/zero` or a runaway file is a
//! one-line error instead of a hang or unbounded memory. Every reader goes through
//! [`read_text`].

use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// The most bytes any input file may hold: 64 MiB (a shape list of about 3 million rows).
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// The text of the regular file at `path`, at most [`MAX_INPUT_BYTES`] long. A FIFO, a
/// device, a directory or a longer file is an `InvalidInput` error naming the reason; a
/// missing file keeps its `NotFound` kind.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    read_text_limited(path, MAX_INPUT_BYTES)
}

/// [`read_text`] with another limit (tests).
pub fn read_text_limited(path: &Path, limit: u64) -> std::io::Result<String> {
    // Checked before opening: opening a FIFO for reading blocks until a writer comes.
    regular(&std::fs::metadata(path)?)?;
    let file = std::fs::File::open(path)?;
    regular(&file.metadata()?)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("larger than the {} limit on input files", size_text(limit)),
        ));
    }
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::InvalidData, "not UTF-8 text"))
}

fn regular(meta: &std::fs::Metadata) -> std::io::Result<()> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a device or a directory): give a file",
        ))
    }
}

/// `64 MiB`, or bytes when the limit is not a whole number of MiB.
fn size_text(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// A CSV record whose quoted field holds a line break (an unclosed quote, most often)
/// is refused: every later message about the row would otherwise span several lines.
pub fn single_line_fields(rec: &csv::StringRecord) -> Result<(), String> {
    if rec.iter().any(|f| f.contains(['\n', '\r'])) {
        return Err("a quoted field spans several lines (an unclosed quote?)".into());
    }
    Ok(())
}

/// What is wrong with a CSV row, without the reader's own position (callers name the
/// file's line themselves, which can differ when comments are dropped first).
pub fn csv_row_problem(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields, but the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_within_the_limit_is_read() {
        let dir = std::env::temp_dir().join(format!("origami-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.csv");
        std::fs::write(&p, "M,N,K\n1,2,3\n").unwrap();
        assert_eq!(read_text(&p).unwrap(), "M,N,K\n1,2,3\n");
        let e = read_text_limited(&p, 4).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert!(e.to_string().contains("4 bytes limit"), "{e}");
        let e = read_text(&dir).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_text(&dir.join("absent")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert_eq!(size_text(MAX_INPUT_BYTES), "64 MiB");
    }
}
