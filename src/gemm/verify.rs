//! The correctness metric: relative Frobenius error ‖C − R‖_F / ‖R‖_F of the kernel's C
//! against cuBLAS's R, with C poisoned with NaN before the launch so that an element the
//! kernel never wrote counts as "unwritten" (non-finite). Bounds per dtype as the dev
//! harness: 2e-3 for fp16, 1e-2 for bf16 (`kernel::error_bound`).

use serde::Serialize;

/// A NaN in fp16 (exponent all ones, mantissa non-zero) and in bf16 alike.
pub const NAN_U16: u16 = 0xFFFF;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Verification {
    /// ‖C − R‖_F / ‖R‖_F over the finite elements of C.
    pub rel_err: f64,
    /// ‖R‖_F.
    pub ref_norm: f64,
    /// Non-finite elements of C (unwritten, or overflow).
    pub unwritten: u64,
    pub bound: f64,
    pub passed: bool,
}

impl Verification {
    /// From the device's sums: Σ(c−r)² over finite c, Σr², count of non-finite c.
    pub fn from_sums(diff2: f64, ref2: f64, bad: f64, bound: f64) -> Self {
        let rel_err = if ref2 > 0.0 {
            (diff2 / ref2).sqrt()
        } else {
            f64::INFINITY
        };
        let unwritten = if bad.is_finite() && bad > 0.0 {
            bad.round() as u64
        } else {
            0
        };
        let passed = unwritten == 0 && rel_err.is_finite() && rel_err <= bound && ref2 > 0.0;
        Verification {
            rel_err,
            ref_norm: ref2.max(0.0).sqrt(),
            unwritten,
            bound,
            passed,
        }
    }

    /// The same metric on the host (tests, small checks).
    pub fn of(c: &[f32], r: &[f32], bound: f64) -> Self {
        assert_eq!(c.len(), r.len(), "C and R differ in length");
        let (mut d2, mut r2, mut bad) = (0.0f64, 0.0f64, 0.0f64);
        for (&cv, &rv) in c.iter().zip(r) {
            if cv.is_finite() {
                let d = f64::from(cv) - f64::from(rv);
                d2 += d * d;
            } else {
                bad += 1.0;
            }
            r2 += f64::from(rv) * f64::from(rv);
        }
        Self::from_sums(d2, r2, bad, bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_pattern_is_nan_in_both_types() {
        assert!(half::f16::from_bits(NAN_U16).is_nan());
        assert!(half::bf16::from_bits(NAN_U16).is_nan());
    }

    #[test]
    fn metric() {
        let r = vec![3.0f32, 4.0];
        let exact = Verification::of(&r, &r, 2e-3);
        assert!(exact.passed && exact.rel_err == 0.0 && exact.ref_norm == 5.0);
        let off = Verification::of(&[3.0, 4.05], &r, 2e-3);
        assert!((off.rel_err - 0.01).abs() < 1e-6);
        assert!(!off.passed);
        assert!(Verification::of(&[3.0, 4.05], &r, 1.1e-2).passed);
        let unwritten = Verification::of(&[f32::NAN, 4.0], &r, 2e-3);
        assert_eq!(unwritten.unwritten, 1);
        assert!(!unwritten.passed);
        let zero_ref = Verification::of(&[0.0, 0.0], &[0.0, 0.0], 2e-3);
        assert!(!zero_ref.passed, "an all-zero reference proves nothing");
    }
}
