//! Typed errors of the GPU layer, with the row of the exit-code table (`crate::exit`) each
//! one maps to: no GPU when the GPU or a CUDA library is missing.

use crate::exit::{Exit, ToExit};
use cudarc::driver::DriverError;

/// What went wrong in the GPU layer.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// A shared library could not be loaded (driver, NVRTC, cuBLAS, NVML).
    #[error("{what} not found: none of {candidates} could be loaded. {hint}")]
    MissingLibrary {
        /// Human name, e.g. "the NVIDIA driver library (libcuda)".
        what: &'static str,
        /// The file names tried.
        candidates: String,
        /// How to fix it.
        hint: &'static str,
    },
    /// The driver loaded but sees no usable GPU.
    #[error("no CUDA GPU available: {detail}. Check `nvidia-smi`, CUDA_VISIBLE_DEVICES and that the driver matches the kernel module")]
    NoDevice { detail: String },
    /// The requested ordinal does not exist.
    #[error("GPU {ordinal} does not exist: the driver sees {count} device(s)")]
    BadOrdinal { ordinal: usize, count: usize },
    /// A CUDA driver call failed.
    #[error("CUDA driver error while {during}: {source}")]
    Driver {
        during: String,
        #[source]
        source: DriverError,
    },
    /// NVRTC rejected a source.
    #[error("NVRTC could not compile '{name}' for {arch} (options: {options}):\n{log}")]
    Compile {
        name: String,
        arch: String,
        options: String,
        log: String,
    },
    /// No embedded CUDA source of that name.
    #[error("no embedded CUDA source named '{0}' (csrc/<name>.cu)")]
    UnknownSource(String),
    /// The toolchain cannot target this GPU (e.g. an NVRTC older than the architecture).
    #[error("{0}")]
    Unsupported(String),
    /// NVML failed (never fatal for a measurement: callers treat it as "no reading").
    #[error("NVML: {0}")]
    Nvml(String),
    /// A host-side I/O problem (kernel cache).
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl ToExit for GpuError {
    /// No GPU for a missing GPU, driver or library (or a toolchain that cannot target the
    /// GPU), bad input for a device ordinal that does not exist, a run-time failure else.
    fn exit_code(&self) -> Exit {
        match self {
            GpuError::MissingLibrary { .. }
            | GpuError::NoDevice { .. }
            | GpuError::Unsupported(_) => Exit::NoGpu,
            GpuError::BadOrdinal { .. } => Exit::BadInput,
            _ => Exit::Runtime,
        }
    }
}

impl GpuError {
    /// Wrap a driver error with what was being done.
    pub fn driver(during: impl Into<String>) -> impl FnOnce(DriverError) -> GpuError {
        let during = during.into();
        move |source| GpuError::Driver { during, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        let missing = GpuError::MissingLibrary {
            what: "x",
            candidates: "libx.so".into(),
            hint: "install x",
        };
        assert_eq!(missing.exit_code(), Exit::NoGpu);
        assert!(
            missing.to_string().contains("libx.so") && missing.to_string().contains("install x")
        );
        assert_eq!(
            GpuError::NoDevice {
                detail: "0 devices".into()
            }
            .exit_code(),
            Exit::NoGpu
        );
        assert_eq!(
            GpuError::BadOrdinal {
                ordinal: 3,
                count: 1
            }
            .exit_code(),
            Exit::BadInput
        );
        assert_eq!(
            GpuError::UnknownSource("q".into()).exit_code(),
            Exit::Runtime
        );
    }
}
