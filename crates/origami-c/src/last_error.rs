//! The thread-local last error of the C ABI: every call that can fail empties it on entry
//! and leaves its one-line message there on failure, for `origami_last_error` to return
//! (valid until the next `origami_*` call on the same thread) or
//! `origami_last_error_copy` to copy into the caller's buffer.

use std::cell::RefCell;
use std::ffi::CString;

thread_local! {
    static LAST: RefCell<CString> = RefCell::new(CString::default());
}

/// The message as one line of C text: control characters (a line break that came with
/// the input a message quotes, a NUL) are written escaped, as the tools print them.
pub(crate) fn one_line(msg: &str) -> CString {
    let mut out = String::with_capacity(msg.len());
    for c in msg.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    // No control character (NUL included) is left.
    CString::new(out).unwrap_or_default()
}

/// Leave `msg` as this thread's last error.
pub(crate) fn set(msg: &str) {
    let text = one_line(msg);
    // After the thread's locals are gone (a call from a thread destructor) there is
    // nowhere to keep it; the status alone tells.
    let _ = LAST.try_with(|l| *l.borrow_mut() = text);
}

/// Empty this thread's last error.
pub(crate) fn clear() {
    let _ = LAST.try_with(|l| {
        let mut l = l.borrow_mut();
        if !l.as_bytes().is_empty() {
            *l = CString::default();
        }
    });
}

/// The message's bytes with their NUL (for copying).
pub(crate) fn bytes_with_nul() -> Vec<u8> {
    LAST.try_with(|l| l.borrow().as_bytes_with_nul().to_vec())
        .unwrap_or_else(|_| vec![0])
}

/// A pointer to this thread's message, valid until the next call that sets or clears it.
pub(crate) fn as_ptr() -> *const std::os::raw::c_char {
    LAST.try_with(|l| l.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line() {
        assert_eq!(one_line("plain").to_str().unwrap(), "plain");
        assert_eq!(one_line("a\nb\0c").to_str().unwrap(), "a\\nb\\u{0}c");
        set("x\ty");
        assert_eq!(bytes_with_nul(), b"x\\ty\0");
        clear();
        assert_eq!(bytes_with_nul(), b"\0");
    }
}
