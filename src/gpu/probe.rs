//! Probing: which CUDA libraries load, how many GPUs the driver sees, and each device's
//! properties (`device_props`, tier 1 of the parameter resolution, the NVIDIA port report,
//! section 4.1).
//!
//! cudarc loads libcuda, libnvrtc and libcublas at run time and panics when a library is
//! missing; every entry point of this layer calls [`require`] first, so a missing library
//! is a typed [`GpuError::MissingLibrary`] (exit 4) naming the files tried and the fix.
//! `device_props` only queries device attributes: no context, compile or launch.

use std::sync::OnceLock;

use cudarc::driver::{result, sys};

use super::error::GpuError;
#[cfg(test)]
use crate::exit::ToExit;
use crate::hw::DeviceProps;

/// A run-time library the GPU layer may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Library {
    /// libcuda: the driver API (every GPU operation).
    Driver,
    /// libnvrtc: run-time compilation (kernels without a prebuilt cubin).
    Nvrtc,
    /// libcublas (the GEMM runner's reference).
    Cublas,
    /// libcublasLt.
    CublasLt,
    /// libnvidia-ml: clocks and throttle reasons (optional everywhere).
    Nvml,
}

impl Library {
    /// Base name as cudarc looks it up.
    pub fn base_name(self) -> &'static str {
        match self {
            Library::Driver => "cuda",
            Library::Nvrtc => "nvrtc",
            Library::Cublas => "cublas",
            Library::CublasLt => "cublasLt",
            Library::Nvml => "nvidia-ml",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Library::Driver => "the NVIDIA driver library (libcuda)",
            Library::Nvrtc => "NVRTC, CUDA's run-time compiler (libnvrtc)",
            Library::Cublas => "cuBLAS (libcublas)",
            Library::CublasLt => "cuBLASLt (libcublasLt)",
            Library::Nvml => "NVML (libnvidia-ml)",
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Library::Driver => "Install the NVIDIA driver (on a machine with an NVIDIA GPU) and make sure libcuda.so.1 is on the loader path (LD_LIBRARY_PATH or ldconfig)",
            Library::Nvrtc => "Install the CUDA toolkit or `pip install nvidia-cuda-nvrtc` and add its lib directory to LD_LIBRARY_PATH, or build origami where nvcc is available so that the kernels are prebuilt",
            Library::Cublas | Library::CublasLt => "Install the CUDA toolkit's cuBLAS (or `pip install nvidia-cublas`) and add its lib directory to LD_LIBRARY_PATH",
            Library::Nvml => "NVML ships with the NVIDIA driver (libnvidia-ml.so.1); clocks are reported without it",
        }
    }

    fn candidates(self) -> Vec<String> {
        match self {
            Library::Nvml => vec!["libnvidia-ml.so.1".into()],
            Library::Driver => {
                let mut v = cudarc::get_lib_name_candidates("cuda");
                v.extend(cudarc::get_lib_name_candidates("nvcuda"));
                v
            }
            other => cudarc::get_lib_name_candidates(other.base_name()),
        }
    }
}

/// Whether a library can be loaded (never panics).
pub fn is_present(lib: Library) -> bool {
    std::panic::catch_unwind(|| unsafe {
        match lib {
            Library::Driver => cudarc::driver::sys::is_culib_present(),
            Library::Nvrtc => cudarc::nvrtc::sys::is_culib_present(),
            Library::Cublas => cudarc::cublas::sys::is_culib_present(),
            Library::CublasLt => cudarc::cublaslt::sys::is_culib_present(),
            Library::Nvml => nvml_wrapper::Nvml::init().is_ok(),
        }
    })
    .unwrap_or(false)
}

/// The error for a missing library.
pub fn missing(lib: Library) -> GpuError {
    let mut c = lib.candidates();
    c.dedup();
    // The usual file names first (lib<name>.so.N, lib<name>.so), not every spelling tried.
    c.sort_by_key(|n| (!n.contains(".so."), !n.ends_with(".so"), n.len()));
    let shown = if c.len() > 4 {
        format!("{} and {} other names", c[..4].join(", "), c.len() - 4)
    } else {
        c.join(", ")
    };
    GpuError::MissingLibrary {
        what: lib.what(),
        candidates: shown,
        hint: lib.hint(),
    }
}

