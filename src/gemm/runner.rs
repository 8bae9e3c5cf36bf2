//! The GPU side of the runner, for the origami family's kernel (csrc/gemm.cu) or the hopper
//! family's (csrc/hopper_gemm.cu, [`RunnerKernel`]): compile every config (NVRTC, in
//! parallel threads, through the gpu layer's disk cache), check each module's exported
//! shared-memory size against the family's formula, read registers and local memory, make
//! fresh random inputs on the device, verify each config against cuBLAS with C poisoned
//! first, and time configs and cuBLAS as CUDA graphs of back-to-back launches rotating
//! through copies of the inputs (the hopper kernel's tensor maps encoded per copy).
//!
//! Mirrors the development harness (`scripts/gemm_dev/harness.cu`, in git history up to
//! commit c051717) with two differences, both stated in
//! docs/bench.md: inputs are fresh per shape (one new seed per shape and one cuBLAS
//! reference), not per config; and a batch is a CUDA graph rather than host launches.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::dtype::Dtype;
use crate::gpu::cublas::Cublas;
use crate::gpu::module::{cache_dir, cache_key, cache_path, nvrtc_compile, write_atomic};
use crate::gpu::{
    probe, tma, DeviceBuffer, Gpu, GpuError, Kernel, KernelArgs, KernelAttrs, LaunchDims, Module,
    ModuleOrigin, ModuleSpec, TensorMap,
};
use crate::model::{Config, Problem};

use super::hopper_kernel;
use super::kernel::{
    check_problem, error_bound, instance_key, launch_dims, module_spec, rotation_copies,
    smem_bytes, KERNEL_NAME, SMEM_SYMBOL,
};
use super::measure::{measure, BatchTimer, Timing, TimingPolicy};
use super::verify::{Verification, NAN_U16};
use super::GemmError;

const UTIL_SOURCE: &str = include_str!("util_kernels.cu");

/// Which of the project's kernels the runner compiles and launches: the `origami`
/// family's (csrc/gemm.cu) or the `hopper` family's (csrc/hopper_gemm.cu, sm_90a, tensor
/// maps per launch). Both take A M x K, B N x K and C M x N, so the inputs, the cuBLAS
/// reference and the check are shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunnerKernel {
    Origami,
    Hopper,
}

impl RunnerKernel {
    /// The kernel of a family that has a runner.
    pub fn of_family(name: &str) -> Option<RunnerKernel> {
        match name {
            "origami" => Some(RunnerKernel::Origami),
            "hopper" => Some(RunnerKernel::Hopper),
            _ => None,
        }
    }

    fn module_spec(self, c: &Config, dtype: Dtype) -> ModuleSpec {
        match self {
            RunnerKernel::Origami => module_spec(c, dtype),
            RunnerKernel::Hopper => hopper_kernel::module_spec(c, dtype),
        }
    }

    fn instance_key(self, c: &Config) -> Config {
        match self {
            RunnerKernel::Origami => instance_key(c),
            RunnerKernel::Hopper => hopper_kernel::instance_key(c),
        }
    }

    /// Whether a config is an instance of this kernel for an input type.
    pub fn check_config(self, c: &Config, dtype: Dtype) -> Result<(), GemmError> {
        match self {
            RunnerKernel::Origami => super::kernel::check_config(c, dtype),
            RunnerKernel::Hopper => hopper_kernel::check_config(c),
        }
    }

    /// Whether a config of this kernel can run a problem (beyond the problem's own rule).
    pub fn check_launch(self, c: &Config, p: &Problem) -> Result<(), GemmError> {
        match self {
            RunnerKernel::Origami => super::kernel::check_launch(c, p),
            RunnerKernel::Hopper => Ok(()),
        }
    }

    /// Whether this kernel can run a problem.
    pub fn check_problem(self, p: &Problem) -> Result<(), GemmError> {
        match self {
            RunnerKernel::Origami => check_problem(p),
            RunnerKernel::Hopper => hopper_kernel::check_problem(p),
        }
    }

    fn smem_bytes(self, c: &Config, dtype: Dtype) -> u64 {
        match self {
            RunnerKernel::Origami => smem_bytes(c, dtype),
            RunnerKernel::Hopper => hopper_kernel::smem_bytes(c),
        }
    }

