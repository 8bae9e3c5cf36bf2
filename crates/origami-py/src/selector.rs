//! `Selector`: an `origami_core::engine::Engine` set up once from origami-select's choices
//! (family, `--gpu`, hardware file, model, `--no-fitted`, the GPU's properties), answering
//! picks, rankings, scores, explanations and batches. Rust work runs with the GIL released
//! where it can take long (setup, batches); a batch is split across the machine's cores.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use origami_core::dtype::Dtype;
use origami_core::engine::{Engine, EngineRequest, Pick as CorePick};
use origami_core::hw::DeviceProps;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert::{dim, dtype_arg, json_to_py};
use crate::device::{device_from_dict, device_to_dict};
use crate::error::{bad_input, engine_error};
use crate::pick::Pick;

/// The Python `Pick` objects of recent `select` calls, in front of the engine's LRU cache:
/// a hit returns the same (frozen) object without copying the pick out of the engine.
/// When full it is emptied (the engine's cache still holds the picks).
#[derive(Default)]
struct Front {
    picks: HashMap<(u64, u64, u64, Dtype), Py<Pick>>,
    hits: u64,
}

/// Picks GEMM configs for one GPU and one kernel family (or set), as origami-select does.
///
/// family: triton, triton-tma, triton-auto, origami, hopper, seed, auto. gpu: a preset name
/// (preset_names()). hw_file: a hardware file (TRITONBLAS_HW_PARAMS's format). model:
/// origami-select's --model. no_fitted: leave out the family's fitted constants (and its
/// learned correction). no_correction: leave out the learned correction only. device:
/// a dict of DeviceProps fields (a missing one taken from the preset matching its name),
/// or "torch"/"cuda" to read GPU 0 through torch.cuda.get_device_properties (see
/// origami_gemm._device). cache_size: picks kept by select()'s LRU cache (0: none).
#[pyclass(module = "origami_gemm._core", frozen)]
pub struct Selector {
    engine: Arc<Engine>,
    device: Option<DeviceProps>,
    model: String,
    front: Mutex<Front>,
    front_capacity: usize,
}

fn device_arg(py: Python<'_>, device: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DeviceProps>> {
    let Some(d) = device else { return Ok(None) };
    if d.is_none() {
        return Ok(None);
    }
    if let Ok(text) = d.extract::<String>() {
        if text == "torch" || text == "cuda" {
            // The torch reader lives in Python (it imports torch only then).
            let read = py
                .import("origami_gemm._device")?
                .getattr("torch_device_props")?
                .call0()?;
            return device_arg(py, Some(&read));
        }
        return Err(bad_input(
            py,
            format!("device: '{text}' is not 'torch', 'cuda', a dict or None"),
        ));
    }
    let dict = d.downcast::<PyDict>().map_err(|_| {
        bad_input(
            py,
            "device: expected a dict of DeviceProps fields, 'torch', 'cuda' or None",
        )
    })?;
    device_from_dict(dict).map(Some)
}

impl Selector {
    fn picks<'py>(&self, py: Python<'py>, picks: Vec<CorePick>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, picks.into_iter().map(Pick::new))
    }
}

