//! The context wrapper: one device, one stream, device buffers, kernel launches, CUDA-event
//! timing of a closure, and CUDA graph capture/replay for small kernels (a host launch
//! from Rust costs ~12 us, measured on an H100, so kernels shorter than that are timed as
//! graph replays).
//!
//! All work goes to one non-blocking stream owned by [`Gpu`]; cudarc's per-buffer event
//! tracking is switched off (one stream needs none, and it would add events to every
//! launch and break graph capture).

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaGraph, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    ValidAsZeroBits,
};

use super::error::GpuError;
use super::module::{obtain_cubin, Kernel, Module, ModuleOrigin, ModuleSpec};
use super::nvml::{ClockSample, NvmlHandle};
use super::probe::{self, Library};
use crate::hw::DeviceProps;

#[cfg(target_endian = "big")]
compile_error!("kernel arguments are packed for little-endian hosts");

/// An open device: context, stream and properties.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ordinal: usize,
    props: DeviceProps,
    uuid: Option<String>,
    nvml: Option<NvmlHandle>,
}

/// Grid and block shape and dynamic shared memory of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub dyn_smem_bytes: u32,
}

impl LaunchDims {
    /// A 1-D launch of `blocks` blocks of `threads` threads.
    pub fn linear(blocks: u32, threads: u32) -> Self {
        Self {
            grid: (blocks, 1, 1),
            block: (threads, 1, 1),
            dyn_smem_bytes: 0,
        }
    }

    /// The same launch with dynamic shared memory.
    pub fn with_smem(mut self, bytes: u32) -> Self {
        self.dyn_smem_bytes = bytes;
        self
    }
}

/// A typed device allocation.
pub struct DeviceBuffer<T> {
    slice: CudaSlice<T>,
    stream: Arc<CudaStream>,
}

impl<T> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.slice.len() == 0
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.slice.num_bytes()
    }

    /// The device address (for kernel arguments and pointer arithmetic).
    pub fn device_addr(&self) -> u64 {
        let (p, _sync) = self.slice.device_ptr(&self.stream);
        p
    }
}

/// A tensor map (the driver's 128-byte, 64-byte-aligned `CUtensorMap`), passed to a kernel
/// by value (`const __grid_constant__` parameters of the Hopper kernel).
#[repr(C, align(64))]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TensorMap(pub [u8; 128]);

impl std::fmt::Debug for TensorMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TensorMap(128 bytes)")
    }
}

/// One kernel argument: a value of at most 8 bytes, or a tensor map.
enum Slot {
    Word(u64),
    Map(Box<TensorMap>),
}