    fn symbols(self) -> (&'static str, &'static str) {
        match self {
            RunnerKernel::Origami => (KERNEL_NAME, SMEM_SYMBOL),
            RunnerKernel::Hopper => (hopper_kernel::KERNEL_NAME, hopper_kernel::SMEM_SYMBOL),
        }
    }
}

/// One compiled instance.
pub struct Instance {
    pub config: Config,
    _module: Module,
    kernel: Kernel,
    /// Split-K's second kernel, in the same module (hopper instances only).
    reduce: Option<Kernel>,
    pub attrs: KernelAttrs,
    pub smem_bytes: u32,
    pub origin: ModuleOrigin,
}

/// Inputs, outputs and the reference of one shape on the device.
pub struct ShapeData {
    pub problem: Problem,
    pub rotation: u32,
    a: Vec<DeviceBuffer<u16>>,
    b: Vec<DeviceBuffer<u16>>,
    c: Vec<DeviceBuffer<u16>>,
    reference: DeviceBuffer<u16>,
    acc: DeviceBuffer<f64>,
    /// Split-K's fp32 partial tiles: room for the most runs of the family's space whose
    /// workspace is allowed for this shape (hopper runner only; none when no split fits).
    workspace: Option<DeviceBuffer<f32>>,
    pub seed: u64,
}

/// The runner: a GPU, cuBLAS, the helper kernels and the compiled instances.
pub struct Runner {
    pub gpu: Gpu,
    pub cublas: Cublas,
    pub dtype: Dtype,
    _util: Module,
    fill_random: Kernel,
    fill_u16: Kernel,
    rel_err: Kernel,
    instances: HashMap<Config, Result<Instance, String>>,
    kind: RunnerKernel,
}

/// The helper kernels' element kind (src/gemm/util_kernels.cu): 0 fp16, 1 bf16, 2 fp32
/// (the storage of tf32 problems).
fn element_kind(d: Dtype) -> i32 {
    match d {
        Dtype::Bf16 => 1,
        Dtype::Tf32 => 2,
        _ => 0,
    }
}

/// 16-bit slots of device memory per element: the buffers are `u16` whatever the type
/// (2 slots per fp32 element of a tf32 problem).
fn slots_per_element(d: Dtype) -> usize {
    (d.bits() / 16).max(1) as usize
}

/// Warm the NVRTC disk cache for `specs` with `threads` threads (NVRTC is thread-safe per
/// program); `Gpu::load_module` then finds every cubin there. Returns (compiled, failed)
/// with the failures' messages. Without a cache directory it does nothing.
pub fn precompile(
    specs: &[ModuleSpec],
    arch: u32,
    threads: usize,
    progress: &(dyn Fn() + Sync),
) -> (usize, Vec<String>) {
    let Some(dir) = cache_dir() else {
        return (0, Vec::new());
    };
    let Ok((maj, min)) = probe::nvrtc_version() else {
        return (0, Vec::new());
    };
    let nvrtc = format!("{maj}.{min}");
    let device_arch = format!("sm_{arch}");
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let fails = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(spec) = specs.get(i) else { break };
                let Ok((name, text)) = spec.resolve() else {
                    progress();
                    continue;
                };
                // the spec's own target (sm_90a for the Hopper kernel), else the device's
                let arch_s = spec.arch.as_deref().unwrap_or(&device_arch);
                let key = cache_key(&text, &spec.options, arch_s, &nvrtc);
                let path = cache_path(&dir, &name, &key);
                if !path.exists() {
                    match nvrtc_compile(&name, &text, &spec.options, arch_s) {
                        Ok(out) => {
                            let _ = write_atomic(&path, &out.cubin);
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => fails
                            .lock()
                            .expect("no thread panics holding the lock")
                            .push(format!("{}: {e}", spec.options.join(" "))),
                    }
                }
                progress();
            });
        }
    });
    (done.into_inner(), fails.into_inner().unwrap_or_default())
}