#[pymethods]
impl Selector {
    #[new]
    #[pyo3(signature = (family="triton", gpu=None, hw_file=None, model="origami", no_fitted=false, device=None, cache_size=origami_core::engine::DEFAULT_CACHE_ENTRIES, calibration_only=false, no_correction=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        family: &str,
        gpu: Option<String>,
        hw_file: Option<PathBuf>,
        model: &str,
        no_fitted: bool,
        device: Option<&Bound<'_, PyAny>>,
        cache_size: usize,
        calibration_only: bool,
        no_correction: bool,
    ) -> PyResult<Selector> {
        let device = device_arg(py, device)?;
        let req = EngineRequest {
            device: device.clone(),
            gpu,
            hw_file,
            family: family.to_string(),
            model: model.to_string(),
            no_fitted,
            no_correction,
            cache_entries: Some(cache_size),
            calibration_only,
        };
        let engine = py
            .allow_threads(|| Engine::new(&req))
            .map_err(|e| engine_error(py, &e))?;
        let model = if model.trim().is_empty() {
            "origami"
        } else {
            model
        };
        Ok(Selector {
            engine: Arc::new(engine),
            device,
            model: model.to_string(),
            front: Mutex::new(Front::default()),
            front_capacity: cache_size,
        })
    }

    /// The family or family set picked for (`triton`, `triton-tma`, `triton-auto`, ...).
    #[getter]
    fn family(&self) -> &'static str {
        self.engine.family()
    }

    /// The member families, in tie-break order (one, or two for triton-auto).
    #[getter]
    fn members(&self) -> Vec<&'static str> {
        self.engine.members()
    }

    /// The model variant (`origami`, `seed`, ...).
    #[getter]
    fn model(&self) -> &str {
        &self.model
    }

    /// origami-select's notice on where the hardware numbers come from, or None.
    #[getter]
    fn notice(&self) -> Option<&str> {
        self.engine.notice()
    }

    /// The device properties given (or read from torch), as a dict; None for a preset.
    #[getter]
    fn device<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.device
            .as_ref()
            .map(|d| device_to_dict(py, d))
            .transpose()
    }

    /// The resolved hardware: the GPU description, where it came from, the five model
    /// parameters and each one's tier (derived, preset, file).
    #[getter]
    fn hardware<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.engine.hardware();
        let g = &r.gpu;
        let d = PyDict::new(py);
        d.set_item("name", &g.name)?;
        d.set_item("source", &r.gpu_source)?;
        d.set_item(
            "compute_capability",
            (g.compute_capability[0], g.compute_capability[1]),
        )?;
        d.set_item("sm_count", g.sm_count)?;
        d.set_item("l2_bytes", g.l2_bytes)?;
        d.set_item("smem_per_block_optin_bytes", g.smem_per_block_optin_bytes)?;
        d.set_item("registers_per_sm", g.registers_per_sm)?;
        d.set_item("sm_clock_mhz", g.sm_clock_mhz)?;
        d.set_item("mem_clock_mhz", g.mem_clock_mhz)?;
        d.set_item("mem_bus_width_bits", g.mem_bus_width_bits)?;
        let params = PyDict::new(py);
        let tiers = PyDict::new(py);
        for (name, tier) in &r.tiers {
            if let Some(v) = r.params.get(name) {
                params.set_item(*name, v)?;
            }
            tiers.set_item(*name, tier.to_string())?;
        }
        d.set_item("params", params)?;
        d.set_item("tiers", tiers)?;
        d.set_item("used_default_preset", r.used_default_preset)?;
        Ok(d)
    }

    /// The pick for one shape (cached): origami-select M N K --family F --dtype D.
    #[pyo3(signature = (m, n, k, dtype=None))]
    fn select(
        &self,
        py: Python<'_>,
        m: i64,
        n: i64,
        k: i64,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<Pick>> {
        let (m, n, k, dtype) = args(py, m, n, k, dtype)?;
        let key = dtype.parse::<Dtype>().ok().map(|d| (m, n, k, d));
        if let Some(key) = &key {
            let mut front = self.front.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(hit) = front.picks.get(key).map(|p| p.clone_ref(py)) {
                front.hits += 1;
                return Ok(hit);
            }
        }
        let pick = self
            .engine
            .select(m, n, k, &dtype)
            .map_err(|e| engine_error(py, &e))?;
        let pick = Py::new(py, Pick::new(pick))?;
        if let Some(key) = key.filter(|_| self.front_capacity > 0) {
            let mut front = self.front.lock().unwrap_or_else(|e| e.into_inner());
            if front.picks.len() >= self.front_capacity {
                front.picks.clear();
            }
            front.picks.insert(key, pick.clone_ref(py));
        }
        Ok(pick)
    }

    /// The `top` best configs of the chosen family, best first (--top).
    #[pyo3(signature = (m, n, k, dtype=None, top=5))]
    fn rank<'py>(
        &self,
        py: Python<'py>,
        m: i64,
        n: i64,
        k: i64,
        dtype: Option<&Bound<'py, PyAny>>,
        top: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let (m, n, k, dtype) = args(py, m, n, k, dtype)?;
        let ranked = self
            .engine
            .rank(m, n, k, &dtype, top)
            .map_err(|e| engine_error(py, &e))?;
        self.picks(py, ranked)
    }

    /// Predicted microseconds of one config (`128x128x64,g8,w4,s3`) for one shape.
    #[pyo3(signature = (m, n, k, config, dtype=None))]
    fn score(
        &self,
        py: Python<'_>,
        m: i64,
        n: i64,
        k: i64,
        config: &str,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<f64> {
        let (m, n, k, dtype) = args(py, m, n, k, dtype)?;
        self.engine
            .score(m, n, k, &dtype, config)
            .map_err(|e| engine_error(py, &e))
    }

    /// origami-select M N K --explain --format json's document, parsed.
    #[pyo3(signature = (m, n, k, dtype=None))]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        m: i64,
        n: i64,
        k: i64,
        dtype: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (m, n, k, dtype) = args(py, m, n, k, dtype)?;
        let text = self
            .engine
            .explain(m, n, k, &dtype)
            .map_err(|e| engine_error(py, &e))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad_input(py, format!("explain: {e}")))?;
        Ok(json_to_py(py, &v)?.into_bound(py))
    }

    /// The picks of many (M, N, K) shapes of one type, in order, with the GIL released.
    /// errors="raise": the first bad shape raises OrigamiError naming its index;
    /// errors="none": a bad shape's place holds None.
    #[pyo3(signature = (shapes, dtype=None, errors="raise"))]
    fn select_batch<'py>(
        &self,
        py: Python<'py>,
        shapes: &Bound<'py, PyAny>,
        dtype: Option<&Bound<'py, PyAny>>,
        errors: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        let raise = match errors {
            "raise" => true,
            "none" => false,
            _ => {
                return Err(bad_input(
                    py,
                    format!("errors: '{errors}' is not 'raise' or 'none'"),
                ))
            }
        };
        let dtype = dtype_of(dtype)?;
        // Shapes whose M, N or K the engine cannot take (negative), by index, with why.
        let mut early: Vec<(usize, PyErr)> = Vec::new();
        let mut dims: Vec<(u64, u64, u64)> = Vec::new();
        let mut given: Vec<(i64, i64, i64)> = Vec::new();
        for (i, item) in shapes.try_iter()?.enumerate() {
            let (m, n, k): (i64, i64, i64) = item?.extract().map_err(|_| {
                bad_input(
                    py,
                    format!("shape {i}: expected a sequence (M, N, K) of whole numbers"),
                )
            })?;
            given.push((m, n, k));
            match (dim(py, "M", m), dim(py, "N", n), dim(py, "K", k)) {
                (Ok(m), Ok(n), Ok(k)) => dims.push((m, n, k)),
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                    early.push((i, e));
                    // A stand-in the engine refuses at once (M = 0).
                    dims.push((0, 1, 1));
                }
            }
        }
        let engine = Arc::clone(&self.engine);
        let results = py.allow_threads(|| engine.select_batch(&dims, &dtype));
        let out = PyList::empty(py);
        let mut early = early.into_iter().peekable();
        for (i, r) in results.into_iter().enumerate() {
            let (m, n, k) = given[i];
            let shape = format!("shape {i} ({m}x{n}x{k})");
            if early.peek().is_some_and(|(j, _)| *j == i) {
                let (_, e) = early.next().expect("peeked");
                if raise {
                    return Err(bad_input(py, format!("{shape}: {}", e.value(py))));
                }
                out.append(py.None())?;
                continue;
            }
            match r {
                Ok(p) => out.append(Pick::new(p))?,
                Err(e) if raise => {
                    return Err(crate::error::origami_error(
                        py,
                        format!("{shape}: {e}"),
                        origami_core::exit::ToExit::exit_code(&e),
                    ));
                }
                Err(_) => out.append(py.None())?,
            }
        }
        Ok(out)
    }

    /// The pick cache: {"hits", "misses", "size", "capacity"}.
    fn cache_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (hits, misses, size, capacity) = self.engine.cache_stats();
        let hits = hits + self.front.lock().unwrap_or_else(|e| e.into_inner()).hits;
        let d = PyDict::new(py);
        d.set_item("hits", hits)?;
        d.set_item("misses", misses)?;
        d.set_item("size", size)?;
        d.set_item("capacity", capacity)?;
        Ok(d)
    }

    /// Empty the pick cache.
    fn cache_clear(&self) {
        let mut front = self.front.lock().unwrap_or_else(|e| e.into_inner());
        *front = Front::default();
        self.engine.clear_cache();
    }

    /// `Selector(family=..., model=..., gpu=...)`.
    fn __repr__(&self) -> String {
        let h = self.engine.hardware();
        format!(
            "Selector(family={:?}, model={:?}, gpu={:?})",
            self.engine.family(),
            self.model,
            h.gpu.name
        )
    }
}

fn dtype_of(dtype: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    match dtype {
        None => Ok("fp16".to_string()),
        Some(d) if d.is_none() => Ok("fp16".to_string()),
        Some(d) => dtype_arg(d),
    }
}

fn args(
    py: Python<'_>,
    m: i64,
    n: i64,
    k: i64,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<(u64, u64, u64, String)> {
    Ok((
        dim(py, "M", m)?,
        dim(py, "N", n)?,
        dim(py, "K", k)?,
        dtype_of(dtype)?,
    ))
}
