//! cuBLAS as the GEMM runner's reference and baseline: `cublasGemmEx` in the TN layout of
//! `csrc/gemm.cu` (A row-major M×K, B stored N×K, C row-major M×N), fp16 or bf16 inputs
//! and output with fp32 compute (`CUBLAS_COMPUTE_32F`), or fp32 data with TF32 products
//! for tf32 (`CUBLAS_COMPUTE_32F_FAST_TF32`), `CUBLAS_GEMM_DEFAULT`: the same call as
//! the development harness (`scripts/gemm_dev/harness.cu`, in git history up to commit
//! c051717).
//!
//! The handle runs on its own stream of the device's primary context (the same context as
//! [`Gpu`]'s, so device addresses of [`Gpu`] buffers are valid here). The two streams are
//! not ordered against each other: callers synchronize the [`Gpu`] before handing its
//! buffers to cuBLAS, and [`Cublas::synchronize`] before reading cuBLAS's output from the
//! [`Gpu`]. A fixed 32 MiB workspace is set so that the calls can be captured into CUDA
//! graphs (no allocation during capture).

use std::sync::Arc;

use cudarc::cublas::{result as cbr, sys as cbs, CudaBlas};
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaContext, CudaGraph, CudaSlice, CudaStream, DevicePtr};

use super::context::Gpu;
use super::error::GpuError;
use super::probe::{self, Library};
use crate::dtype::Dtype;

/// Workspace handed to cuBLAS (bytes).
pub const CUBLAS_WORKSPACE_BYTES: usize = 32 << 20;

/// A cuBLAS handle on its own stream.
pub struct Cublas {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    _workspace: CudaSlice<u8>,
}

/// A captured CUDA graph of cuBLAS calls, replayed on the cuBLAS stream.
pub struct CublasGraph {
    g: CudaGraph,
}

impl CublasGraph {
    /// Launch one replay (asynchronous).
    pub fn replay(&self) -> Result<(), GpuError> {
        self.g
            .launch()
            .map_err(GpuError::driver("replaying a cuBLAS graph"))
    }
}

fn blas_err(during: &str, e: cbr::CublasError) -> GpuError {
    GpuError::Unsupported(format!("cuBLAS failed while {during}: {e:?}"))
}

/// The cuBLAS data type of a 16-bit input type (None for others).
pub fn cuda_dtype(d: Dtype) -> Option<cbs::cudaDataType> {
    match d {
        Dtype::Fp16 => Some(cbs::cudaDataType::CUDA_R_16F),
        Dtype::Bf16 => Some(cbs::cudaDataType::CUDA_R_16BF),
        Dtype::Tf32 => Some(cbs::cudaDataType::CUDA_R_32F),
        _ => None,
    }
}

/// cuBLAS's compute type for an input type: fp32 accumulation, and for tf32 (fp32
/// storage) products of operands rounded to TF32 (`CUBLAS_COMPUTE_32F_FAST_TF32`).
pub fn compute_type(d: Dtype) -> cbs::cublasComputeType_t {
    if d == Dtype::Tf32 {
        cbs::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32
    } else {
        cbs::cublasComputeType_t::CUBLAS_COMPUTE_32F
    }
}