/// A timer over CUDA graphs of our kernel.
struct KernelTimer<'a> {
    r: &'a Runner,
    inst: &'a Instance,
    data: &'a ShapeData,
    dims: LaunchDims,
    plan: hopper_kernel::SplitPlan,
    /// The config launched (its group size and `swap` are run-time arguments of the
    /// instance, which serves every config with the same `instance_key`).
    config: Config,
    graph: Option<(u32, crate::gpu::Graph)>,
}

impl Runner {
    /// Open the runner on `gpu` for `kind`'s kernel: cuBLAS and the helper kernels.
    pub fn new(gpu: Gpu, dtype: Dtype, kind: RunnerKernel) -> Result<Self, GemmError> {
        super::kernel::check_dtype(dtype)?;
        if kind == RunnerKernel::Hopper && gpu.arch() / 10 != 9 {
            return Err(GemmError::BadInput(format!(
                "the hopper family's kernel needs compute capability 9.x (sm_90a); this GPU is sm_{}",
                gpu.arch()
            )));
        }
        let cublas = Cublas::new(&gpu)?;
        let util = gpu.load_module(&ModuleSpec::text("origami_gemm_util", UTIL_SOURCE))?;
        let fill_random = util.kernel("origami_fill_random")?;
        let fill_u16 = util.kernel("origami_fill_u16")?;
        let rel_err = util.kernel("origami_rel_err")?;
        Ok(Self {
            gpu,
            cublas,
            dtype,
            _util: util,
            fill_random,
            fill_u16,
            rel_err,
            instances: HashMap::new(),
            kind,
        })
    }

    /// Compile (in parallel) and load every config; failures are kept per config.
    pub fn compile_all(
        &mut self,
        configs: &[Config],
        threads: usize,
        progress: &(dyn Fn() + Sync),
    ) -> Vec<String> {
        let kind = self.kind;
        let mut keys: Vec<Config> = configs.iter().map(|c| kind.instance_key(c)).collect();
        keys.sort();
        keys.dedup();
        keys.retain(|k| !self.instances.contains_key(k));
        let specs: Vec<ModuleSpec> = keys
            .iter()
            .map(|c| kind.module_spec(c, self.dtype))
            .collect();
        let (_, mut fails) = precompile(&specs, self.gpu.arch(), threads, progress);
        for k in keys {
            let r = self.load_instance(&k).map_err(|e| e.to_string());
            if let Err(e) = &r {
                fails.push(format!("{k}: {e}"));
            }
            self.instances.insert(k, r);
        }
        fails.sort();
        fails.dedup();
        fails
    }

    fn load_instance(&self, c: &Config) -> Result<Instance, GemmError> {
        let kind = self.kind;
        kind.check_config(c, self.dtype)?;
        let want = kind.smem_bytes(c, self.dtype);
        let max = self.gpu.props().smem_per_block_optin_bytes;
        if want > max {
            return Err(GemmError::BadInput(format!(
                "config {c}: needs {want} bytes of shared memory, the GPU allows {max} per block"
            )));
        }
        let (kernel_name, smem_symbol) = kind.symbols();
        let module = self.gpu.load_module(&kind.module_spec(c, self.dtype))?;
        let got = module.global_i32(smem_symbol)?;
        if i64::from(got) != want as i64 {
            return Err(GemmError::SmemMismatch {
                config: c.to_string(),
                module_bytes: i64::from(got),
                formula_bytes: want,
            });
        }
        let kernel = module.kernel(kernel_name)?;
        kernel.set_max_dynamic_smem(want as u32)?;
        let attrs = kernel.attrs()?;
        if kind == RunnerKernel::Hopper && attrs.local_size_bytes > 0 {
            // the family's table (ptxas, with its warnings) keeps such configs out of the
            // model's space; one asked for by hand is refused, not timed
            return Err(GemmError::BadInput(format!(
                "config {c}: {} bytes of local memory per thread (spills): not a healthy instance",
                attrs.local_size_bytes
            )));
        }
        let reduce = match kind {
            RunnerKernel::Hopper => Some(module.kernel(hopper_kernel::REDUCE_KERNEL_NAME)?),
            RunnerKernel::Origami => None,
        };
        Ok(Instance {
            config: kind.instance_key(c),
            origin: module.origin().clone(),
            _module: module,
            kernel,
            reduce,
            attrs,
            smem_bytes: want as u32,
        })
    }