/// Fail with [`GpuError::MissingLibrary`] for the first library of `libs` that does not load.
pub fn require(libs: &[Library]) -> Result<(), GpuError> {
    for &lib in libs {
        if !is_present(lib) {
            return Err(missing(lib));
        }
    }
    Ok(())
}

/// Load the driver and call `cuInit` once (cached).
pub fn init_driver() -> Result<(), GpuError> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    require(&[Library::Driver])?;
    let r = INIT.get_or_init(|| match result::init() {
        Ok(()) => Ok(()),
        Err(e) => Err(format!("cuInit failed: {e}")),
    });
    r.clone().map_err(|detail| GpuError::NoDevice { detail })
}

/// Number of GPUs the driver sees (an error when it sees none).
pub fn device_count() -> Result<usize, GpuError> {
    init_driver()?;
    let n = result::device::get_count().map_err(GpuError::driver("counting devices"))?;
    if n <= 0 {
        return Err(GpuError::NoDevice {
            detail: "the driver reports 0 devices".into(),
        });
    }
    Ok(n as usize)
}

pub(crate) fn cu_device(ordinal: usize) -> Result<sys::CUdevice, GpuError> {
    let count = device_count()?;
    if ordinal >= count {
        return Err(GpuError::BadOrdinal { ordinal, count });
    }
    result::device::get(ordinal as i32)
        .map_err(GpuError::driver(format!("opening device {ordinal}")))
}