impl Cublas {
    /// A handle on a new stream of `gpu`'s device (exit code 4 when libcublas is missing).
    pub fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        probe::require(&[Library::Cublas])?;
        let ctx = CudaContext::new(gpu.ordinal()).map_err(GpuError::driver(format!(
            "retaining the context of device {}",
            gpu.ordinal()
        )))?;
        // SAFETY: every buffer this handle allocates lives on its one stream.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx
            .new_stream()
            .map_err(GpuError::driver("creating the cuBLAS stream"))?;
        let blas = CudaBlas::new(stream.clone()).map_err(|e| blas_err("creating a handle", e))?;
        let workspace = stream
            .alloc_zeros::<u8>(CUBLAS_WORKSPACE_BYTES)
            .map_err(GpuError::driver("allocating the cuBLAS workspace"))?;
        {
            let (p, _g) = workspace.device_ptr(&stream);
            // SAFETY: the workspace outlives the handle (both are fields of Self, and the
            // handle is only used through Self).
            let st = unsafe {
                cbs::cublasSetWorkspace_v2(*blas.handle(), p as *mut _, CUBLAS_WORKSPACE_BYTES)
            };
            if st != cbs::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
                return Err(GpuError::Unsupported(format!(
                    "cuBLAS refused its workspace: {st:?}"
                )));
            }
        }
        Ok(Self {
            ctx,
            stream,
            blas,
            _workspace: workspace,
        })
    }

    /// `C[M,N] = A[M,K] · B[N,K]ᵀ` (asynchronous on the cuBLAS stream). `a`, `b`, `c` are
    /// device addresses of buffers holding at least M·K, N·K and M·N elements of `dtype`.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_tn(
        &self,
        dtype: Dtype,
        a: u64,
        b: u64,
        c: u64,
        m: u64,
        n: u64,
        k: u64,
    ) -> Result<(), GpuError> {
        let dt = cuda_dtype(dtype).ok_or_else(|| {
            GpuError::Unsupported(format!(
                "the cuBLAS reference takes fp16, bf16 or tf32, not {dtype}"
            ))
        })?;
        let dim = |v: u64, what: &str| {
            i32::try_from(v)
                .map_err(|_| GpuError::Unsupported(format!("{what} = {v} is too large for cuBLAS")))
        };
        let (mi, ni, ki) = (dim(m, "M")?, dim(n, "N")?, dim(k, "K")?);
        let alpha = 1.0f32;
        let beta = 0.0f32;
        self.ctx
            .bind_to_thread()
            .map_err(GpuError::driver("binding the context"))?;
        // Column-major view: C^T[N,M] = (B[N,K] as K×N col-major)^T · (A as K×M col-major).
        // SAFETY: the caller guarantees the addresses and sizes; alpha/beta are host f32
        // (default pointer mode) and outlive the call.
        unsafe {
            cbr::gemm_ex(
                *self.blas.handle(),
                cbs::cublasOperation_t::CUBLAS_OP_T,
                cbs::cublasOperation_t::CUBLAS_OP_N,
                ni,
                mi,
                ki,
                &alpha as *const f32 as *const _,
                b as *const _,
                dt,
                ki,
                a as *const _,
                dt,
                ki,
                &beta as *const f32 as *const _,
                c as *mut _,
                dt,
                ni,
                compute_type(dtype),
                cbs::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
            )
        }
        .map_err(|e| blas_err("running cublasGemmEx", e))
    }

    /// Wait for all work on the cuBLAS stream.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream
            .synchronize()
            .map_err(GpuError::driver("synchronizing the cuBLAS stream"))
    }

    /// Time what `work` enqueues on the cuBLAS stream with two CUDA events; milliseconds.
    pub fn time_ms(&self, work: impl FnOnce() -> Result<(), GpuError>) -> Result<f64, GpuError> {
        super::context::time_on_stream(&self.ctx, &self.stream, work)
    }

    /// A queue of event-timed batches on the cuBLAS stream.
    pub fn event_queue(&self) -> super::context::EventQueue {
        super::context::EventQueue::new(&self.ctx, &self.stream)
    }

    /// Capture the cuBLAS calls `work` makes into a CUDA graph (nothing runs).
    pub fn capture(
        &self,
        work: impl FnOnce() -> Result<(), GpuError>,
    ) -> Result<CublasGraph, GpuError> {
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(GpuError::driver("beginning graph capture (cuBLAS)"))?;
        let r = work();
        let g = self
            .stream
            .end_capture(CUgraphInstantiate_flags(0))
            .map_err(GpuError::driver("ending graph capture (cuBLAS)"));
        r?;
        let g = g?
            .ok_or_else(|| GpuError::Unsupported("cuBLAS graph capture recorded nothing".into()))?;
        Ok(CublasGraph { g })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf32_is_fp32_storage_with_tf32_products() {
        assert_eq!(cuda_dtype(Dtype::Tf32), Some(cbs::cudaDataType::CUDA_R_32F));
        assert_eq!(
            compute_type(Dtype::Tf32),
            cbs::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32
        );
        assert_eq!(
            compute_type(Dtype::Bf16),
            cbs::cublasComputeType_t::CUBLAS_COMPUTE_32F
        );
        // plain fp32 (no TF32) has no reference: the family refuses it
        assert_eq!(cuda_dtype(Dtype::Fp32), None);
    }
}