    /// The compiled instance of a config, or why there is none.
    pub fn instance(&self, c: &Config) -> Result<&Instance, String> {
        match self.instances.get(&self.kind.instance_key(c)) {
            Some(Ok(i)) => Ok(i),
            Some(Err(e)) => Err(e.clone()),
            None => Err(format!("config {c} was not compiled")),
        }
    }

    /// Allocate and fill the inputs of a shape (fresh random values from `seed`), and
    /// compute cuBLAS's reference on copy 0.
    pub fn prepare(&self, p: &Problem, seed: u64) -> Result<ShapeData, GemmError> {
        self.kind.check_problem(p)?;
        if p.dtype != self.dtype {
            return Err(GemmError::BadInput(format!(
                "shape {}x{}x{} is {}, the runner was opened for {}",
                p.m, p.n, p.k, p.dtype, self.dtype
            )));
        }
        let rotation = rotation_copies(p, self.gpu.props().l2_bytes);
        let e = slots_per_element(p.dtype);
        let (mk, nk, mn) = (
            (p.m * p.k) as usize * e,
            (p.n * p.k) as usize * e,
            (p.m * p.n) as usize * e,
        );
        let mut data = ShapeData {
            problem: *p,
            rotation,
            a: Vec::new(),
            b: Vec::new(),
            c: Vec::new(),
            reference: self.gpu.alloc_zeros::<u16>(mn)?,
            acc: self.gpu.alloc_zeros::<f64>(3)?,
            workspace: match self.workspace_elems(p) {
                0 => None,
                n => Some(self.gpu.alloc_zeros::<f32>(n as usize)?),
            },
            seed,
        };
        let mut s = seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
        for _ in 0..rotation {
            for (len, list) in [(mk, &mut data.a), (nk, &mut data.b)] {
                let buf = self.gpu.alloc_zeros::<u16>(len)?;
                s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
                self.fill(&buf, s)?;
                list.push(buf);
            }
            data.c.push(self.gpu.alloc_zeros::<u16>(mn)?);
        }
        self.gpu.synchronize()?;
        self.cublas.gemm_tn(
            self.dtype,
            data.a[0].device_addr(),
            data.b[0].device_addr(),
            data.reference.device_addr(),
            p.m,
            p.n,
            p.k,
        )?;
        self.cublas.synchronize()?;
        Ok(data)
    }

    /// fp32 elements of a shape's split-K workspace: the most runs of the family's space
    /// whose workspace is allowed ([`hopper_kernel::MAX_WORKSPACE_BYTES`]); 0 for the
    /// origami kernel or when no split is allowed.
    fn workspace_elems(&self, p: &Problem) -> u64 {
        if self.kind != RunnerKernel::Hopper {
            return 0;
        }
        use crate::model::family::hopper::{config_violation, HopperFamily};
        use crate::model::family::KernelFamily;
        let split = HopperFamily
            .split_ks()
            .iter()
            .map(|&r| u64::from(r) * p.m * p.n)
            .filter(|&e| e > p.m * p.n && e * 4 <= hopper_kernel::MAX_WORKSPACE_BYTES)
            .max()
            .unwrap_or(0);
        // Stream-K: the largest tile's partial per SM, and a flag per SM
        let tile = HopperFamily
            .configs()
            .iter()
            .filter(|c| config_violation(c).is_none())
            .map(|c| u64::from(c.block_m) * u64::from(c.block_n))
            .max()
            .unwrap_or(0);
        let stream = u64::from(self.gpu.props().sm_count) * (tile + 1);
        split.max(stream)
    }

    /// Why a config cannot be launched on a problem although it is compiled (a split-K
    /// workspace beyond the limit), if so.
    pub fn launch_violation(&self, c: &Config, p: &Problem) -> Option<String> {
        match self.kind {
            RunnerKernel::Hopper => self.split_plan(c, p).violation(c, p),
            RunnerKernel::Origami => None,
        }
    }

