//! `origami-select`'s job as a library: the request checked in the order the tool reports
//! errors (input type, family, model, `--top`, the shapes, whether the family's kernel can
//! run each of them, then the hardware tiers and constants), one selector per input type,
//! and each shape's selection handed to a report writer as soon as it is made
//! (`report::selection`).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::dtype::{Dtype, UnknownDtype};
use crate::exit::{Exit, ToExit};
use crate::hw::DeviceProps;
use crate::model::problem::{parse_dim, DimError};
use crate::model::shapes::{read_shape_rows, ShapesError};
use crate::model::{Problem, Selector};
use crate::report::selection::{BatchRow, Listing, SelectionReport, SelectionWriter};
use crate::setup::{
    family_named, setup_announcing, variant_named, Setup, SetupError, SetupRequest,
};

/// The input types the selector ranks configs for.
pub const SELECT_DTYPES: [Dtype; 4] = [Dtype::Fp16, Dtype::Bf16, Dtype::Fp8E4m3, Dtype::Fp32];

/// Why a pick could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum PickError {
    #[error("--dtype: {0}")]
    Dtype(#[from] UnknownDtype),
    #[error("--dtype: {0} is not supported by origami-select (use fp16, bf16, fp8, fp32)")]
    UnsupportedDtype(Dtype),
    #[error("--top: must be at least 1")]
    NoTop,
    #[error("give either M N K or --shapes FILE, not both")]
    SizesAndShapes,
    #[error("expected three sizes M N K (or --shapes FILE.csv); see --help")]
    MissingSizes,
    #[error(transparent)]
    Size(#[from] DimError),
    #[error("--shapes {0}")]
    Shapes(#[from] ShapesError),
    #[error("--shapes {}: {}", path.display(), PickError::UnsupportedDtype(*dtype))]
    ShapeDtype { path: PathBuf, dtype: Dtype },
    /// The family's kernel cannot run the shape (`KernelFamily::problem_violation`).
    #[error("--family {family}: {reason}")]
    Unrunnable {
        family: &'static str,
        reason: String,
    },
    /// A row of the shape list the family's kernel cannot run: the whole list is refused.
    #[error("--shapes {}: line {line}: --family {family}: {reason}", path.display())]
    UnrunnableRow {
        path: PathBuf,
        line: usize,
        family: &'static str,
        reason: String,
    },
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Score(#[from] crate::model::NoFiniteScore),
    #[error("writing output: {0}")]
    Output(#[from] io::Error),
}

impl ToExit for PickError {
    /// Bad input, but for a failed write (run-time failure).
    fn exit_code(&self) -> Exit {
        match self {
            PickError::Setup(e) => e.exit_code(),
            PickError::Output(_) => Exit::Runtime,
            _ => Exit::BadInput,
        }
    }
}

/// `d` if the selector ranks configs for it.
pub fn supported_dtype(d: Dtype) -> Result<Dtype, PickError> {
    if SELECT_DTYPES.contains(&d) {
        Ok(d)
    } else {
        Err(PickError::UnsupportedDtype(d))
    }
}

/// What `origami-select` is asked, as given on its command line.
#[derive(Debug, Clone)]
pub struct PickRequest {
    /// M, N and K as typed (one shape), or none with `shapes`.
    pub sizes: [Option<String>; 3],
    /// A shape list (batch mode).
    pub shapes: Option<PathBuf>,
    /// Input type of the shape, and of the list's rows without one.
    pub dtype: String,
    /// A preset by name instead of the GPU found.
    pub gpu: Option<String>,
    /// The override file (`TRITONBLAS_HW_PARAMS`).
    pub override_file: Option<PathBuf>,
    pub family: String,
    pub model: String,
    pub no_fitted: bool,
    /// Which ranked configs a single shape lists.
    pub listing: Listing,
    /// Add the `--explain` walk-through to a single shape's report.
    pub explain: bool,
}

/// A checked request: the shapes and the model set up for them.
pub struct PickJob {
    pub problems: Vec<Problem>,
    pub setup: Setup,
    /// One row per shape rather than a full report.
    pub batch: bool,
    pub listing: Listing,
    pub explain: bool,
}

impl PickRequest {
    /// Check the request and set up the model. `detect` is asked for the GPU only when no
    /// preset is named; `notice` gets the default-preset notice when there is one.
    pub fn prepare(
        &self,
        detect: impl FnOnce() -> Option<DeviceProps>,
        notice: impl FnOnce(&str),
    ) -> Result<PickJob, PickError> {
        let dtype = supported_dtype(self.dtype.parse::<Dtype>()?)?;
        let family = family_named(&self.family)?;
        variant_named(&self.model)?;
        if self.listing.top == 0 {
            return Err(PickError::NoTop);
        }
        let rows = self.problems(dtype)?;
        for (line, p) in &rows {
            if let Some(reason) = family.problem_violation(p) {
                let family = family.name();
                return Err(match (&self.shapes, line) {
                    (Some(path), Some(line)) => PickError::UnrunnableRow {
                        path: path.clone(),
                        line: *line,
                        family,
                        reason,
                    },
                    _ => PickError::Unrunnable { family, reason },
                });
            }
        }
        let problems = rows.into_iter().map(|(_, p)| p).collect();
        let device = if self.gpu.is_none() { detect() } else { None };
        let request = SetupRequest {
            device,
            gpu_name: self.gpu.clone(),
            override_file: self.override_file.clone(),
            family: self.family.clone(),
            model: self.model.clone(),
            no_fitted: self.no_fitted,
        };
        Ok(PickJob {
            problems,
            setup: setup_announcing(&request, notice)?,
            batch: self.shapes.is_some(),
            listing: self.listing,
            explain: self.explain,
        })
    }

    /// The shapes asked for: the list's rows with their lines, or M N K with `dtype`.
    fn problems(&self, dtype: Dtype) -> Result<Vec<(Option<usize>, Problem)>, PickError> {
        if let Some(path) = &self.shapes {
            if self.sizes[0].is_some() {
                return Err(PickError::SizesAndShapes);
            }
            let v = read_shape_rows(path, dtype)?;
            if let Some(r) = v.iter().find(|r| !SELECT_DTYPES.contains(&r.problem.dtype)) {
                return Err(PickError::ShapeDtype {
                    path: path.clone(),
                    dtype: r.problem.dtype,
                });
            }
            return Ok(v.into_iter().map(|r| (Some(r.line), r.problem)).collect());
        }
        let [Some(m), Some(n), Some(k)] = &self.sizes else {
            return Err(PickError::MissingSizes);
        };
        Ok(vec![(
            None,
            Problem {
                m: parse_dim("M", m)?,
                n: parse_dim("N", n)?,
                k: parse_dim("K", k)?,
                dtype,
            },
        )])
    }
}

impl PickJob {
    /// Select every shape and write it with `writer` on `out` as it is selected; a
    /// walk-through the writer does not print goes to `diag`.
    pub fn write(
        &self,
        writer: &mut dyn SelectionWriter,
        out: &mut dyn Write,
        diag: &mut dyn Write,
    ) -> Result<(), PickError> {
        let mut selectors: HashMap<Dtype, Selector<'static>> = HashMap::new();
        if self.batch {
            writer.begin_batch(out)?;
        }
        for p in &self.problems {
            let s: &Selector<'static> = match selectors.entry(p.dtype) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => e.insert(self.setup.selector(p.dtype)?),
            };
            let sel = s.select(p, self.listing.all && !self.batch)?;
            if self.batch {
                writer.batch_row(out, &BatchRow::from(sel))?;
                continue;
            }
            let report =
                SelectionReport::new(sel, s, &self.setup.resolved, self.listing, self.explain);
            if let Some(w) = &report.walkthrough {
                if !writer.prints_walkthrough() {
                    // Diagnostics are best effort, like eprint! without the panic.
                    let _ = diag.write_all(w.as_bytes());
                }
            }
            writer.single(out, &report)?;
        }
        if self.batch {
            writer.end_batch(out)?;
        }
        out.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::selection::{CsvWriter, JsonWriter, TextWriter};

    fn request(sizes: [&str; 3]) -> PickRequest {
        PickRequest {
            sizes: sizes.map(|s| Some(s.to_string())),
            shapes: None,
            dtype: "fp16".into(),
            gpu: Some("h200".into()),
            override_file: None,
            family: "triton".into(),
            model: "origami".into(),
            no_fitted: false,
            listing: Listing { top: 5, all: false },
            explain: false,
        }
    }

    fn error(r: &PickRequest) -> String {
        match r.prepare(|| panic!("a preset is named"), |_| {}) {
            Ok(_) => panic!("expected an error"),
            Err(e) => {
                assert_eq!(e.exit_code(), Exit::BadInput);
                e.to_string()
            }
        }
    }

    #[test]
    fn checks_come_in_the_tools_order() {
        let mut r = request(["0", "1", "1"]);
        r.dtype = "int4".into();
        r.family = "nope".into();
        assert!(error(&r).starts_with("--dtype: unknown dtype 'int4'"));
        r.dtype = "nvfp4".into();
        assert!(error(&r).contains("not supported by origami-select"));
        r.dtype = "fp16".into();
        assert!(error(&r).starts_with("--family: unknown family"));
        r.family = "triton".into();
        r.model = "nope".into();
        r.listing.top = 0;
        assert!(error(&r).starts_with("--model: "));
        r.model = "seed".into();
        r.gpu = Some("nope".into());
        assert_eq!(error(&r), "--top: must be at least 1");
        r.listing.top = 1;
        assert!(error(&r).starts_with("M: "));
        r.sizes[0] = Some("64".into());
        assert!(error(&r).starts_with("--gpu: "));
        r.sizes[2] = None;
        assert_eq!(
            error(&r),
            "expected three sizes M N K (or --shapes FILE.csv); see --help"
        );
        r.shapes = Some("s.csv".into());
        assert_eq!(error(&r), "give either M N K or --shapes FILE, not both");
    }

    #[test]
    fn the_walkthrough_goes_where_the_writer_wants_it() {
        let mut r = request(["4096", "4096", "4096"]);
        r.explain = true;
        let mut notices = 0;
        let job = r.prepare(|| None, |_| notices += 1).unwrap();
        assert_eq!(notices, 0, "a named preset is no default");
        let (mut out, mut diag) = (Vec::new(), Vec::new());
        job.write(&mut JsonWriter::default(), &mut out, &mut diag)
            .unwrap();
        assert!(String::from_utf8_lossy(&diag).starts_with("== Hardware parameters"));
        assert!(out.starts_with(b"{"));
        let (mut out, mut diag) = (Vec::new(), Vec::new());
        job.write(&mut TextWriter, &mut out, &mut diag).unwrap();
        assert!(diag.is_empty());
        assert!(String::from_utf8_lossy(&out).starts_with("== Hardware parameters"));
    }

    #[test]
    fn the_default_preset_is_announced_and_unsupported_families_fail_at_their_dtype() {
        let mut r = request(["64", "64", "64"]);
        r.gpu = None;
        r.family = "origami".into();
        r.dtype = "fp32".into();
        let mut notice = String::new();
        let job = r.prepare(|| None, |n| notice = n.to_string()).unwrap();
        assert!(notice.starts_with("no GPU found"), "{notice}");
        let (mut out, mut diag) = (Vec::new(), Vec::new());
        let e = job.write(&mut CsvWriter, &mut out, &mut diag).unwrap_err();
        assert!(e.to_string().starts_with("--family origami: "), "{e}");
        assert_eq!(e.exit_code(), Exit::BadInput);
    }
}
