//! The one exception of the bindings: `OrigamiError(ValueError)`, carrying
//! `origami-select`'s one-line message (without the `origami-select: error: ` prefix) and
//! its exit code (`origami_core::exit`).

use origami_core::engine::EngineError;
use origami_core::exit::{Exit, ToExit};
use pyo3::prelude::*;

pyo3::create_exception!(
    origami_gemm,
    OrigamiError,
    pyo3::exceptions::PyValueError,
    "A bad input or a failed selection: `str(e)` is origami-select's one-line message, \
     `e.exit_code` the exit code origami-select would return (2: bad input)."
);

/// An `OrigamiError` with `message` and `exit_code`.
pub fn origami_error(py: Python<'_>, message: impl Into<String>, exit: Exit) -> PyErr {
    let err = OrigamiError::new_err(message.into());
    // Setting an attribute on a fresh exception instance cannot fail short of memory.
    let _ = err.value(py).setattr("exit_code", exit.code());
    err
}

/// A bad input (exit code 2).
pub fn bad_input(py: Python<'_>, message: impl Into<String>) -> PyErr {
    origami_error(py, message, Exit::BadInput)
}

/// The engine's error as an `OrigamiError`.
pub fn engine_error(py: Python<'_>, e: &EngineError) -> PyErr {
    origami_error(py, e.to_string(), e.exit_code())
}