    fn fill(&self, buf: &DeviceBuffer<u16>, seed: u64) -> Result<(), GemmError> {
        self.gpu.launch(
            &self.fill_random,
            LaunchDims::linear(2048, 256),
            KernelArgs::new()
                .buf(buf)
                .u64((buf.len() / slots_per_element(self.dtype)) as u64)
                .u64(seed)
                .i32(element_kind(self.dtype)),
        )?;
        Ok(())
    }

    fn poison(&self, buf: &DeviceBuffer<u16>) -> Result<(), GemmError> {
        self.gpu.launch(
            &self.fill_u16,
            LaunchDims::linear(2048, 256),
            KernelArgs::new()
                .buf(buf)
                .u64(buf.len() as u64)
                .u32(u32::from(NAN_U16)),
        )?;
        Ok(())
    }

    /// Poison C, run the config once on copy 0 (timed with events: a first sample for
    /// long kernels), compare with cuBLAS.
    pub fn verify(
        &self,
        data: &mut ShapeData,
        c: &Config,
    ) -> Result<(Verification, f64), GemmError> {
        let inst = self.instance(c).map_err(GemmError::Runtime)?;
        if let Some(why) = self.launch_violation(c, &data.problem) {
            return Err(GemmError::BadInput(why));
        }
        let dims = self.launch_dims(c, &data.problem);
        let plan = self.split_plan(c, &data.problem);
        self.poison(&data.c[0])?;
        if let Some(w) = data.workspace.as_mut() {
            // a run that wrote nothing would add zeros: the check against cuBLAS fails
            self.gpu.zero(w)?;
        }
        let launch_ms = self
            .gpu
            .time_ms(|| self.launch_gemm(inst, data, 0, dims, c, plan))?;
        self.gpu.zero(&mut data.acc)?;
        self.gpu.launch(
            &self.rel_err,
            LaunchDims::linear(1024, 256),
            KernelArgs::new()
                .buf(&data.c[0])
                .buf(&data.reference)
                .u64((data.c[0].len() / slots_per_element(self.dtype)) as u64)
                .buf(&data.acc)
                .i32(element_kind(self.dtype)),
        )?;
        let acc = self.gpu.download(&data.acc)?;
        Ok((
            Verification::from_sums(acc[0], acc[1], acc[2], error_bound(self.dtype)),
            launch_ms,
        ))
    }

    fn split_plan(&self, c: &Config, p: &Problem) -> hopper_kernel::SplitPlan {
        hopper_kernel::SplitPlan::of(c, p, self.gpu.props().sm_count)
    }

    fn launch_dims(&self, c: &Config, p: &Problem) -> LaunchDims {
        match self.kind {
            RunnerKernel::Origami => launch_dims(c, p),
            RunnerKernel::Hopper => hopper_kernel::launch_dims(c, p, self.gpu.props().sm_count),
        }
    }

