//! The GPU layer: the only place that touches cudarc and NVML (docs/architecture.md).
//! Layered like cudarc's own sys / result / safe split: `probe` answers "is it there?"
//! without side effects, `Gpu` wraps one device's context and stream, `module` turns CUDA
//! sources into loaded kernels, `nvml` reads clocks.
//!
//! - probing: [`probe::is_present`], [`probe::require`], [`probe::device_count`],
//!   [`device_props`] (cheap: driver attributes only; `origami-select` uses it for tier 1),
//!   [`probe::probe_all`]; every missing piece is a typed [`GpuError`] whose
//!   [`GpuError::exit_code`] is 4 and whose message names the fix.
//! - context: [`Gpu::open`], buffers ([`Gpu::alloc_zeros`], [`Gpu::upload`],
//!   [`Gpu::download`]), launches ([`Gpu::launch`] with [`KernelArgs`] and [`LaunchDims`]).
//! - modules: [`Gpu::load_module`] with a [`ModuleSpec`] (embedded `csrc/` source or text,
//!   `-D` options, optional target such as `sm_90a`): prebuilt cubin from build.rs for the
//!   device's architecture, else NVRTC through a disk cache; [`Module::kernel`],
//!   [`Kernel::attrs`] (registers, local memory = spills, shared memory),
//!   [`Kernel::set_max_dynamic_smem`], [`Kernel::allow_non_portable_cluster_size`],
//!   [`Kernel::max_active_blocks_per_sm`],
//!   [`Module::global_i32`]; [`module::nvrtc_compile`] compiles without a GPU.
//! - timing: [`Gpu::time_ms`] (CUDA events around a closure), [`Gpu::capture`] and
//!   [`Gpu::time_graph_ms`] (graph replay for kernels shorter than the launch cost).
//! - tensor maps: [`tma::encode_2d`] (cuTensorMapEncodeTiled) -> [`TensorMap`], passed by
//!   value with `KernelArgs::tensor_map` (the Hopper kernel).
//! - clocks: [`Gpu::nvml_sample`] -> [`ClockSample`] (SM/memory clocks, maxima, throttle
//!   reasons, temperature, power); absent NVML is an `Err`, never fatal to a measurement.

mod context;
pub mod cublas;
mod error;
pub mod module;
pub mod nvml;
pub mod probe;
pub mod tma;

pub use context::{DeviceBuffer, EventQueue, Gpu, Graph, KernelArgs, LaunchDims, TensorMap};
pub use error::GpuError;
pub use module::{Kernel, KernelAttrs, Module, ModuleOrigin, ModuleSpec, SourceRef};
pub use nvml::ClockSample;
pub use probe::{device_props, Library};
