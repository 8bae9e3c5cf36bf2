//! Module loading: a cubin that build.rs compiled with nvcc for the device's architecture
//! when there is one, else the embedded source compiled by NVRTC for the device (with the
//! caller's `-D` options), through a disk cache keyed by source hash, options, target
//! architecture and NVRTC version (`$XDG_CACHE_HOME/origami` or `~/.cache/origami`;
//! `ORIGAMI_CACHE_DIR` overrides it, `ORIGAMI_NO_CACHE=1` disables it;
//! `ORIGAMI_FORCE_NVRTC=1` ignores the prebuilt cubins).

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaModule};
use sha2::{Digest, Sha256};

use super::error::GpuError;
use super::probe::{self, Library};

/// What build.rs embedded (generated file).
pub mod embedded {
    include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
}

/// The embedded source of `csrc/<stem>.cu` (sibling headers inlined).
pub fn embedded_source(stem: &str) -> Option<&'static str> {
    embedded::SOURCES
        .iter()
        .find(|(s, _)| *s == stem)
        .map(|(_, t)| *t)
}

/// Names of all embedded sources.
pub fn embedded_source_names() -> Vec<&'static str> {
    embedded::SOURCES.iter().map(|(s, _)| *s).collect()
}

/// The prebuilt cubin for `stem` that runs on compute capability `arch` (e.g. 90): the
/// exact architecture, else the highest of the same major version below it (binary
/// compatible). Returns (cubin arch, bytes).
pub fn prebuilt_cubin(stem: &str, arch: u32) -> Option<(u32, &'static [u8])> {
    pick_cubin(embedded::CUBINS, stem, arch)
}

fn pick_cubin(
    table: &'static [(&'static str, u32, &'static [u8])],
    stem: &str,
    arch: u32,
) -> Option<(u32, &'static [u8])> {
    table
        .iter()
        .filter(|(s, a, _)| *s == stem && *a / 10 == arch / 10 && *a <= arch)
        .max_by_key(|(_, a, _)| *a)
        .map(|(_, a, b)| (*a, *b))
}

/// The prebuilt cubin of `stem` for an arch-specific target such as `sm_90a` (build.rs
/// compiles the wgmma and TMA microbenchmarks so when 90 is among its architectures), if
/// one exists and runs on compute capability `arch`: an arch-specific cubin runs only on
/// exactly its architecture (sm_90a on 9.0).
pub fn prebuilt_cubin_arch_specific(stem: &str, target: &str, arch: u32) -> Option<&'static [u8]> {
    pick_arch_specific(embedded::CUBINS_ARCH_SPECIFIC, stem, target, arch)
}

fn pick_arch_specific(
    table: &'static [(&'static str, &'static str, &'static [u8])],
    stem: &str,
    target: &str,
    arch: u32,
) -> Option<&'static [u8]> {
    let target_arch = target
        .strip_prefix("sm_")?
        .strip_suffix('a')?
        .parse::<u32>()
        .ok()?;
    if target_arch != arch {
        return None;
    }
    table
        .iter()
        .find(|(s, t, _)| *s == stem && *t == target)
        .map(|(_, _, b)| *b)
}

/// The nvcc version that produced the prebuilt cubins ("" without any).
pub fn nvcc_version() -> &'static str {
    embedded::NVCC_VERSION
}

/// Where a module's CUDA source comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceRef {
    /// `csrc/<stem>.cu`, embedded by build.rs.
    Embedded(String),
    /// Text supplied at run time.
    Text { name: String, text: String },
}

/// What to load: a source, NVRTC options (`-D` defines and others) and optionally an
/// explicit target (e.g. `sm_90a` for wgmma); the default target is the device's `sm_XY`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleSpec {
    pub source: SourceRef,
    pub options: Vec<String>,
    pub arch: Option<String>,
    /// Use a prebuilt cubin when one exists (only when `options` is empty, and `arch` unset
    /// or an arch-specific target build.rs compiled for, e.g. `sm_90a`).
    pub allow_prebuilt: bool,
}