    fn launch_gemm(
        &self,
        inst: &Instance,
        data: &ShapeData,
        copy: usize,
        dims: LaunchDims,
        config: &Config,
        plan: hopper_kernel::SplitPlan,
    ) -> Result<(), GpuError> {
        let p = &data.problem;
        let group_m = config.group_m as i32;
        if self.kind == RunnerKernel::Hopper {
            // The maps name this copy's buffers; encoding them is host work, outside a
            // captured graph's replay.
            let bf16 = self.dtype == Dtype::Bf16;
            let [ma, mb, mc] = hopper_kernel::map_shapes(config, p);
            // with `swap` the kernel computes C^T = B A^T: its A is the user's B
            let kp = crate::model::problem::kernel_problem(p, config);
            let swapped = config.switches.swap;
            let (a, b) = if swapped {
                (&data.b[copy], &data.a[copy])
            } else {
                (&data.a[copy], &data.b[copy])
            };
            let ta = tma::encode_2d(a.device_addr(), &ma, bf16)?;
            let tb = tma::encode_2d(b.device_addr(), &mb, bf16)?;
            let c_by_tma = hopper_kernel::c_by_tma(p);
            let tc = if c_by_tma {
                tma::encode_2d(data.c[copy].device_addr(), &mc, bf16)?
            } else {
                TensorMap([0; 128])
            };
            let split = plan.runs > 1;
            let stream = plan.stream_ctas > 0;
            let ws = match (&data.workspace, split || stream) {
                (Some(w), true) if w.len() as u64 >= plan.workspace_elems(p) => w.device_addr(),
                (_, true) => {
                    return Err(GpuError::Unsupported(format!(
                        "config {}: no workspace of {} floats for {}x{}",
                        config,
                        plan.workspace_elems(p),
                        p.m,
                        p.n
                    )))
                }
                (_, false) => 0,
            };
            self.gpu.launch(
                &inst.kernel,
                dims,
                KernelArgs::new()
                    .tensor_map(&ta)
                    .tensor_map(&tb)
                    .tensor_map(&tc)
                    .buf(&data.c[copy])
                    .i32(kp.m as i32)
                    .i32(kp.n as i32)
                    .i32(kp.k as i32)
                    .i32(group_m)
                    .i32(i32::from(c_by_tma))
                    .i32(plan.k_per_split as i32)
                    .u64(ws)
                    .i32(i32::from(stream))
                    .i32(i32::from(
                        hopper_kernel::pairing(config, p).is_some_and(|pr| pr.along_n),
                    ))
                    .i32(i32::from(swapped)),
            )?;
            if split {
                let reduce = inst.reduce.as_ref().ok_or_else(|| {
                    GpuError::Unsupported("split-K's reduction kernel is not loaded".into())
                })?;
                self.gpu.launch(
                    reduce,
                    hopper_kernel::reduce_dims(self.gpu.props().sm_count),
                    KernelArgs::new()
                        .u64(ws)
                        .buf(&data.c[copy])
                        .i32(p.m as i32)
                        .i32(p.n as i32)
                        .i32(plan.runs as i32),
                )?;
            }
            return Ok(());
        }
        self.gpu.launch(
            &inst.kernel,
            dims,
            KernelArgs::new()
                .buf(&data.a[copy])
                .buf(&data.b[copy])
                .buf(&data.c[copy])
                .i32(p.m as i32)
                .i32(p.n as i32)
                .i32(p.k as i32)
                .i32(group_m),
        )
    }

    /// Time a config (see `measure`).
    pub fn time_config(
        &self,
        data: &ShapeData,
        c: &Config,
        policy: &TimingPolicy,
        best_ms: Option<f64>,
        full: bool,
        first_ms: Option<f64>,
    ) -> Result<Timing, GemmError> {
        let mut t = self.kernel_timer(data, c)?;
        if let Some(why) = self.launch_violation(c, &data.problem) {
            return Err(GemmError::BadInput(why));
        }
        Ok(measure(
            &mut t,
            policy,
            data.rotation,
            best_ms,
            full,
            first_ms,
        )?)
    }

