//! `origami_gemm._core`: origami's GEMM config selection for Python (this project's
//! `origami_core::engine`, bound with PyO3 for CPython's stable ABI, 3.9 and later). The
//! Python package `origami_gemm` (python/origami_gemm/) re-exports it; its `.pyi` stub
//! documents the API.

use pyo3::prelude::*;

mod convert;
mod device;
mod error;
mod pick;
mod selector;

/// The compiled half of `origami_gemm`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("OrigamiError", m.py().get_type::<error::OrigamiError>())?;
    m.add_class::<pick::Pick>()?;
    m.add_class::<selector::Selector>()?;
    m.add_function(wrap_pyfunction!(device::preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(device::preset_matches, m)?)?;
    m.add_function(wrap_pyfunction!(convert::normalize_dtype, m)?)?;
    m.add(
        "DEFAULT_CACHE_SIZE",
        origami_core::engine::DEFAULT_CACHE_ENTRIES,
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
