//! Conversions at the Python boundary: JSON values to Python objects, the input type from
//! a string or a torch dtype (by its `str()`, without importing torch), and M, N, K checked
//! with `origami-select`'s messages.

use origami_core::model::problem::parse_dim;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::error::bad_input;

/// A JSON value as the Python object `json.loads` would make.
pub fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<PyObject> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any().unbind()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any().unbind()
            } else {
                n.as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for x in a {
                list.append(json_to_py(py, x)?)?;
            }
            list.into_any().unbind()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// The type name origami-select takes, from a name (`"fp16"`, `"bf16"`) or a torch dtype's
/// `str()` (`"torch.float16"`, `"torch.bfloat16"`, `"torch.float8_e4m3fn"`,
/// `"torch.float32"`). Anything else is passed on unchanged, so the engine refuses it with
/// origami-select's `--dtype` message.
#[pyfunction]
pub fn normalize_dtype(text: &str) -> String {
    let t = text.trim();
    let bare = t.strip_prefix("torch.").unwrap_or(t);
    match bare {
        "float8_e4m3fn" => "fp8".to_string(),
        "float8_e5m2" => "fp8e5m2".to_string(),
        _ => bare.to_string(),
    }
}

/// The type argument as a name: a `str`, or any object by its `str()`.
pub fn dtype_arg(dtype: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = match dtype.extract::<String>() {
        Ok(s) => s,
        Err(_) => dtype.str()?.to_string(),
    };
    Ok(normalize_dtype(&text))
}

/// One of M, N, K as the engine takes it: a negative number fails with origami-select's
/// message for it (zero and too-large values are the engine's to refuse).
pub fn dim(py: Python<'_>, name: &str, v: i64) -> PyResult<u64> {
    if v < 0 {
        return Err(match parse_dim(name, &v.to_string()) {
            Err(e) => bad_input(py, e.to_string()),
            Ok(_) => bad_input(py, format!("{name}: {v} is negative")),
        });
    }
    Ok(v as u64)
}