    /// The batch timer of a compiled config on a shape (its launch, the graph built on
    /// first use).
    fn kernel_timer<'a>(
        &'a self,
        data: &'a ShapeData,
        c: &Config,
    ) -> Result<KernelTimer<'a>, GemmError> {
        Ok(KernelTimer {
            r: self,
            inst: self.instance(c).map_err(GemmError::Runtime)?,
            data,
            dims: self.launch_dims(c, &data.problem),
            plan: self.split_plan(c, &data.problem),
            config: *c,
            graph: None,
        })
    }

    /// A config's energy under sustained load (`energy::sustained`): batches of about
    /// 5 ms of back-to-back launches (the timing's graph) until NVML's energy counter
    /// ticked twice `min_window_s` apart; `None` without a counter that moves.
    pub fn sustained_config(
        &self,
        data: &ShapeData,
        c: &Config,
        ms_per_launch: f64,
        min_window_s: f64,
    ) -> Result<Option<super::energy::Sustained>, GemmError> {
        let mut t = self.kernel_timer(data, c)?;
        self.sustained_on(&mut t, ms_per_launch, min_window_s)
    }

    /// cuBLAS's energy under sustained load, as [`Runner::sustained_config`].
    pub fn sustained_cublas(
        &self,
        data: &ShapeData,
        ms_per_launch: f64,
        min_window_s: f64,
    ) -> Result<Option<super::energy::Sustained>, GemmError> {
        let mut t = self.cublas_timer(data)?;
        self.sustained_on(&mut t, ms_per_launch, min_window_s)
    }

    /// cuBLAS's batch timer on a shape (the device idle first; graphs when capture works).
    fn cublas_timer<'a>(&'a self, data: &'a ShapeData) -> Result<CublasTimer<'a>, GemmError> {
        self.gpu.synchronize()?;
        Ok(CublasTimer {
            r: self,
            data,
            graph: None,
            use_graphs: true,
            last_reps: 1,
        })
    }

    fn sustained_on<T: Replay>(
        &self,
        timer: &mut T,
        ms_per_launch: f64,
        min_window_s: f64,
    ) -> Result<Option<super::energy::Sustained>, GemmError> {
        /// NVML's counter, and its SM clock and clock-event reasons every 50 ms.
        struct Nvml<'a> {
            gpu: &'a crate::gpu::Gpu,
            last: Option<std::time::Instant>,
            mhz: Vec<u32>,
            reasons: std::collections::BTreeSet<String>,
        }
        impl super::energy::EnergyCounter for Nvml<'_> {
            fn read_mj(&mut self) -> Option<u64> {
                self.gpu.energy_mj().ok()
            }
            fn observe(&mut self) {
                let due = self.last.map_or(true, |t| {
                    t.elapsed() >= std::time::Duration::from_millis(50)
                });
                if due {
                    self.last = Some(std::time::Instant::now());
                    if let Ok(s) = self.gpu.nvml_sample() {
                        self.mhz.extend(s.sm_mhz);
                        self.reasons.extend(s.throttle_reasons);
                    }
                }
            }
            fn observed(&self) -> (Vec<u32>, Vec<String>) {
                (self.mhz.clone(), self.reasons.iter().cloned().collect())
            }
        }
        /// The timer's batch (its graph of `reps` launches) replayed on an event queue.
        struct Queued<'t, T> {
            timer: &'t mut T,
            queue: crate::gpu::EventQueue,
        }
        impl<T: Replay> super::energy::LaunchQueue for Queued<'_, T> {
            type Error = GpuError;
            fn enqueue(&mut self, _reps: u32) -> Result<(), GpuError> {
                let timer = &mut *self.timer;
                self.queue.push(|| timer.replay())
            }
            fn finished(&mut self) -> Result<(u64, f64), GpuError> {
                self.queue.poll()
            }
            fn drain(&mut self) -> Result<(), GpuError> {
                self.queue.drain().map(|_| ())
            }
        }
        let reps = super::energy::batch_reps(ms_per_launch, 5.0, 2000);
        timer.sample(reps)?; // the graph of `reps` launches built and warm, outside the window
        let queue = timer.event_queue(self);
        let t0 = std::time::Instant::now();
        let mut now = move || t0.elapsed().as_secs_f64();
        Ok(super::energy::sustained_queued(
            &mut Queued { timer, queue },
            &mut Nvml {
                gpu: &self.gpu,
                last: None,
                mhz: Vec::new(),
                reasons: Default::default(),
            },
            &mut now,
            reps,
            min_window_s,
            min_window_s + 5.0,
        )?)
    }

    /// Time cuBLAS on the same rotation of inputs (always a full measurement).
    pub fn time_cublas(
        &self,
        data: &ShapeData,
        policy: &TimingPolicy,
    ) -> Result<Timing, GemmError> {
        let mut t = self.cublas_timer(data)?;
        Ok(measure(&mut t, policy, data.rotation, None, true, None)?)
    }
}

/// A batch timer whose last batch can be enqueued again without waiting (the energy
/// window's queue).
trait Replay: BatchTimer<Error = GpuError> {
    /// Enqueue the batch of the last `sample` again (asynchronous).
    fn replay(&mut self) -> Result<(), GpuError>;
    /// An event queue on the stream the batches run on.
    fn event_queue(&self, r: &Runner) -> crate::gpu::EventQueue;
}

impl Replay for KernelTimer<'_> {
    fn replay(&mut self) -> Result<(), GpuError> {
        match &self.graph {
            Some((_, g)) => g.replay(),
            None => Err(GpuError::Unsupported(
                "no batch to replay: sample first".into(),
            )),
        }
    }
    fn event_queue(&self, r: &Runner) -> crate::gpu::EventQueue {
        r.gpu.event_queue()
    }
}

