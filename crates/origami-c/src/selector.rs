//! The opaque selector handle: an `origami_core::engine::Engine` set up once (hardware,
//! family, model, as origami-select's `--gpu`, `TRITONBLAS_HW_PARAMS`, `--family`,
//! `--model`, `--no-fitted`), shared by any number of threads, freed once. Options come
//! in a struct whose first field is its size, so that a caller built against an older
//! header keeps working when fields are added.

use std::ffi::CString;
use std::mem::{offset_of, size_of};
use std::os::raw::c_char;
use std::path::PathBuf;
use std::ptr::addr_of;

use origami_core::engine::{Engine, EngineRequest};

use crate::boundary::{guard, optional_text, text, writable, Failure};
use crate::status::OrigamiStatus;

/// A set-up selection. Thread-safe: any number of threads may call the selection
/// functions on one selector at once; only `origami_selector_free` must not overlap
/// another call on it.
pub struct OrigamiSelector {
    pub(crate) engine: Engine,
    family: CString,
    notice: Option<CString>,
}

/// How a selector is set up. Fill it with `origami_options_init`, then set the fields
/// wanted; `struct_size` says which fields the caller knows of.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct OrigamiOptions {
    /// `sizeof(origami_options)` as the caller was compiled (set by `origami_options_init`).
    pub struct_size: usize,
    /// A hardware file, full or flat (what `TRITONBLAS_HW_PARAMS` names for the CLI);
    /// NULL: none (the environment is not read).
    pub hw_file: *const c_char,
    /// A GPU preset (`h100-sxm`, `h200`, `a100`, ...); NULL: the default preset, as the
    /// CLI does when it finds no GPU.
    pub gpu: *const c_char,
    /// A family (`triton`, `triton-tma`, `origami`, ...) or set (`triton-auto`); NULL or
    /// empty: `triton`.
    pub family: *const c_char,
    /// Model variant (`origami`, `seed`); NULL or empty: `origami`.
    pub model: *const c_char,
    /// Leave out the family's fitted constants (`--no-fitted`).
    pub no_fitted: bool,
    /// Picks the selector caches: negative for the default (4096), 0 for no cache.
    pub cache_entries: i64,
    /// Leave out the family's learned correction (`--no-correction`); a caller compiled
    /// before this field (a smaller `struct_size`) keeps the default, false.
    pub no_correction: bool,
}

impl OrigamiOptions {
    /// The defaults.
    pub const DEFAULT: OrigamiOptions = OrigamiOptions {
        struct_size: size_of::<OrigamiOptions>(),
        hw_file: std::ptr::null(),
        gpu: std::ptr::null(),
        family: std::ptr::null(),
        model: std::ptr::null(),
        no_fitted: false,
        cache_entries: -1,
        no_correction: false,
    };
}

/// The fields of `*p` that its `struct_size` covers; the others keep their defaults.
///
/// # Safety
/// `p` points to at least `struct_size` readable bytes laid out as `OrigamiOptions`.
unsafe fn read_options(p: *const OrigamiOptions) -> Result<OrigamiOptions, Failure> {
    let size = addr_of!((*p).struct_size).read();
    let full = size_of::<OrigamiOptions>();
    if size < size_of::<usize>() {
        return Err(Failure::bad(format!(
            "options.struct_size: {size} is too small (set it with origami_options_init)"
        )));
    }
    if size > full {
        return Err(Failure::bad(format!(
            "options.struct_size: {size} is larger than this library's {full} (a header newer than the library?)"
        )));
    }
    let mut o = OrigamiOptions::DEFAULT;
    macro_rules! take {
        ($field:ident) => {
            if size >= offset_of!(OrigamiOptions, $field) + size_of_val(&o.$field) {
                o.$field = addr_of!((*p).$field).read();
            }
        };
    }
    take!(hw_file);
    take!(gpu);
    take!(family);
    take!(model);
    take!(no_fitted);
    take!(cache_entries);
    take!(no_correction);
    Ok(o)
}

/// The engine request of checked options.
unsafe fn request(o: &OrigamiOptions) -> Result<EngineRequest, Failure> {
    let family = optional_text(o.family, "family")?.unwrap_or("");
    let model = optional_text(o.model, "model")?.unwrap_or("");
    Ok(EngineRequest {
        device: None,
        gpu: optional_text(o.gpu, "gpu")?.map(str::to_string),
        hw_file: optional_text(o.hw_file, "hw_file")?.map(PathBuf::from),
        family: family.to_string(),
        model: model.to_string(),
        no_fitted: o.no_fitted,
        no_correction: o.no_correction,
        cache_entries: usize::try_from(o.cache_entries).ok(),
        calibration_only: false,
    })
}

fn new_selector(req: &EngineRequest) -> Result<Box<OrigamiSelector>, Failure> {
    let engine = Engine::new(req)?;
    let family = CString::new(engine.family()).unwrap_or_default();
    let notice = engine
        .notice()
        .map(|n| CString::new(n.replace('\0', " ")).unwrap_or_default());
    Ok(Box::new(OrigamiSelector {
        engine,
        family,
        notice,
    }))
}

