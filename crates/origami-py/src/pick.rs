//! `Pick`: one ranked config of one shape with its launch (`origami_core::engine::Pick`),
//! a frozen Python object compared by value.

use origami_core::engine::Pick as CorePick;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::json_to_py;

/// One config picked (or ranked) for one GEMM shape, with everything its launch needs.
#[pyclass(module = "origami_gemm._core", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct Pick {
    inner: CorePick,
}

impl Pick {
    pub fn new(inner: CorePick) -> Pick {
        Pick { inner }
    }
}

#[pymethods]
impl Pick {
    /// Rows of A and C.
    #[getter]
    fn m(&self) -> u64 {
        self.inner.m
    }
    /// Columns of B and C.
    #[getter]
    fn n(&self) -> u64 {
        self.inner.n
    }
    /// The reduction dimension.
    #[getter]
    fn k(&self) -> u64 {
        self.inner.k
    }
    /// The input type's canonical name (fp16, bf16, fp8, fp32).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.inner.dtype.name()
    }
    /// The family whose kernel the config is for (a set's member for triton-auto).
    #[getter]
    fn family(&self) -> &'static str {
        self.inner.family
    }
    /// The Triton kernel function's name, when the family is a Triton kernel.
    #[getter]
    fn kernel(&self) -> Option<&'static str> {
        self.inner.kernel
    }
    /// The config as origami-select writes it (`128x256x64,g8,w8,s3,flatten`).
    #[getter]
    fn config(&self) -> &str {
        &self.inner.config_text
    }
    /// BLOCK_SIZE_M: rows of C per program's tile.
    #[getter]
    fn block_m(&self) -> u32 {
        self.inner.config.block_m
    }
    /// BLOCK_SIZE_N: columns of C per tile.
    #[getter]
    fn block_n(&self) -> u32 {
        self.inner.config.block_n
    }
    /// BLOCK_SIZE_K: the K step of the main loop.
    #[getter]
    fn block_k(&self) -> u32 {
        self.inner.config.block_k
    }
    /// GROUP_SIZE_M: rows of tiles in a launch-order group.
    #[getter]
    fn group_m(&self) -> u32 {
        self.inner.config.group_m
    }
    /// Warps per program.
    #[getter]
    fn num_warps(&self) -> u32 {
        self.inner.config.num_warps
    }
    /// Software-pipeline stages (operand buffers).
    #[getter]
    fn num_stages(&self) -> u32 {
        self.inner.config.num_stages
    }
    /// WARP_SPECIALIZE of the persistent kernel (False elsewhere).
    #[getter]
    fn warp_specialize(&self) -> bool {
        self.inner.config.switches.warp_specialize
    }
    /// FLATTEN of the persistent kernel (False elsewhere).
    #[getter]
    fn flatten(&self) -> bool {
        self.inner.config.switches.flatten
    }
    /// EPILOGUE_SUBTILE of the persistent kernel (False elsewhere).
    #[getter]
    fn epilogue_subtile(&self) -> bool {
        self.inner.config.switches.epilogue_subtile
    }
    /// Split-K runs of the hopper kernel (1: none, and for every other family).
    #[getter]
    fn split_k(&self) -> u32 {
        self.inner.config.split_k
    }
    /// Stream-K of the hopper kernel (False elsewhere).
    #[getter]
    fn stream_k(&self) -> bool {
        self.inner.config.stream_k
    }
    /// The hopper kernel computes C^T = B A^T (`swap`: operands, M and N exchanged, C
    /// stored transposed; False elsewhere).
    #[getter]
    fn swap(&self) -> bool {
        self.inner.config.switches.swap
    }
    /// Predicted time of the launch, microseconds.
    #[getter]
    fn predicted_us(&self) -> f64 {
        self.inner.predicted_us
    }
    /// Predicted time of the launch, SM clock cycles.
    #[getter]
    fn predicted_cycles(&self) -> f64 {
        self.inner.predicted_cycles
    }
    /// Shared memory the config needs per program, bytes.
    #[getter]
    fn smem_bytes(&self) -> u64 {
        self.inner.smem_bytes
    }
    /// Registers per thread, when the family's table knows them.
    #[getter]
    fn registers(&self) -> Option<u32> {
        self.inner.registers
    }
    /// Programs of the launch (one per tile; min(SMs, tiles) for a persistent kernel).
    #[getter]
    fn grid(&self) -> u64 {
        self.inner.grid
    }
    /// NUM_PROGRAMS of a persistent kernel (the GPU's SM count), else None.
    #[getter]
    fn num_programs(&self) -> Option<u32> {
        self.inner.num_programs
    }
    /// The launch's keyword arguments by the kernel's names (a new dict each time).
    #[getter]
    fn kwargs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(json_to_py(py, &self.inner.kwargs)?.into_bound(py))
    }
    /// The keyword arguments of `kernel[grid](..., **pick.triton_kwargs())`: the kernel's
    /// constexprs with num_warps and num_stages (a new dict each time).
    fn triton_kwargs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        if let Some(o) = self.inner.kwargs.as_object() {
            for (k, v) in o {
                d.set_item(k, json_to_py(py, v)?)?;
            }
        }
        Ok(d)
    }
    /// `Pick(MxNxK dtype: family config, predicted us)`.
    fn __repr__(&self) -> String {
        let p = &self.inner;
        format!(
            "Pick({}x{}x{} {}: {} {}, {:.3} us)",
            p.m, p.n, p.k, p.dtype, p.family, p.config_text, p.predicted_us
        )
    }
}