/// Kernel arguments, in order. Borrowing the buffers keeps them alive until the launch.
#[derive(Default)]
pub struct KernelArgs<'a> {
    slots: Vec<Slot>,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> KernelArgs<'a> {
    /// No arguments yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A device pointer to the start of `buf`.
    pub fn buf<T>(mut self, buf: &'a DeviceBuffer<T>) -> Self {
        self.slots.push(Slot::Word(buf.device_addr()));
        self
    }

    /// A device pointer `offset_elems` elements into `buf` (bounds-checked).
    pub fn buf_at<T>(mut self, buf: &'a DeviceBuffer<T>, offset_elems: usize) -> Self {
        assert!(
            offset_elems <= buf.len(),
            "offset {offset_elems} beyond buffer of {}",
            buf.len()
        );
        self.slots.push(Slot::Word(
            buf.device_addr() + (offset_elems * std::mem::size_of::<T>()) as u64,
        ));
        self
    }

    pub fn u32(mut self, v: u32) -> Self {
        self.slots.push(Slot::Word(u64::from(v)));
        self
    }

    pub fn i32(mut self, v: i32) -> Self {
        self.slots.push(Slot::Word(u64::from(v as u32)));
        self
    }

    pub fn u64(mut self, v: u64) -> Self {
        self.slots.push(Slot::Word(v));
        self
    }

    pub fn f32(mut self, v: f32) -> Self {
        self.slots.push(Slot::Word(u64::from(v.to_bits())));
        self
    }

    pub fn f64(mut self, v: f64) -> Self {
        self.slots.push(Slot::Word(v.to_bits()));
        self
    }

    /// A tensor map, by value.
    pub fn tensor_map(mut self, map: &TensorMap) -> Self {
        self.slots.push(Slot::Map(Box::new(*map)));
        self
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// A captured CUDA graph, replayed on the [`Gpu`]'s stream.
pub struct Graph {
    g: CudaGraph,
}

impl Graph {
    /// Launch one replay (asynchronous).
    pub fn replay(&self) -> Result<(), GpuError> {
        self.g
            .launch()
            .map_err(GpuError::driver("replaying a CUDA graph"))
    }
}

impl Gpu {
    /// Open device `ordinal`: checks the driver, creates (retains) the primary context and a
    /// stream. NVRTC is only required later, when a module has no prebuilt cubin.
    pub fn open(ordinal: usize) -> Result<Self, GpuError> {
        let props = probe::device_props(ordinal)?;
        let ctx = CudaContext::new(ordinal).map_err(GpuError::driver(format!(
            "creating a context on device {ordinal}"
        )))?;
        // SAFETY: all buffers of this Gpu live on its one stream.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx
            .new_stream()
            .map_err(GpuError::driver("creating a stream"))?;
        let uuid = probe::device_uuid(ordinal).ok();
        Ok(Self {
            ctx,
            stream,
            ordinal,
            props,
            uuid,
            nvml: NvmlHandle::init().ok(),
        })
    }

    /// Device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// What the driver reports about the device.
    pub fn props(&self) -> &DeviceProps {
        &self.props
    }

    /// Compute capability as one number, e.g. 90 for 9.0.
    pub fn arch(&self) -> u32 {
        self.props.compute_capability[0] * 10 + self.props.compute_capability[1]
    }

    /// The device UUID (NVML spelling), when the driver reports it.
    pub fn uuid(&self) -> Option<&str> {
        self.uuid.as_deref()
    }

    /// Free and total device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize), GpuError> {
        self.ctx
            .mem_get_info()
            .map_err(GpuError::driver("reading free memory"))
    }

    /// Wait for all work on the stream.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream
            .synchronize()
            .map_err(GpuError::driver("synchronizing"))
    }

    /// A zero-filled buffer of `n` elements.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        n: usize,
    ) -> Result<DeviceBuffer<T>, GpuError> {
        let slice = self
            .stream
            .alloc_zeros::<T>(n)
            .map_err(GpuError::driver(format!(
                "allocating {} bytes",
                n * std::mem::size_of::<T>()
            )))?;
        Ok(DeviceBuffer {
            slice,
            stream: self.stream.clone(),
        })
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: DeviceRepr>(&self, data: &[T]) -> Result<DeviceBuffer<T>, GpuError> {
        let slice = self
            .stream
            .clone_htod(data)
            .map_err(GpuError::driver(format!(
                "uploading {} bytes",
                std::mem::size_of_val(data)
            )))?;
        Ok(DeviceBuffer {
            slice,
            stream: self.stream.clone(),
        })
    }

    /// Overwrite `buf` with `data` (same length).
    pub fn write<T: DeviceRepr>(
        &self,
        buf: &mut DeviceBuffer<T>,
        data: &[T],
    ) -> Result<(), GpuError> {
        assert_eq!(buf.len(), data.len(), "write: length mismatch");
        self.stream
            .memcpy_htod(data, &mut buf.slice)
            .map_err(GpuError::driver("copying to the device"))
    }

    /// Copy a buffer back to the host (synchronizes).
    pub fn download<T: DeviceRepr>(&self, buf: &DeviceBuffer<T>) -> Result<Vec<T>, GpuError> {
        self.stream
            .clone_dtoh(&buf.slice)
            .map_err(GpuError::driver("copying from the device"))
    }

    /// Set every byte of `buf` to zero (asynchronous).
    pub fn zero<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        buf: &mut DeviceBuffer<T>,
    ) -> Result<(), GpuError> {
        self.stream
            .memset_zeros(&mut buf.slice)
            .map_err(GpuError::driver("clearing a buffer"))
    }

    /// Load a module (prebuilt cubin, cached or fresh NVRTC compile; see `module`). A
    /// prebuilt cubin the driver refuses falls back to NVRTC.
    pub fn load_module(&self, spec: &ModuleSpec) -> Result<Module, GpuError> {
        let (name, cubin, origin, log) = obtain_cubin(spec, self.arch())?;
        match self.load_cubin(&cubin) {
            Ok(m) => Ok(Module::new(
                m,
                self.ctx.clone(),
                self.stream.clone(),
                name,
                origin,
                log,
            )),
            Err(e) if matches!(origin, ModuleOrigin::Prebuilt { .. }) => {
                // e.g. a driver older than the nvcc that built the cubin: compile instead.
                let (name2, text) = spec.resolve()?;
                let (_, cubin2, origin2, log2) =
                    super::module::nvrtc_cubin(&name2, &text, spec, self.arch()).map_err(|e2| {
                        GpuError::Unsupported(format!(
                            "prebuilt cubin refused ({e}); NVRTC fallback failed: {e2}"
                        ))
                    })?;
                let m = self.load_cubin(&cubin2)?;
                Ok(Module::new(
                    m,
                    self.ctx.clone(),
                    self.stream.clone(),
                    name2,
                    origin2,
                    log2,
                ))
            }
            Err(e) => Err(e),
        }
    }

    fn load_cubin(&self, cubin: &[u8]) -> Result<Arc<cudarc::driver::CudaModule>, GpuError> {
        // cudarc's Ptx type also carries cubins (Ptx::from_binary), loaded by
        // cuModuleLoadData; libnvrtc is not touched.
        self.ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(cubin.to_vec()))
            .map_err(GpuError::driver("loading a module"))
    }

    /// Launch `kernel` on the stream (asynchronous).
    pub fn launch(
        &self,
        kernel: &Kernel,
        dims: LaunchDims,
        args: KernelArgs<'_>,
    ) -> Result<(), GpuError> {
        let mut slots = args.slots;
        let mut params: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| match s {
                Slot::Word(w) => w as *mut u64 as *mut c_void,
                Slot::Map(m) => m.as_mut() as *mut TensorMap as *mut c_void,
            })
            .collect();
        self.ctx
            .bind_to_thread()
            .map_err(GpuError::driver("binding the context"))?;
        // SAFETY: each parameter points at an 8-byte slot holding the value in its low bytes
        // (little-endian), or at a boxed 128-byte tensor map, alive until cuLaunchKernel
        // returns (it copies the values). The caller matches the argument list to the
        // kernel's signature.
        unsafe {
            cudarc::driver::result::launch_kernel(
                kernel.f.cu_function(),
                dims.grid,
                dims.block,
                dims.dyn_smem_bytes,
                self.stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(GpuError::driver(format!(
            "launching '{}' with {dims:?}",
            kernel.name()
        )))
    }

    /// Time what `work` enqueues on the stream with two CUDA events; milliseconds.
    pub fn time_ms(&self, work: impl FnOnce() -> Result<(), GpuError>) -> Result<f64, GpuError> {
        time_on_stream(&self.ctx, &self.stream, work)
    }

    /// A queue of event-timed batches on this device's stream ([`EventQueue`]).
    pub fn event_queue(&self) -> EventQueue {
        EventQueue::new(&self.ctx, &self.stream)
    }

    /// Capture what `work` enqueues into a CUDA graph (nothing runs during capture).
    pub fn capture(&self, work: impl FnOnce() -> Result<(), GpuError>) -> Result<Graph, GpuError> {
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(GpuError::driver("beginning graph capture"))?;
        let r = work();
        let g = self
            .stream
            .end_capture(CUgraphInstantiate_flags(0))
            .map_err(GpuError::driver("ending graph capture"));
        r?;
        let g = g?.ok_or_else(|| GpuError::Unsupported("graph capture recorded nothing".into()))?;
        Ok(Graph { g })
    }

    /// Mean milliseconds per replay of `graph` over `replays` back-to-back replays (one warm
    /// replay first, untimed).
    pub fn time_graph_ms(&self, graph: &Graph, replays: u32) -> Result<f64, GpuError> {
        graph.replay()?;
        let n = replays.max(1);
        let ms = self.time_ms(|| {
            for _ in 0..n {
                graph.replay()?;
            }
            Ok(())
        })?;
        Ok(ms / f64::from(n))
    }

    /// An NVML reading of this device (Err without NVML: not fatal).
    pub fn nvml_sample(&self) -> Result<ClockSample, GpuError> {
        self.nvml()?
            .sample(self.uuid.as_deref().unwrap_or(""), self.ordinal)
    }

    /// NVML's total-energy counter of this device, millijoules (Err without NVML).
    pub fn energy_mj(&self) -> Result<u64, GpuError> {
        self.nvml()?
            .energy_mj(self.uuid.as_deref().unwrap_or(""), self.ordinal)
    }

    /// NVML's enforced power limit of this device, watts (Err without NVML or where the
    /// GPU does not report one). Read only.
    pub fn power_limit_w(&self) -> Result<f64, GpuError> {
        self.nvml()?
            .enforced_power_limit_w(self.uuid.as_deref().unwrap_or(""), self.ordinal)
    }

    /// NVML's current SM clock of this device, MHz (Err without NVML).
    pub fn nvml_sm_mhz(&self) -> Result<u32, GpuError> {
        self.nvml()?
            .sm_clock_mhz(self.uuid.as_deref().unwrap_or(""), self.ordinal)
    }

    /// The driver version string from NVML (e.g. "580.95.05").
    pub fn driver_version(&self) -> Result<String, GpuError> {
        self.nvml()?.driver_version()
    }

    fn nvml(&self) -> Result<&super::nvml::NvmlHandle, GpuError> {
        self.nvml
            .as_ref()
            .ok_or_else(|| GpuError::Nvml("NVML not available".into()))
    }

    /// Whether NVRTC is present (needed for modules without a prebuilt cubin).
    pub fn has_nvrtc(&self) -> bool {
        probe::is_present(Library::Nvrtc)
    }
}

