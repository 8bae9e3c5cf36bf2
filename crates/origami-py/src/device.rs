//! The GPU's properties from a Python dict (`hw::DeviceProps`'s fields), a missing field
//! filled from the preset whose name matches the device's (`hw::presets::preset_for_device`,
//! the rule `origami-select` uses to pick the calibrated tier for a GPU it finds).

use origami_core::hw::presets::{preset, preset_for_device, preset_names as names};
use origami_core::hw::schema::GpuDesc;
use origami_core::hw::DeviceProps;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::bad_input;

/// The embedded presets' names (`gpu=`), comma separated.
#[pyfunction]
pub fn preset_names() -> String {
    names()
}

const FIELDS: [&str; 9] = [
    "name",
    "compute_capability",
    "sm_count",
    "l2_bytes",
    "smem_per_block_optin_bytes",
    "registers_per_sm",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "mem_bus_width_bits",
];

fn field<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v.extract::<T>().map(Some).map_err(|_| {
            bad_input(
                d.py(),
                format!(
                    "device: '{key}' = {} is not a valid value",
                    v.repr().map(|r| r.to_string()).unwrap_or_default()
                ),
            )
        }),
    }
}

/// DeviceProps from a dict; a field absent (or None, or a clock <= 0) is taken from the
/// preset matching the name, and without one the dict is refused.
pub fn device_from_dict(d: &Bound<'_, PyDict>) -> PyResult<DeviceProps> {
    let py = d.py();
    for k in d.keys() {
        let k: String = k.extract()?;
        if !FIELDS.contains(&k.as_str()) {
            return Err(bad_input(
                py,
                format!("device: unknown field '{k}' (known: {})", FIELDS.join(", ")),
            ));
        }
    }
    let name: String =
        field(d, "name")?.ok_or_else(|| bad_input(py, "device: 'name' is required"))?;
    let preset_gpu: Option<GpuDesc> =
        preset_for_device(&name).and_then(|p| preset(p).ok().map(|doc| doc.gpu));
    let fill = |key: &str| {
        bad_input(
            py,
            format!(
                "device: '{key}' is missing and no preset matches '{name}' (presets: {})",
                names()
            ),
        )
    };
    let positive = |v: Option<f64>| v.filter(|x| x.is_finite() && *x > 0.0);
    let cc: Option<Vec<u32>> = field(d, "compute_capability")?;
    let compute_capability = match cc {
        Some(v) if v.len() == 2 => [v[0], v[1]],
        Some(_) => {
            return Err(bad_input(
                py,
                "device: 'compute_capability' must be (major, minor)",
            ))
        }
        None => preset_gpu
            .as_ref()
            .map(|g| g.compute_capability)
            .ok_or_else(|| fill("compute_capability"))?,
    };
    macro_rules! get {
        ($key:literal, $t:ty, $from:ident) => {
            match field::<$t>(d, $key)?.filter(|v| *v > 0) {
                Some(v) => v,
                None => preset_gpu
                    .as_ref()
                    .map(|g| g.$from)
                    .ok_or_else(|| fill($key))?,
            }
        };
    }
    let sm_clock_mhz = match positive(field(d, "sm_clock_mhz")?) {
        Some(v) => v,
        None => preset_gpu
            .as_ref()
            .map(|g| g.sm_clock_mhz)
            .ok_or_else(|| fill("sm_clock_mhz"))?,
    };
    let mem_clock_mhz = match positive(field(d, "mem_clock_mhz")?) {
        Some(v) => v,
        None => preset_gpu
            .as_ref()
            .map(|g| g.mem_clock_mhz)
            .ok_or_else(|| fill("mem_clock_mhz"))?,
    };
    Ok(DeviceProps {
        compute_capability,
        sm_count: get!("sm_count", u32, sm_count),
        l2_bytes: get!("l2_bytes", u64, l2_bytes),
        smem_per_block_optin_bytes: get!(
            "smem_per_block_optin_bytes",
            u64,
            smem_per_block_optin_bytes
        ),
        registers_per_sm: get!("registers_per_sm", u32, registers_per_sm),
        sm_clock_mhz,
        mem_clock_mhz,
        mem_bus_width_bits: get!("mem_bus_width_bits", u32, mem_bus_width_bits),
        name,
    })
}

/// DeviceProps as a dict (the same field names).
pub fn device_to_dict<'py>(py: Python<'py>, p: &DeviceProps) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &p.name)?;
    d.set_item(
        "compute_capability",
        (p.compute_capability[0], p.compute_capability[1]),
    )?;
    d.set_item("sm_count", p.sm_count)?;
    d.set_item("l2_bytes", p.l2_bytes)?;
    d.set_item("smem_per_block_optin_bytes", p.smem_per_block_optin_bytes)?;
    d.set_item("registers_per_sm", p.registers_per_sm)?;
    d.set_item("sm_clock_mhz", p.sm_clock_mhz)?;
    d.set_item("mem_clock_mhz", p.mem_clock_mhz)?;
    d.set_item("mem_bus_width_bits", p.mem_bus_width_bits)?;
    Ok(d)
}

/// The preset origami-select would take for a device of this name, or None.
#[pyfunction]
pub fn preset_matches(device_name: &str) -> Option<&'static str> {
    preset_for_device(device_name)
}
