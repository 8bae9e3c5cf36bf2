//! Safe wrappers over the extern functions for the integration tests: each calls the C
//! entry point exactly as a C caller would (raw pointers, NUL-terminated strings).

#![allow(dead_code)]

use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::ptr;

use origami_c::*;

/// This thread's last error as Rust text.
pub fn last_error() -> String {
    unsafe { CStr::from_ptr(origami_last_error()) }
        .to_str()
        .unwrap()
        .to_string()
}

/// A failed call's status and message.
pub type Failed = (OrigamiStatus, String);

fn check(status: OrigamiStatus) -> Result<(), Failed> {
    match status {
        OrigamiStatus::Ok => {
            assert_eq!(last_error(), "", "a call that succeeds leaves no error");
            Ok(())
        }
        s => Err((s, last_error())),
    }
}

/// An owned selector handle.
pub struct Sel(pub *mut OrigamiSelector);

// The C interface promises a selector may be shared between threads.
unsafe impl Send for Sel {}
unsafe impl Sync for Sel {}

impl Drop for Sel {
    fn drop(&mut self) {
        unsafe { origami_selector_free(self.0) }
    }
}

pub fn cstr(s: &str) -> CString {
    CString::new(s).unwrap()
}

impl Sel {
    pub fn new(gpu: Option<&str>, family: &str) -> Result<Sel, Failed> {
        let gpu = gpu.map(cstr);
        let family = cstr(family);
        let mut out = ptr::null_mut();
        let status = unsafe {
            origami_selector_new(
                ptr::null(),
                gpu.as_ref().map_or(ptr::null(), |g| g.as_ptr()),
                family.as_ptr(),
                &mut out,
            )
        };
        check(status).map(|_| Sel(out)).inspect_err(|_| {
            assert!(out.is_null(), "a failed setup hands back no handle");
        })
    }

    pub fn select(&self, m: u64, n: u64, k: u64, dtype: &str) -> Result<OrigamiPick, Failed> {
        let d = cstr(dtype);
        let mut p = OrigamiPick::ZERO;
        check(unsafe { origami_select(self.0, m, n, k, d.as_ptr(), &mut p) })?;
        Ok(p)
    }

    pub fn top(
        &self,
        m: u64,
        n: u64,
        k: u64,
        dtype: &str,
        capacity: usize,
    ) -> Result<Vec<OrigamiPick>, Failed> {
        let d = cstr(dtype);
        let mut v = vec![OrigamiPick::ZERO; capacity];
        let mut written = usize::MAX;
        let status = unsafe {
            origami_select_top(
                self.0,
                m,
                n,
                k,
                d.as_ptr(),
                v.as_mut_ptr(),
                capacity,
                &mut written,
            )
        };
        check(status)?;
        v.truncate(written);
        Ok(v)
    }

    /// The batch's return, its picks and its per-row statuses.
    pub fn batch(
        &self,
        shapes: &[(u64, u64, u64)],
        dtype: &str,
    ) -> (Result<(), Failed>, Vec<OrigamiPick>, Vec<i32>) {
        let d = cstr(dtype);
        let shapes: Vec<OrigamiShape> = shapes
            .iter()
            .map(|&(m, n, k)| OrigamiShape { m, n, k })
            .collect();
        let mut picks = vec![OrigamiPick::ZERO; shapes.len()];
        let mut statuses = vec![-1; shapes.len()];
        let status = unsafe {
            origami_select_batch(
                self.0,
                shapes.as_ptr(),
                shapes.len(),
                d.as_ptr(),
                picks.as_mut_ptr(),
                statuses.as_mut_ptr(),
            )
        };
        (check(status), picks, statuses)
    }

    pub fn score(&self, m: u64, n: u64, k: u64, dtype: &str, config: &str) -> Result<f64, Failed> {
        let (d, c) = (cstr(dtype), cstr(config));
        let mut us = f64::NAN;
        check(unsafe { origami_score(self.0, m, n, k, d.as_ptr(), c.as_ptr(), &mut us) })?;
        Ok(us)
    }

    pub fn explain(&self, m: u64, n: u64, k: u64, dtype: &str) -> Result<String, Failed> {
        let d = cstr(dtype);
        let mut needed = 0usize;
        let status = unsafe {
            origami_explain(self.0, m, n, k, d.as_ptr(), ptr::null_mut(), 0, &mut needed)
        };
        if status != OrigamiStatus::BufferTooSmall {
            check(status)?;
            panic!("explain into no buffer succeeded");
        }
        let mut buf = vec![0u8; needed];
        check(unsafe {
            origami_explain(
                self.0,
                m,
                n,
                k,
                d.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut needed,
            )
        })?;
        assert_eq!(buf.len(), needed);
        Ok(CStr::from_bytes_with_nul(&buf)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string())
    }
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shapes of a committed list (`M,N,K` header, `#` comments).
pub fn shapes(list: &str) -> Vec<(u64, u64, u64)> {
    let text = std::fs::read_to_string(repo_root().join(list)).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with('M'))
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
            (f[0], f[1], f[2])
        })
        .collect()
}