impl ModuleSpec {
    /// An embedded `csrc/<stem>.cu`.
    pub fn embedded(stem: &str) -> Self {
        Self {
            source: SourceRef::Embedded(stem.into()),
            options: Vec::new(),
            arch: None,
            allow_prebuilt: true,
        }
    }

    /// Source text supplied at run time.
    pub fn text(name: &str, text: &str) -> Self {
        Self {
            source: SourceRef::Text {
                name: name.into(),
                text: text.into(),
            },
            options: Vec::new(),
            arch: None,
            allow_prebuilt: false,
        }
    }

    /// Add `-DNAME=VALUE`.
    pub fn define(mut self, name: &str, value: impl std::fmt::Display) -> Self {
        self.options.push(format!("-D{name}={value}"));
        self
    }

    /// Add `-DNAME`.
    pub fn flag(mut self, name: &str) -> Self {
        self.options.push(format!("-D{name}"));
        self
    }

    /// Add any NVRTC option.
    pub fn option(mut self, o: &str) -> Self {
        self.options.push(o.into());
        self
    }

    /// Target this architecture name (e.g. "sm_90a") instead of the device's.
    pub fn target(mut self, arch: &str) -> Self {
        self.arch = Some(arch.into());
        self
    }

    /// Never use the prebuilt cubin.
    pub fn force_nvrtc(mut self) -> Self {
        self.allow_prebuilt = false;
        self
    }

    /// The source's name and text.
    pub fn resolve(&self) -> Result<(String, String), GpuError> {
        match &self.source {
            SourceRef::Embedded(stem) => embedded_source(stem)
                .map(|t| (stem.clone(), t.to_string()))
                .ok_or_else(|| GpuError::UnknownSource(stem.clone())),
            SourceRef::Text { name, text } => Ok((name.clone(), text.clone())),
        }
    }
}

/// How a module was obtained.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModuleOrigin {
    /// A cubin nvcc built at build time.
    Prebuilt { cubin_arch: u32, nvcc: String },
    /// Compiled now by NVRTC.
    Nvrtc {
        arch: String,
        compile_ms: f64,
        nvrtc: String,
    },
    /// An NVRTC cubin from the disk cache.
    Cached { arch: String, path: String },
}

/// A loaded module.
pub struct Module {
    pub(crate) m: Arc<CudaModule>,
    pub(crate) ctx: Arc<cudarc::driver::CudaContext>,
    pub(crate) stream: Arc<cudarc::driver::CudaStream>,
    name: String,
    origin: ModuleOrigin,
    log: String,
}

impl Module {
    pub(crate) fn new(
        m: Arc<CudaModule>,
        ctx: Arc<cudarc::driver::CudaContext>,
        stream: Arc<cudarc::driver::CudaStream>,
        name: String,
        origin: ModuleOrigin,
        log: String,
    ) -> Self {
        Self {
            m,
            ctx,
            stream,
            name,
            origin,
            log,
        }
    }

    /// Source name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the code came from.
    pub fn origin(&self) -> &ModuleOrigin {
        &self.origin
    }

    /// NVRTC's log (warnings), empty for prebuilt or cached modules.
    pub fn compile_log(&self) -> &str {
        &self.log
    }

    /// A kernel of this module (an `extern "C"` name).
    pub fn kernel(&self, name: &str) -> Result<Kernel, GpuError> {
        let f = self
            .m
            .load_function(name)
            .map_err(GpuError::driver(format!(
                "loading kernel '{name}' of module '{}'",
                self.name
            )))?;
        Ok(Kernel {
            f,
            name: name.into(),
            ctx: self.ctx.clone(),
        })
    }