impl Replay for CublasTimer<'_> {
    fn replay(&mut self) -> Result<(), GpuError> {
        match (&self.graph, self.use_graphs) {
            (Some((_, g)), true) => g.replay(),
            _ => {
                // host launches, as `sample` times them without graphs
                for i in 0..self.last_reps as usize {
                    self.call(i % self.data.rotation as usize)?;
                }
                Ok(())
            }
        }
    }
    fn event_queue(&self, r: &Runner) -> crate::gpu::EventQueue {
        r.cublas.event_queue()
    }
}

impl BatchTimer for KernelTimer<'_> {
    type Error = GpuError;
    fn sample(&mut self, reps: u32) -> Result<f64, GpuError> {
        if self.graph.as_ref().map(|g| g.0) != Some(reps) {
            let (r, inst, data, dims, c, plan) = (
                self.r,
                self.inst,
                self.data,
                self.dims,
                self.config,
                self.plan,
            );
            let rot = data.rotation as usize;
            let graph = r.gpu.capture(|| {
                for i in 0..reps as usize {
                    r.launch_gemm(inst, data, i % rot, dims, &c, plan)?;
                }
                Ok(())
            })?;
            if reps > 1 {
                graph.replay()?; // warm: instantiation and upload out of the timing
            }
            self.graph = Some((reps, graph));
        }
        let graph = &self.graph.as_ref().expect("set above").1;
        let ms = self.r.gpu.time_ms(|| graph.replay())?;
        Ok(ms / f64::from(reps))
    }
}

/// A timer over cuBLAS calls: CUDA graphs when capture works, host launches otherwise.
struct CublasTimer<'a> {
    r: &'a Runner,
    data: &'a ShapeData,
    graph: Option<(u32, crate::gpu::cublas::CublasGraph)>,
    use_graphs: bool,
    /// The batch size of the last sample (host launches replay it).
    last_reps: u32,
}

impl CublasTimer<'_> {
    fn call(&self, copy: usize) -> Result<(), GpuError> {
        let (d, p) = (self.data, &self.data.problem);
        self.r.cublas.gemm_tn(
            self.r.dtype,
            d.a[copy].device_addr(),
            d.b[copy].device_addr(),
            d.c[copy].device_addr(),
            p.m,
            p.n,
            p.k,
        )
    }
}

impl BatchTimer for CublasTimer<'_> {
    type Error = GpuError;
    fn sample(&mut self, reps: u32) -> Result<f64, GpuError> {
        let rot = self.data.rotation as usize;
        self.last_reps = reps;
        if self.use_graphs && self.graph.as_ref().map(|g| g.0) != Some(reps) {
            let captured = self.r.cublas.capture(|| {
                for i in 0..reps as usize {
                    self.call(i % rot)?;
                }
                Ok(())
            });
            match captured {
                Ok(g) => {
                    g.replay()?;
                    self.graph = Some((reps, g));
                }
                Err(e) => {
                    eprintln!(
                        "origami-bench: cuBLAS graph capture failed ({e}); timing host launches"
                    );
                    self.use_graphs = false;
                    self.r.cublas.synchronize()?;
                }
            }
        }
        let ms = if self.use_graphs {
            let g = &self.graph.as_ref().expect("set above").1;
            self.r.cublas.time_ms(|| g.replay())?
        } else {
            self.r.cublas.time_ms(|| {
                for i in 0..reps as usize {
                    self.call(i % rot)?;
                }
                Ok(())
            })?
        };
        Ok(ms / f64::from(reps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_hold_each_type_in_16_bit_slots() {
        // the helper kernels' kinds (src/gemm/util_kernels.cu)
        assert_eq!(element_kind(Dtype::Fp16), 0);
        assert_eq!(element_kind(Dtype::Bf16), 1);
        assert_eq!(element_kind(Dtype::Tf32), 2);
        // an fp32 element of a tf32 problem takes two u16 slots
        assert_eq!(slots_per_element(Dtype::Fp16), 1);
        assert_eq!(slots_per_element(Dtype::Bf16), 1);
        assert_eq!(slots_per_element(Dtype::Tf32), 2);
    }
}
