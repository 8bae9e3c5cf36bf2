//! Problem-size lists: CSV files with columns M, N, K and an optional dtype (the format of
//! `data/seed_shapes.csv`), shared by `origami-select --shapes` and the bench.

use std::path::Path;

use crate::dtype::Dtype;

use super::problem::{parse_dim, Problem};

/// A bad shape file, naming the file, row and column.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {msg}")]
pub struct ShapesError {
    pub path: String,
    pub msg: String,
}

/// One row of a shape list: the problem and its line in the file (comments and blank
/// lines count), for errors a later check finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeRow {
    pub line: usize,
    pub problem: Problem,
}

/// Read a shape list; rows without a dtype get `default_dtype`.
pub fn read_shapes(path: &Path, default_dtype: Dtype) -> Result<Vec<Problem>, ShapesError> {
    Ok(read_shape_rows(path, default_dtype)?
        .into_iter()
        .map(|r| r.problem)
        .collect())
}

/// [`read_shapes`], each problem with its line.
pub fn read_shape_rows(path: &Path, default_dtype: Dtype) -> Result<Vec<ShapeRow>, ShapesError> {
    let text = crate::input::read_text(path).map_err(|e| ShapesError {
        path: path.display().to_string(),
        msg: format!("cannot read shape list: {e}"),
    })?;
    parse_shape_rows(&text, &path.display().to_string(), default_dtype)
}

/// Parse a shape list from text; `origin` names it in errors.
pub fn parse_shapes(
    text: &str,
    origin: &str,
    default_dtype: Dtype,
) -> Result<Vec<Problem>, ShapesError> {
    Ok(parse_shape_rows(text, origin, default_dtype)?
        .into_iter()
        .map(|r| r.problem)
        .collect())
}

/// [`parse_shapes`], each problem with its line.
pub fn parse_shape_rows(
    text: &str,
    origin: &str,
    default_dtype: Dtype,
) -> Result<Vec<ShapeRow>, ShapesError> {
    let err = |msg: String| ShapesError {
        path: origin.to_string(),
        msg,
    };
    // Comments and blank lines are dropped here, each kept row remembering its line in the
    // file, so that errors name the line a user sees in an editor.
    let kept: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| (i + 1, l))
        .collect();
    let line_of = |record: u64| {
        usize::try_from(record)
            .ok()
            .and_then(|r| kept.get(r))
            .map_or(0, |(line, _)| *line)
    };
    let body: Vec<&str> = kept.iter().map(|(_, l)| *l).collect();
    let body = body.join("\n");
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(body.as_bytes());
    let headers = rdr
        .headers()
        .map_err(|e| err(format!("bad header: {e}")))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h.eq_ignore_ascii_case(name));
    let (cm, cn, ck) = match (col("M"), col("N"), col("K")) {
        (Some(m), Some(n), Some(k)) => (m, n, k),
        _ => {
            return Err(err(format!(
                "missing column: the header must name M, N and K (got: {})",
                quoted_header(&headers)
            )))
        }
    };
    let cd = col("dtype");
    let mut out = Vec::new();
    for rec in rdr.records() {
        // The file's own line number: comments and blank lines count.
        let rec = rec.map_err(|e| {
            let what = crate::input::csv_row_problem(&e);
            match e.position() {
                Some(p) => err(format!("line {}: {what}", line_of(p.record()))),
                None => err(what),
            }
        })?;
        let line = rec.position().map_or(0, |p| line_of(p.record()));
        crate::input::single_line_fields(&rec).map_err(|e| err(format!("line {line}: {e}")))?;
        let field = |c: usize, name: &str| -> Result<u64, ShapesError> {
            let v = rec.get(c).unwrap_or("");
            parse_dim(name, v).map_err(|e| err(format!("line {line}: {e}")))
        };
        let dtype = match cd.and_then(|c| rec.get(c)).filter(|s| !s.is_empty()) {
            Some(s) => s
                .parse::<Dtype>()
                .map_err(|e| err(format!("line {line}: column dtype: {e}")))?,
            None => default_dtype,
        };
        out.push(ShapeRow {
            line,
            problem: Problem {
                m: field(cm, "M")?,
                n: field(cn, "N")?,
                k: field(ck, "K")?,
                dtype,
            },
        });
    }
    if out.is_empty() {
        return Err(err("no shapes (the file has a header but no rows)".into()));
    }
    Ok(out)
}

/// The header as an error quotes it: escaped, at most 80 characters.
fn quoted_header(headers: &csv::StringRecord) -> String {
    let text: String = headers
        .iter()
        .collect::<Vec<_>>()
        .join(",")
        .escape_debug()
        .collect();
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_with_and_without_dtype() {
        let v = parse_shapes("M,N,K,dtype\n1,2,3,bf16\n4,5,6,\n", "t", Dtype::Fp16).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].dtype, Dtype::Bf16);
        assert_eq!((v[1].m, v[1].n, v[1].k, v[1].dtype), (4, 5, 6, Dtype::Fp16));
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse_shapes("M,N,K\n1,2,x\n", "t.csv", Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.csv") && e.contains("line 2") && e.contains("K"),
            "{e}"
        );
        let e = parse_shapes("M,N\n1,2\n", "t.csv", Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing column"), "{e}");
        let e = parse_shapes("M,N,K,dtype\n1,2,3,fp64\n", "t.csv", Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert!(e.contains("fp64"), "{e}");
        assert!(parse_shapes("M,N,K\n", "t.csv", Dtype::Fp16).is_err());
    }

    #[test]
    fn a_quoted_header_with_line_breaks_is_quoted_on_one_line() {
        let e = parse_shapes("\"M,N,K\n1,2,3\n4,5,6\n", "c.csv", Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains("missing column"), "{e}");
    }

    #[test]
    fn a_field_spanning_lines_is_refused_on_one_line() {
        let e = parse_shapes("M,N,K\n1,2,\"3\n4,5,6\"\n", "c.csv", Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "c.csv: line 2: a quoted field spans several lines (an unclosed quote?)"
        );
    }

    #[test]
    fn a_short_row_names_its_own_line_once() {
        let e = parse_shapes("M,N,K\n# a\n1,2,3\n4,5\n", "c.csv", Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "c.csv: line 4: 2 fields, but the header has 3");
    }

    #[test]
    fn error_lines_count_comments_and_blank_lines() {
        let e = parse_shapes("M,N,K\n# a\n# b\n\n128,4096,x\n", "c.csv", Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 5"), "{e}");
        let e = parse_shapes("M,N,K\n1,2,3\n\n# c\n1,2,0\n", "c.csv", Dtype::Fp16)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 5"), "{e}");
    }

    #[test]
    fn rows_keep_their_lines() {
        let rows = parse_shape_rows("M,N,K\n# c\n1,2,8\n\n3,4,16\n", "t", Dtype::Fp16).unwrap();
        assert_eq!(rows.iter().map(|r| r.line).collect::<Vec<_>>(), [3, 5]);
        assert_eq!(rows[1].problem.k, 16);
    }

    #[test]
    fn seed_shapes_file_parses() {
        let text = include_str!("../../../../data/seed_shapes.csv");
        let v = parse_shapes(text, "seed_shapes.csv", Dtype::Fp16).unwrap();
        assert_eq!(v.len(), 23);
    }
}
