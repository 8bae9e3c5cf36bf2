//! The selection calls: one shape's pick, its best configs, a batch into caller-owned
//! arrays, a config's predicted time and the `--explain` document; each the engine's
//! answer (`origami_core::engine`), so the same as origami-select's for the same setup.

use std::os::raw::c_char;

use origami_core::engine::{EngineError, Pick};
use origami_core::exit::ToExit;

use crate::boundary::{guard, slice, slice_mut, text, writable, Failure};
use crate::pick::{OrigamiPick, OrigamiShape};
use crate::selector::{live, OrigamiSelector};
use crate::status::OrigamiStatus;

fn to_c(p: &Pick) -> Result<OrigamiPick, Failure> {
    OrigamiPick::from_pick(p)
}

/// The pick for one shape (M, N, K > 0) of one input type (`fp16`, `bf16`, `fp8`, ...),
/// as origami-select prints it. Answers are cached per selector.
///
/// # Safety
/// `selector` is NULL or live; `dtype` is NULL or NUL-terminated; `out` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn origami_select(
    selector: *const OrigamiSelector,
    m: u64,
    n: u64,
    k: u64,
    dtype: *const c_char,
    out: *mut OrigamiPick,
) -> OrigamiStatus {
    guard(|| {
        let s = live(selector)?;
        let dtype = text(dtype, "dtype")?;
        let slot = writable(out, "out")?;
        *slot = to_c(&s.engine.select(m, n, k, dtype)?)?;
        Ok(())
    })
}

/// The `capacity` best configs of the chosen family for one shape, best first (as
/// origami-select's `--top`), into `out[0..*written]`; fewer when the family has fewer
/// feasible configs. `capacity` 0 is bad input, as `--top 0` is.
///
/// # Safety
/// `out` points to `capacity` writable picks; `written` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn origami_select_top(
    selector: *const OrigamiSelector,
    m: u64,
    n: u64,
    k: u64,
    dtype: *const c_char,
    out: *mut OrigamiPick,
    capacity: usize,
    written: *mut usize,
) -> OrigamiStatus {
    guard(|| {
        let s = live(selector)?;
        let dtype = text(dtype, "dtype")?;
        let written = writable(written, "written")?;
        *written = 0;
        let picks = slice_mut(out, capacity, "out")?;
        let ranked = s.engine.rank(m, n, k, dtype, capacity)?;
        for (slot, p) in picks.iter_mut().zip(&ranked) {
            *slot = to_c(p)?;
            *written += 1;
        }
        Ok(())
    })
}

/// The picks of `count` shapes of one type: `out[i]` and `statuses[i]` for `shapes[i]`
/// (a failed row holds zeros and its status; the others are picked all the same).
/// Returns OK when every row is; otherwise the first failed row's status, with
/// `shape i (MxNxK): message` as the last error. `statuses` may be NULL. Not cached.
///
/// # Safety
/// `shapes` points to `count` readable shapes; `out` to `count` writable picks;
/// `statuses` is NULL or points to `count` writable int32_t.
#[no_mangle]
pub unsafe extern "C" fn origami_select_batch(
    selector: *const OrigamiSelector,
    shapes: *const OrigamiShape,
    count: usize,
    dtype: *const c_char,
    out: *mut OrigamiPick,
    statuses: *mut i32,
) -> OrigamiStatus {
    guard(|| {
        let s = live(selector)?;
        let dtype = text(dtype, "dtype")?;
        let shapes = slice(shapes, count, "shapes")?;
        let picks = slice_mut(out, count, "out")?;
        let mut statuses = if statuses.is_null() {
            None
        } else {
            Some(slice_mut(statuses, count, "statuses")?)
        };
        let triples: Vec<(u64, u64, u64)> = shapes.iter().map(|s| (s.m, s.n, s.k)).collect();
        let results = s.engine.select_batch(&triples, dtype);
        let mut first: Option<Failure> = None;
        for (i, r) in results.iter().enumerate() {
            let row = r.as_ref().map_err(engine_failure).and_then(to_c);
            let status = match row {
                Ok(p) => {
                    picks[i] = p;
                    OrigamiStatus::Ok
                }
                Err(f) => {
                    picks[i] = OrigamiPick::ZERO;
                    let status = f.status;
                    if first.is_none() {
                        let sh = shapes[i];
                        first = Some(Failure::new(
                            status,
                            format!("shape {i} ({}x{}x{}): {}", sh.m, sh.n, sh.k, f.msg),
                        ));
                    }
                    status
                }
            };
            if let Some(st) = statuses.as_deref_mut() {
                st[i] = status.code();
            }
        }
        first.map_or(Ok(()), Err)
    })
}

/// The predicted microseconds of one config (`128x128x64,g8,w4,s3`, switches as words
/// after it: `...,s3,flatten`) for one shape, by the first family of the selector's set
/// whose space holds it (origami-select's config syntax).
///
/// # Safety
/// Strings are NULL or NUL-terminated; `us` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn origami_score(
    selector: *const OrigamiSelector,
    m: u64,
    n: u64,
    k: u64,
    dtype: *const c_char,
    config: *const c_char,
    us: *mut f64,
) -> OrigamiStatus {
    guard(|| {
        let s = live(selector)?;
        let dtype = text(dtype, "dtype")?;
        let config = text(config, "config")?;
        let slot = writable(us, "us")?;
        *slot = s.engine.score(m, n, k, dtype, config)?;
        Ok(())
    })
}

/// origami-select's `--explain --format json` document for one shape, NUL-terminated,
/// into `buf[0..capacity]`. `*needed` gets the bytes it takes (NUL included); when that
/// is more than `capacity` (or `buf` is NULL) nothing is written and the call returns
/// BUFFER_TOO_SMALL: call again with a buffer of `*needed` bytes.
///
/// # Safety
/// `buf` is NULL or points to `capacity` writable bytes; `needed` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn origami_explain(
    selector: *const OrigamiSelector,
    m: u64,
    n: u64,
    k: u64,
    dtype: *const c_char,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> OrigamiStatus {
    guard(|| {
        let s = live(selector)?;
        let dtype = text(dtype, "dtype")?;
        let needed = writable(needed, "needed")?;
        let doc = s.engine.explain(m, n, k, dtype)?;
        copy_text(doc.as_bytes(), buf, capacity, needed)
    })
}

/// Copy `bytes` and a NUL into a caller's buffer, or say how much is needed.
///
/// # Safety
/// `buf` is NULL or points to `capacity` writable bytes.
pub(crate) unsafe fn copy_text(
    bytes: &[u8],
    buf: *mut c_char,
    capacity: usize,
    needed: &mut usize,
) -> Result<(), Failure> {
    *needed = bytes.len() + 1;
    if buf.is_null() || capacity < *needed {
        return Err(Failure::new(
            OrigamiStatus::BufferTooSmall,
            format!("buffer of {capacity} bytes; {} needed", *needed),
        ));
    }
    let dst = std::slice::from_raw_parts_mut(buf.cast::<u8>(), *needed);
    dst[..bytes.len()].copy_from_slice(bytes);
    dst[bytes.len()] = 0;
    Ok(())
}

/// An engine error (by reference) as a failure: its status and message.
fn engine_failure(e: &EngineError) -> Failure {
    Failure::new(e.exit_code().into(), e.to_string())
}