fn attr(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> Result<i32, GpuError> {
    unsafe { result::device::get_attribute(dev, a) }
        .map_err(GpuError::driver(format!("reading device attribute {a:?}")))
}

/// The properties of device `ordinal`, from driver attributes only (cheap: no context, no
/// kernel). Clock rates the driver no longer reports (0) are filled from NVML's maximum
/// clocks when NVML is present.
pub fn device_props(ordinal: usize) -> Result<DeviceProps, GpuError> {
    use sys::CUdevice_attribute as A;
    let dev = cu_device(ordinal)?;
    let name =
        result::device::get_name(dev).map_err(GpuError::driver("reading the device name"))?;
    let major = attr(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let mut props = DeviceProps {
        name,
        compute_capability: [major as u32, minor as u32],
        sm_count: attr(dev, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        l2_bytes: attr(dev, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        smem_per_block_optin_bytes: attr(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )? as u64,
        registers_per_sm: attr(dev, A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?
            as u32,
        sm_clock_mhz: f64::from(attr(dev, A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).unwrap_or(0)) / 1000.0,
        mem_clock_mhz: f64::from(attr(dev, A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).unwrap_or(0))
            / 1000.0,
        mem_bus_width_bits: attr(dev, A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)? as u32,
    };
    if props.sm_clock_mhz <= 0.0 || props.mem_clock_mhz <= 0.0 {
        if let Ok(uuid) = device_uuid(ordinal) {
            if let Ok(nvml) = super::nvml::NvmlHandle::init() {
                if let Ok(s) = nvml.sample(&uuid, ordinal) {
                    if props.sm_clock_mhz <= 0.0 {
                        props.sm_clock_mhz = s.max_sm_mhz.unwrap_or(0) as f64;
                    }
                    if props.mem_clock_mhz <= 0.0 {
                        props.mem_clock_mhz = s.max_mem_mhz.unwrap_or(0) as f64;
                    }
                }
            }
        }
    }
    Ok(props)
}

/// The device's UUID in NVML's spelling ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").
pub fn device_uuid(ordinal: usize) -> Result<String, GpuError> {
    let dev = cu_device(ordinal)?;
    let u = result::device::get_uuid(dev).map_err(GpuError::driver("reading the device UUID"))?;
    let bytes: [u8; 16] = u.bytes.map(|b| b as u8);
    Ok(format_uuid(&bytes))
}

/// Format 16 UUID bytes as NVML does.
pub fn format_uuid(b: &[u8; 16]) -> String {
    let h: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

/// The driver's CUDA version as (major, minor), e.g. (13, 0).
pub fn driver_cuda_version() -> Result<(u32, u32), GpuError> {
    init_driver()?;
    let mut v: std::ffi::c_int = 0;
    unsafe { sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(GpuError::driver("reading the driver version"))?;
    Ok(split_cuda_version(v))
}

/// 13000 -> (13, 0), 12080 -> (12, 8).
pub fn split_cuda_version(v: i32) -> (u32, u32) {
    let v = v.max(0) as u32;
    (v / 1000, (v % 1000) / 10)
}

/// NVRTC's version as (major, minor).
pub fn nvrtc_version() -> Result<(u32, u32), GpuError> {
    require(&[Library::Nvrtc])?;
    let (mut a, mut b) = (0, 0);
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut a, &mut b) };
    if r != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(GpuError::Unsupported(format!("nvrtcVersion failed: {r:?}")));
    }
    Ok((a as u32, b as u32))
}

/// The SM architectures this NVRTC can compile for (e.g. [75, 80, 86, 89, 90, ...]).
pub fn nvrtc_supported_archs() -> Result<Vec<u32>, GpuError> {
    require(&[Library::Nvrtc])?;
    use cudarc::nvrtc::sys as n;
    let mut count: std::ffi::c_int = 0;
    unsafe {
        if n::nvrtcGetNumSupportedArchs(&mut count) != n::nvrtcResult::NVRTC_SUCCESS {
            return Err(GpuError::Unsupported(
                "nvrtcGetNumSupportedArchs failed".into(),
            ));
        }
        let mut v = vec![0 as std::ffi::c_int; count.max(0) as usize];
        if n::nvrtcGetSupportedArchs(v.as_mut_ptr()) != n::nvrtcResult::NVRTC_SUCCESS {
            return Err(GpuError::Unsupported(
                "nvrtcGetSupportedArchs failed".into(),
            ));
        }
        Ok(v.into_iter().map(|x| x as u32).collect())
    }
}

/// What is present on this machine, for `--probe`-style reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProbeReport {
    pub driver: bool,
    pub nvrtc: bool,
    pub cublas: bool,
    pub cublaslt: bool,
    pub nvml: bool,
    pub devices: Vec<DeviceProps>,
    /// Why the device list is empty, when it is.
    pub error: Option<String>,
}

/// Probe every library and list the devices (never fails).
pub fn probe_all() -> ProbeReport {
    let mut r = ProbeReport {
        driver: is_present(Library::Driver),
        nvrtc: is_present(Library::Nvrtc),
        cublas: is_present(Library::Cublas),
        cublaslt: is_present(Library::CublasLt),
        nvml: is_present(Library::Nvml),
        devices: Vec::new(),
        error: None,
    };
    match device_count() {
        Ok(n) => {
            for i in 0..n {
                match device_props(i) {
                    Ok(p) => r.devices.push(p),
                    Err(e) => r.error = Some(e.to_string()),
                }
            }
        }
        Err(e) => r.error = Some(e.to_string()),
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Exit;

    #[test]
    fn uuid_format() {
        let b = [
            0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
            0xcd, 0xef,
        ];
        assert_eq!(format_uuid(&b), "GPU-12345678-9abc-def0-0123-456789abcdef");
    }

    #[test]
    fn cuda_versions() {
        assert_eq!(split_cuda_version(13000), (13, 0));
        assert_eq!(split_cuda_version(12080), (12, 8));
        assert_eq!(split_cuda_version(-1), (0, 0));
    }

    #[test]
    fn missing_library_names_files_and_fix() {
        let e = missing(Library::Nvrtc).to_string();
        assert!(e.contains("libnvrtc"), "{e}");
        assert!(e.contains("LD_LIBRARY_PATH"), "{e}");
        assert_eq!(missing(Library::Driver).exit_code(), Exit::NoGpu);
    }

    #[test]
    fn probing_never_panics() {
        // On a machine without CUDA every probe is false and device_count is a typed error;
        // with CUDA it succeeds. Either way: no panic.
        let r = probe_all();
        if !r.driver {
            assert!(r.devices.is_empty());
            assert!(matches!(device_count(), Err(e) if e.exit_code() == Exit::NoGpu));
            assert!(matches!(device_props(0), Err(e) if e.exit_code() == Exit::NoGpu));
        }
    }
}