/// Batches of work on a stream, each between two timing events, polled without waiting:
/// the GPU side of `gemm::energy::LaunchQueue` (the queue stays full while the host reads
/// NVML).
pub struct EventQueue {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pending: std::collections::VecDeque<(CudaEvent, CudaEvent)>,
    done: u64,
    done_ms: f64,
}

impl EventQueue {
    pub(crate) fn new(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> EventQueue {
        EventQueue {
            ctx: ctx.clone(),
            stream: stream.clone(),
            pending: Default::default(),
            done: 0,
            done_ms: 0.0,
        }
    }

    /// Enqueue what `work` enqueues between two events; returns at once.
    pub fn push(&mut self, work: impl FnOnce() -> Result<(), GpuError>) -> Result<(), GpuError> {
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let start = self
            .ctx
            .new_event(flags)
            .map_err(GpuError::driver("creating an event"))?;
        let end = self
            .ctx
            .new_event(flags)
            .map_err(GpuError::driver("creating an event"))?;
        start
            .record(&self.stream)
            .map_err(GpuError::driver("recording an event"))?;
        work()?;
        end.record(&self.stream)
            .map_err(GpuError::driver("recording an event"))?;
        self.pending.push_back((start, end));
        Ok(())
    }

    /// Batches finished so far (in order) and their GPU milliseconds in all; never waits.
    pub fn poll(&mut self) -> Result<(u64, f64), GpuError> {
        while let Some((start, end)) = self.pending.front() {
            if !end
                .try_is_complete()
                .map_err(GpuError::driver("querying an event"))?
            {
                break;
            }
            let ms = start
                .elapsed_ms(end)
                .map_err(GpuError::driver("reading event time"))?;
            self.done += 1;
            self.done_ms += f64::from(ms);
            self.pending.pop_front();
        }
        Ok((self.done, self.done_ms))
    }

    /// Wait for every batch, then count them.
    pub fn drain(&mut self) -> Result<(u64, f64), GpuError> {
        if let Some((_, end)) = self.pending.back() {
            end.synchronize()
                .map_err(GpuError::driver("waiting for queued work"))?;
        }
        self.poll()
    }
}

/// Time what `work` enqueues on `stream` with two CUDA events (`CU_EVENT_DEFAULT`, so they
/// record time); milliseconds. Shared by the context and the cuBLAS handle.
pub(crate) fn time_on_stream(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    work: impl FnOnce() -> Result<(), GpuError>,
) -> Result<f64, GpuError> {
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let start = ctx
        .new_event(flags)
        .map_err(GpuError::driver("creating an event"))?;
    let end = ctx
        .new_event(flags)
        .map_err(GpuError::driver("creating an event"))?;
    start
        .record(stream)
        .map_err(GpuError::driver("recording an event"))?;
    work()?;
    end.record(stream)
        .map_err(GpuError::driver("recording an event"))?;
    end.synchronize()
        .map_err(GpuError::driver("waiting for timed work"))?;
    let ms = start
        .elapsed_ms(&end)
        .map_err(GpuError::driver("reading event time"))?;
    Ok(f64::from(ms))
}