/// Fill `*options` with the defaults (and its `struct_size`).
///
/// # Safety
/// `options` is NULL or points to a writable `origami_options`.
#[no_mangle]
pub unsafe extern "C" fn origami_options_init(options: *mut OrigamiOptions) -> OrigamiStatus {
    guard(|| {
        *writable(options, "options")? = OrigamiOptions::DEFAULT;
        Ok(())
    })
}

/// Set up a selector: `hw_file` and `gpu` may be NULL (see `origami_options`), `family`
/// must not be (an empty string means `triton`). On success `*out` holds a handle to free
/// with `origami_selector_free`; on failure `*out` is NULL and the last error says why
/// (origami-select's message: `--family: unknown family 'x' (known: ...)`).
///
/// # Safety
/// Strings are NULL or NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn origami_selector_new(
    hw_file: *const c_char,
    gpu: *const c_char,
    family: *const c_char,
    out: *mut *mut OrigamiSelector,
) -> OrigamiStatus {
    guard(|| {
        let slot = writable(out, "out")?;
        *slot = std::ptr::null_mut();
        text(family, "family")?;
        let o = OrigamiOptions {
            hw_file,
            gpu,
            family,
            ..OrigamiOptions::DEFAULT
        };
        *slot = Box::into_raw(new_selector(&request(&o)?)?);
        Ok(())
    })
}

/// Set up a selector from options (model, `no_fitted` and the cache size too).
///
/// # Safety
/// `options` is NULL or points to an `origami_options` filled by `origami_options_init`;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn origami_selector_new_with(
    options: *const OrigamiOptions,
    out: *mut *mut OrigamiSelector,
) -> OrigamiStatus {
    guard(|| {
        let slot = writable(out, "out")?;
        *slot = std::ptr::null_mut();
        if options.is_null() {
            return Err(Failure::null("options"));
        }
        let o = read_options(options)?;
        *slot = Box::into_raw(new_selector(&request(&o)?)?);
        Ok(())
    })
}

/// Free a selector (NULL is ignored). No other call on it may be running or follow.
///
/// # Safety
/// `selector` is NULL or a handle from `origami_selector_new*` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn origami_selector_free(selector: *mut OrigamiSelector) {
    if !selector.is_null() {
        // Dropping plain data cannot unwind; the guard is there all the same.
        let _ = guard(|| {
            drop(Box::from_raw(selector));
            Ok(())
        });
    }
}

/// The family or set the selector picks for (`triton`, `triton-auto`, ...), valid while
/// the selector lives; NULL for a NULL selector.
///
/// # Safety
/// `selector` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn origami_selector_family(
    selector: *const OrigamiSelector,
) -> *const c_char {
    selector
        .as_ref()
        .map_or(std::ptr::null(), |s| s.family.as_ptr())
}

/// The line origami-select prints on stderr about where the hardware numbers come from
/// (the default preset, a hardware file), or NULL when it prints none. Valid while the
/// selector lives.
///
/// # Safety
/// `selector` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn origami_selector_notice(
    selector: *const OrigamiSelector,
) -> *const c_char {
    selector
        .as_ref()
        .and_then(|s| s.notice.as_ref())
        .map_or(std::ptr::null(), |n| n.as_ptr())
}

/// The selector behind a handle argument.
///
/// # Safety
/// `p` is NULL or a live handle.
pub(crate) unsafe fn live<'a>(p: *const OrigamiSelector) -> Result<&'a OrigamiSelector, Failure> {
    p.as_ref().ok_or_else(|| Failure::null("selector"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_caller_gets_defaults_for_the_fields_it_does_not_know() {
        let gpu = c"h200";
        let mut o = OrigamiOptions {
            gpu: gpu.as_ptr(),
            no_fitted: true,
            cache_entries: 7,
            ..OrigamiOptions::DEFAULT
        };
        o.struct_size = offset_of!(OrigamiOptions, no_fitted);
        let r = unsafe { read_options(&o) }.unwrap();
        assert_eq!(r.gpu, gpu.as_ptr());
        assert!(!r.no_fitted);
        assert_eq!(r.cache_entries, -1);
        o.struct_size = size_of::<OrigamiOptions>() + 8;
        assert_eq!(
            unsafe { read_options(&o) }.unwrap_err().status,
            OrigamiStatus::BadInput
        );
        o.struct_size = 0;
        assert!(unsafe { read_options(&o) }.is_err());
    }

    #[test]
    fn the_cache_size_follows_the_sign() {
        let mut o = OrigamiOptions::DEFAULT;
        assert_eq!(unsafe { request(&o) }.unwrap().cache_entries, None);
        o.cache_entries = 0;
        assert_eq!(unsafe { request(&o) }.unwrap().cache_entries, Some(0));
    }
}
