//! The boundary between C callers and Rust: every exported function runs its body through
//! [`guard`], which empties the last error, catches any panic (none may unwind into C) and
//! turns a failure into its status code and last-error message; the argument helpers turn
//! a NULL pointer or a string that is not UTF-8 into a failure rather than a crash.

use std::ffi::CStr;
use std::os::raw::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use origami_core::exit::ToExit;

use crate::last_error;
use crate::status::OrigamiStatus;

/// A failed call: its status and one-line message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub status: OrigamiStatus,
    pub msg: String,
}

impl Failure {
    pub fn new(status: OrigamiStatus, msg: impl Into<String>) -> Failure {
        Failure {
            status,
            msg: msg.into(),
        }
    }

    pub fn null(name: &str) -> Failure {
        Failure::new(OrigamiStatus::NullArgument, format!("{name}: NULL pointer"))
    }

    pub fn bad(msg: impl Into<String>) -> Failure {
        Failure::new(OrigamiStatus::BadInput, msg)
    }
}

impl<E: ToExit + std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::new(e.exit_code().into(), e.to_string())
    }
}

/// Run one call's body: OK, or the failure's status with its message left as this
/// thread's last error; a panic becomes `Internal`.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> OrigamiStatus {
    last_error::clear();
    let failure = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return OrigamiStatus::Ok,
        Ok(Err(f)) => f,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Failure::new(
                OrigamiStatus::Internal,
                format!("internal error (panic caught at the C boundary): {what}"),
            )
        }
    };
    last_error::set(&failure.msg);
    failure.status
}

/// A required string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives the call.
pub(crate) unsafe fn text<'a>(p: *const c_char, name: &str) -> Result<&'a str, Failure> {
    optional_text(p, name)?.ok_or_else(|| Failure::null(name))
}

/// A string argument that may be NULL (`None`).
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn optional_text<'a>(
    p: *const c_char,
    name: &str,
) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    let bytes = CStr::from_ptr(p).to_bytes();
    std::str::from_utf8(bytes).map(Some).map_err(|e| {
        Failure::bad(format!(
            "{name}: not UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// A required pointer to one value the call writes.
///
/// # Safety
/// `p` is NULL or points to a writable, aligned `T`.
pub(crate) unsafe fn writable<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T, Failure> {
    p.as_mut().ok_or_else(|| Failure::null(name))
}

/// A caller-owned array of `len` values (NULL allowed only when `len` is 0).
///
/// # Safety
/// `p` points to `len` readable values, or `len` is 0.
pub(crate) unsafe fn slice<'a, T>(p: *const T, len: usize, name: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::null(name));
    }
    Ok(std::slice::from_raw_parts(p, len))
}

/// A caller-owned writable array of `len` values (NULL allowed only when `len` is 0).
///
/// # Safety
/// `p` points to `len` writable values, or `len` is 0.
pub(crate) unsafe fn slice_mut<'a, T>(
    p: *mut T,
    len: usize,
    name: &str,
) -> Result<&'a mut [T], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Failure::null(name));
    }
    Ok(std::slice::from_raw_parts_mut(p, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_stays_on_this_side() {
        let status = guard(|| panic!("boom"));
        assert_eq!(status, OrigamiStatus::Internal);
        let msg = String::from_utf8(last_error::bytes_with_nul()).unwrap();
        assert!(msg.contains("boom"), "{msg}");
        assert_eq!(guard(|| Ok(())), OrigamiStatus::Ok);
        assert_eq!(last_error::bytes_with_nul(), b"\0");
    }

    #[test]
    fn null_and_bad_strings_are_failures() {
        unsafe {
            assert_eq!(
                text(std::ptr::null(), "dtype").unwrap_err(),
                Failure::null("dtype")
            );
            let bad = b"f\xffp16\0";
            let e = text(bad.as_ptr().cast(), "dtype").unwrap_err();
            assert_eq!(e.status, OrigamiStatus::BadInput);
            assert_eq!(e.msg, "dtype: not UTF-8 (invalid byte at offset 1)");
            assert_eq!(optional_text(std::ptr::null(), "gpu").unwrap(), None);
            assert!(slice::<u8>(std::ptr::null(), 0, "s").unwrap().is_empty());
            assert!(slice::<u8>(std::ptr::null(), 1, "s").is_err());
        }
    }
}