    /// Read a 32-bit `__device__` global of the module (e.g. a size the kernel exports).
    pub fn global_i32(&self, name: &str) -> Result<i32, GpuError> {
        let view = self
            .m
            .get_global(name, &self.stream)
            .map_err(GpuError::driver(format!(
                "finding global '{name}' in '{}'",
                self.name
            )))?;
        let bytes: Vec<u8> = self
            .stream
            .clone_dtoh(&view)
            .map_err(GpuError::driver(format!("reading global '{name}'")))?;
        let b: [u8; 4] = bytes
            .get(..4)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| {
                GpuError::Unsupported(format!("global '{name}' has {} bytes, not 4", bytes.len()))
            })?;
        Ok(i32::from_le_bytes(b))
    }
}

/// A kernel function of a loaded module.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) f: CudaFunction,
    name: String,
    ctx: Arc<cudarc::driver::CudaContext>,
}

/// Resource attributes of a compiled kernel (what the register-pressure filter and the
/// occupancy checks need).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct KernelAttrs {
    pub num_regs: i32,
    /// Per-thread local memory (stack and spills).
    pub local_size_bytes: i32,
    /// Static shared memory.
    pub shared_size_bytes: i32,
    pub const_size_bytes: i32,
    pub max_threads_per_block: i32,
    /// Current limit on dynamic shared memory (raise with `set_max_dynamic_smem`).
    pub max_dynamic_smem_bytes: i32,
    /// SASS architecture, e.g. 90.
    pub binary_version: i32,
    pub ptx_version: i32,
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its resource attributes.
    pub fn attrs(&self) -> Result<KernelAttrs, GpuError> {
        use cudarc::driver::sys::CUfunction_attribute as A;
        let g = |a: A| {
            self.f.get_attribute(a).map_err(GpuError::driver(format!(
                "reading attribute {a:?} of '{}'",
                self.name
            )))
        };
        Ok(KernelAttrs {
            num_regs: g(A::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            local_size_bytes: g(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            shared_size_bytes: g(A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            const_size_bytes: g(A::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)?,
            max_threads_per_block: g(A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_dynamic_smem_bytes: g(A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
            binary_version: g(A::CU_FUNC_ATTRIBUTE_BINARY_VERSION)?,
            ptx_version: g(A::CU_FUNC_ATTRIBUTE_PTX_VERSION)?,
        })
    }

    /// Allow up to `bytes` of dynamic shared memory per block (needed above 48 KiB).
    pub fn set_max_dynamic_smem(&self, bytes: u32) -> Result<(), GpuError> {
        use cudarc::driver::sys::CUfunction_attribute as A;
        self.set_attribute(
            A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            i32::try_from(bytes).unwrap_or(i32::MAX),
            &format!(
                "raising dynamic shared memory of '{}' to {bytes}",
                self.name
            ),
        )
    }

    /// Allow thread-block clusters above the portable size of 8 blocks (compute capability
    /// 9.0 takes 16 on request); the kernel's cluster size is its `__cluster_dims__`.
    pub fn allow_non_portable_cluster_size(&self) -> Result<(), GpuError> {
        use cudarc::driver::sys::CUfunction_attribute as A;
        self.set_attribute(
            A::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
            1,
            &format!("allowing non-portable cluster sizes for '{}'", self.name),
        )
    }

    /// Set one function attribute, in this kernel's context; `during` names the step in an
    /// error.
    fn set_attribute(
        &self,
        attribute: cudarc::driver::sys::CUfunction_attribute,
        value: i32,
        during: &str,
    ) -> Result<(), GpuError> {
        self.ctx
            .bind_to_thread()
            .map_err(GpuError::driver("binding the context"))?;
        self.f
            .set_attribute(attribute, value)
            .map_err(GpuError::driver(during))
    }

    /// How many blocks of `block_threads` threads and `dyn_smem_bytes` of dynamic shared
    /// memory fit on one SM at once.
    pub fn max_active_blocks_per_sm(
        &self,
        block_threads: u32,
        dyn_smem_bytes: usize,
    ) -> Result<u32, GpuError> {
        self.ctx
            .bind_to_thread()
            .map_err(GpuError::driver("binding the context"))?;
        self.f
            .occupancy_max_active_blocks_per_multiprocessor(block_threads, dyn_smem_bytes, None)
            .map_err(GpuError::driver(format!("occupancy of '{}'", self.name)))
    }
}

// ---------------------------------------------------------------------------------------
// NVRTC and the cache.

/// The cache directory: `$ORIGAMI_CACHE_DIR`, else `$XDG_CACHE_HOME/origami`, else
/// `$HOME/.cache/origami`; `None` when caching is disabled or no home is known.
pub fn cache_dir() -> Option<PathBuf> {
    if std::env::var_os("ORIGAMI_NO_CACHE").is_some_and(|v| v != "0" && !v.is_empty()) {
        return None;
    }
    cache_dir_from(
        std::env::var_os("ORIGAMI_CACHE_DIR"),
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
    )
}

/// Pure form of [`cache_dir`] (testable).
pub fn cache_dir_from(
    explicit: Option<std::ffi::OsString>,
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let nonempty = |v: Option<std::ffi::OsString>| v.filter(|s| !s.is_empty()).map(PathBuf::from);
    if let Some(p) = nonempty(explicit) {
        return Some(p);
    }
    if let Some(p) = nonempty(xdg) {
        return Some(p.join("origami"));
    }
    nonempty(home).map(|h| h.join(".cache").join("origami"))
}

/// The cache key: SHA-256 over the source text, the options, the target and the NVRTC
/// version, each length-prefixed; hex.
pub fn cache_key(source: &str, options: &[String], arch: &str, nvrtc: &str) -> String {
    let mut h = Sha256::new();
    for part in [source, &options.join("\u{1f}"), arch, nvrtc] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache file for a key.
pub fn cache_path(dir: &Path, name: &str, key: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{safe}-{}.cubin", &key[..32]))
}

/// Write `bytes` to `path` through a temporary file and a rename (never a partial file).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// NVRTC's output for one compile.
pub struct NvrtcOutput {
    pub cubin: Vec<u8>,
    pub log: String,
}

/// Compile `source` with NVRTC to a cubin for `arch` (a real target such as "sm_90").
pub fn nvrtc_compile(
    name: &str,
    source: &str,
    options: &[String],
    arch: &str,
) -> Result<NvrtcOutput, GpuError> {
    use cudarc::nvrtc::sys as n;
    probe::require(&[Library::Nvrtc])?;
    let csrc = CString::new(source)
        .map_err(|_| GpuError::Unsupported("source contains a NUL byte".into()))?;
    let cname = CString::new(format!("{name}.cu")).unwrap_or_default();
    let mut all: Vec<String> = vec![format!("--gpu-architecture={arch}"), "-std=c++17".into()];
    all.extend(options.iter().cloned());
    let copts: Vec<CString> = all
        .iter()
        .map(|o| {
            CString::new(o.as_str())
                .map_err(|_| GpuError::Unsupported(format!("option {o:?} contains NUL")))
        })
        .collect::<Result<_, _>>()?;
    let ptrs: Vec<*const std::ffi::c_char> = copts.iter().map(|c| c.as_ptr()).collect();
    let ok = n::nvrtcResult::NVRTC_SUCCESS;
    let err = |what: &str, r: n::nvrtcResult| {
        GpuError::Unsupported(format!("NVRTC {what} failed: {r:?}"))
    };
    unsafe {
        let mut prog: n::nvrtcProgram = std::ptr::null_mut();
        let r = n::nvrtcCreateProgram(
            &mut prog,
            csrc.as_ptr(),
            cname.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        );
        if r != ok {
            return Err(err("nvrtcCreateProgram", r));
        }
        struct Guard(n::nvrtcProgram);
        impl Drop for Guard {
            fn drop(&mut self) {
                unsafe {
                    let _ = cudarc::nvrtc::sys::nvrtcDestroyProgram(&mut self.0);
                }
            }
        }
        let guard = Guard(prog);
        let compiled = n::nvrtcCompileProgram(guard.0, ptrs.len() as i32, ptrs.as_ptr());
        let mut log_size = 0usize;
        let mut log = String::new();
        if n::nvrtcGetProgramLogSize(guard.0, &mut log_size) == ok && log_size > 1 {
            let mut buf = vec![0 as std::ffi::c_char; log_size];
            if n::nvrtcGetProgramLog(guard.0, buf.as_mut_ptr()) == ok {
                log = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
            }
        }
        if compiled != ok {
            return Err(GpuError::Compile {
                name: name.into(),
                arch: arch.into(),
                options: all.join(" "),
                log,
            });
        }
        let mut size = 0usize;
        let r = n::nvrtcGetCUBINSize(guard.0, &mut size);
        if r != ok || size == 0 {
            return Err(err(
                "nvrtcGetCUBINSize (the target must be a real sm_XY)",
                r,
            ));
        }
        let mut cubin = vec![0u8; size];
        let r = n::nvrtcGetCUBIN(guard.0, cubin.as_mut_ptr() as *mut std::ffi::c_char);
        if r != ok {
            return Err(err("nvrtcGetCUBIN", r));
        }
        Ok(NvrtcOutput { cubin, log })
    }
}

/// Get a cubin for `spec` on a device of architecture `dev_arch` (e.g. 90): prebuilt, cached
/// or freshly compiled. Returns (name, cubin, origin, log).
pub(crate) fn obtain_cubin(
    spec: &ModuleSpec,
    dev_arch: u32,
) -> Result<(String, Vec<u8>, ModuleOrigin, String), GpuError> {
    let (name, text) = spec.resolve()?;
    let forced = std::env::var_os("ORIGAMI_FORCE_NVRTC").is_some_and(|v| !v.is_empty() && v != "0");
    if spec.allow_prebuilt && !forced && spec.options.is_empty() {
        if let (SourceRef::Embedded(stem), Some(target)) = (&spec.source, &spec.arch) {
            if let Some(bytes) = prebuilt_cubin_arch_specific(stem, target, dev_arch) {
                return Ok((
                    name,
                    bytes.to_vec(),
                    ModuleOrigin::Prebuilt {
                        cubin_arch: dev_arch,
                        nvcc: format!("{} ({target})", nvcc_version()),
                    },
                    String::new(),
                ));
            }
        }
    }
    if spec.allow_prebuilt && !forced && spec.options.is_empty() && spec.arch.is_none() {
        if let SourceRef::Embedded(stem) = &spec.source {
            if let Some((a, bytes)) = prebuilt_cubin(stem, dev_arch) {
                return Ok((
                    name,
                    bytes.to_vec(),
                    ModuleOrigin::Prebuilt {
                        cubin_arch: a,
                        nvcc: nvcc_version().into(),
                    },
                    String::new(),
                ));
            }
        }
    }
    nvrtc_cubin(&name, &text, spec, dev_arch)
}

pub(crate) fn nvrtc_cubin(
    name: &str,
    text: &str,
    spec: &ModuleSpec,
    dev_arch: u32,
) -> Result<(String, Vec<u8>, ModuleOrigin, String), GpuError> {
    let (maj, min) = probe::nvrtc_version()?;
    let nvrtc = format!("{maj}.{min}");
    let arch = match &spec.arch {
        Some(a) => a.clone(),
        None => {
            let supported = probe::nvrtc_supported_archs()?;
            if !supported.contains(&dev_arch) {
                return Err(GpuError::Unsupported(format!(
                    "NVRTC {nvrtc} cannot compile for sm_{dev_arch} (it supports {:?}): install a CUDA toolkit / NVRTC that knows this GPU, or build origami with an nvcc that does (ORIGAMI_CUDA_ARCHS={dev_arch})",
                    supported
                )));
            }
            format!("sm_{dev_arch}")
        }
    };
    let key = cache_key(text, &spec.options, &arch, &nvrtc);
    let dir = cache_dir();
    if let Some(d) = &dir {
        let p = cache_path(d, name, &key);
        if let Ok(bytes) = std::fs::read(&p) {
            if !bytes.is_empty() {
                return Ok((
                    name.into(),
                    bytes,
                    ModuleOrigin::Cached {
                        arch,
                        path: p.display().to_string(),
                    },
                    String::new(),
                ));
            }
        }
    }
    let t = Instant::now();
    let out = nvrtc_compile(name, text, &spec.options, &arch)?;
    let compile_ms = t.elapsed().as_secs_f64() * 1e3;
    if let Some(d) = &dir {
        // A cache that cannot be written is not an error: the next run compiles again.
        let _ = write_atomic(&cache_path(d, name, &key), &out.cubin);
    }
    Ok((
        name.into(),
        out.cubin,
        ModuleOrigin::Nvrtc {
            arch,
            compile_ms,
            nvrtc,
        },
        out.log,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn cache_dir_rules() {
        let o = |s: &str| Some(OsString::from(s));
        assert_eq!(
            cache_dir_from(o("/x"), o("/xdg"), o("/h")),
            Some(PathBuf::from("/x"))
        );
        assert_eq!(
            cache_dir_from(None, o("/xdg"), o("/h")),
            Some(PathBuf::from("/xdg/origami"))
        );
        assert_eq!(
            cache_dir_from(None, o(""), o("/h")),
            Some(PathBuf::from("/h/.cache/origami"))
        );
        assert_eq!(cache_dir_from(None, None, None), None);
    }

    #[test]
    fn cache_key_depends_on_every_part() {
        let base = cache_key("src", &["-DA=1".into()], "sm_90", "13.0");
        assert_eq!(base, cache_key("src", &["-DA=1".into()], "sm_90", "13.0"));
        assert_ne!(base, cache_key("src2", &["-DA=1".into()], "sm_90", "13.0"));
        assert_ne!(base, cache_key("src", &["-DA=2".into()], "sm_90", "13.0"));
        assert_ne!(base, cache_key("src", &["-DA=1".into()], "sm_90a", "13.0"));
        assert_ne!(base, cache_key("src", &["-DA=1".into()], "sm_90", "12.8"));
        // Length prefixes: moving a character between parts changes the key.
        assert_ne!(cache_key("ab", &[], "c", ""), cache_key("a", &[], "bc", ""));
        let p = cache_path(Path::new("/c"), "gemm v1", &base);
        assert!(p.to_string_lossy().starts_with("/c/gemm_v1-"));
    }

    /// Every calibration microbenchmark: (file stem, NVRTC targets it must compile for).
    /// tc_wgmma and tma_load use sm_90a-only instructions (wgmma; the driver loads them on
    /// compute capability 9.0 only).
    const MICROBENCHMARKS: &[(&str, &[&str])] = &[
        ("l2_bw", &["sm_80", "sm_90"]),
        ("dram_bw", &["sm_80", "sm_90"]),
        ("pointer_chase", &["sm_80", "sm_90"]),
        ("mma_latency", &["sm_80", "sm_90"]),
        ("sm_clock", &["sm_80", "sm_90"]),
        ("tc_rate", &["sm_80", "sm_90"]),
        ("smem_bw", &["sm_80", "sm_90"]),
        ("sync_cost", &["sm_80", "sm_90"]),
        ("kloop_cost", &["sm_80", "sm_90"]),
        ("energy_load", &["sm_80", "sm_90"]),
        ("tc_wgmma", &["sm_90a"]),
        ("tma_load", &["sm_90a"]),
        // the cluster kernels exist from sm_90; sm_80 compiles without them
        ("sm_topology", &["sm_80", "sm_90", "sm_90a"]),
    ];

    #[test]
    fn every_microbenchmark_is_embedded() {
        for stem in [
            "l2_bw",
            "dram_bw",
            "pointer_chase",
            "mma_latency",
            "sm_clock",
            "smem_bw",
            "sync_cost",
            "kloop_cost",
            "tc_rate",
            "tma_load",
            "energy_load",
            "sm_topology",
        ] {
            let src = embedded_source(stem).unwrap_or_else(|| panic!("{stem} not embedded"));
            // build.rs inlined common.cuh: no include left for NVRTC to resolve.
            assert!(!src.contains("#include \"common.cuh\""), "{stem}");
            assert!(src.contains("origami_fill"), "{stem}");
        }
        // the wgmma benchmark inlines the GEMM's wrappers, not the common header
        let wg = embedded_source("tc_wgmma").expect("tc_wgmma embedded");
        assert!(!wg.contains("#include \"hopper_wgmma.cuh\""));
        assert!(wg.contains("wgmma_m64n256k16_f16"));
        for (stem, _) in MICROBENCHMARKS {
            assert!(embedded_source(stem).is_some(), "{stem}");
        }
        assert!(embedded_source("nope").is_none());
    }

    #[test]
    fn cubin_choice_is_binary_compatible() {
        static T: &[(&str, u32, &[u8])] = &[("k", 80, b"80"), ("k", 86, b"86"), ("k", 90, b"90")];
        assert_eq!(pick_cubin(T, "k", 90).map(|x| x.0), Some(90));
        assert_eq!(pick_cubin(T, "k", 89).map(|x| x.0), Some(86));
        assert_eq!(pick_cubin(T, "k", 87).map(|x| x.0), Some(86));
        assert_eq!(pick_cubin(T, "k", 100), None);
        assert_eq!(pick_cubin(T, "k", 75), None);
        assert_eq!(pick_cubin(T, "j", 90), None);
        // arch-specific cubins: exactly their architecture, never another
        static S: &[(&str, &str, &[u8])] = &[("w", "sm_90a", b"90a")];
        assert_eq!(pick_arch_specific(S, "w", "sm_90a", 90), Some(&b"90a"[..]));
        assert_eq!(pick_arch_specific(S, "w", "sm_90a", 100), None);
        assert_eq!(pick_arch_specific(S, "w", "sm_90a", 89), None);
        assert_eq!(pick_arch_specific(S, "w", "sm_90", 90), None);
        assert_eq!(pick_arch_specific(S, "v", "sm_90a", 90), None);
        // the plain table never serves an arch-specific stem
        assert_eq!(pick_cubin(T, "w", 90), None);
    }

    #[test]
    fn spec_builders() {
        let s = ModuleSpec::embedded("gemm")
            .define("BLOCK_M", 128)
            .flag("DTYPE_BF16")
            .target("sm_90a");
        assert_eq!(s.options, vec!["-DBLOCK_M=128", "-DDTYPE_BF16"]);
        assert_eq!(s.arch.as_deref(), Some("sm_90a"));
        assert!(matches!(
            ModuleSpec::embedded("nope").resolve(),
            Err(GpuError::UnknownSource(_))
        ));
    }

    #[test]
    fn nvrtc_compiles_every_microbenchmark_when_present() {
        // Runs where libnvrtc loads (e.g. with PyPI's nvidia-cuda-nvrtc on LD_LIBRARY_PATH);
        // skipped silently elsewhere. Exercises the run-time compile path without a GPU.
        if !probe::is_present(Library::Nvrtc) {
            eprintln!("NVRTC not present: skipped");
            return;
        }
        for (stem, archs) in MICROBENCHMARKS {
            for arch in archs.iter() {
                let src = embedded_source(stem).unwrap();
                let opts = ["--ptxas-options=-v".to_string()];
                let out = nvrtc_compile(stem, src, &opts, arch)
                    .unwrap_or_else(|e| panic!("{stem} {arch}: {e}"));
                assert!(
                    out.cubin.len() > 100 && &out.cubin[..4] == b"\x7fELF",
                    "{stem}"
                );
                // no spills and no ptxas warning (e.g. wgmma serialized)
                assert!(
                    !out.log
                        .lines()
                        .any(|l| l.starts_with("ptxas") && l.to_lowercase().contains("warning")),
                    "{stem} {arch}: {}",
                    out.log
                );
                assert!(
                    !out
                        .log
                        .lines()
                        .any(|l| l.contains("spill stores") && !l.contains(" 0 bytes spill stores")),
                    "{stem} {arch}: {}",
                    out.log
                );
            }
        }
        // the cluster kernels of sm_topology exist from sm_90 only
        let has_cluster_kernel = |arch: &str| {
            let out = nvrtc_compile(
                "sm_topology",
                embedded_source("sm_topology").unwrap(),
                &[],
                arch,
            )
            .unwrap_or_else(|e| panic!("sm_topology {arch}: {e}"));
            out.cubin
                .windows(b"topo_where_cluster16".len())
                .any(|w| w == b"topo_where_cluster16")
        };
        assert!(has_cluster_kernel("sm_90"));
        assert!(!has_cluster_kernel("sm_80"));
        // wgmma exists only on the arch-specific target
        let plain = nvrtc_compile(
            "tc_wgmma",
            embedded_source("tc_wgmma").unwrap(),
            &[],
            "sm_90",
        );
        assert!(plain.is_err(), "tc_wgmma compiled for plain sm_90");
        let bad = nvrtc_compile(
            "bad",
            "extern \"C\" __global__ void k() { nope; }",
            &[],
            "sm_90",
        );
        assert!(matches!(bad, Err(GpuError::Compile { ref log, .. }) if log.contains("nope")));
    }

    #[test]
    fn nvrtc_compiles_the_hopper_kernel_for_sm_90a_when_present() {
        // The run-time path of the Hopper family (csrc/hopper_gemm.cu with its wgmma
        // wrappers inlined): NVRTC, no header, the arch-specific target; ptxas's report
        // in the log shows no spill and no warning (the family's table says the same).
        if !probe::is_present(Library::Nvrtc) {
            eprintln!("NVRTC not present: skipped");
            return;
        }
        let src = embedded_source("hopper_gemm").expect("csrc/hopper_gemm.cu is embedded");
        assert!(!src.contains("#include \"hopper_wgmma.cuh\""));
        for (defines, bf16) in [
            (
                [
                    "-DHG_BM=128",
                    "-DHG_BN=256",
                    "-DHG_STAGES=4",
                    "-DHG_CONSUMERS=2",
                ],
                false,
            ),
            (
                [
                    "-DHG_BM=64",
                    "-DHG_BN=192",
                    "-DHG_STAGES=6",
                    "-DHG_CONSUMERS=1",
                ],
                true,
            ),
        ] {
            let mut opts: Vec<String> = defines.iter().map(|d| d.to_string()).collect();
            if bf16 {
                opts.push("-DHG_BF16".into());
            }
            opts.push("--ptxas-options=-v".into());
            let out = nvrtc_compile("hopper_gemm", src, &opts, "sm_90a")
                .unwrap_or_else(|e| panic!("{defines:?}: {e}"));
            assert_eq!(&out.cubin[..4], b"\x7fELF");
            assert!(out.log.contains("origami_hopper_gemm"), "{}", out.log);
            assert!(out.log.contains("0 bytes spill stores"), "{}", out.log);
            assert!(!out.log.to_lowercase().contains("warning"), "{}", out.log);
        }
        // wgmma exists only on the arch-specific target
        let plain = nvrtc_compile("hopper_gemm", src, &[], "sm_90");
        assert!(plain.is_err());
    }

    #[test]
    fn atomic_write_leaves_no_temp() {
        let d = std::env::temp_dir().join(format!("origami-aw-{}", std::process::id()));
        let p = d.join("x.cubin");
        write_atomic(&p, b"abc").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"abc");
        let n = std::fs::read_dir(&d).unwrap().count();
        assert_eq!(n, 1);
        let _ = std::fs::remove_dir_all(&d);
    }
}
