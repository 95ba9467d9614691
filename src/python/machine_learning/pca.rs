//! Native `PCA`.

use crate::machine_learning::{NComponents, PCA};
use crate::python::model::native_estimator;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

/// `None` -> all, an int -> that many, a float in (0, 1) -> a variance fraction (checked at fit).
fn parse_n_components(obj: Option<&Bound<'_, PyAny>>) -> PyResult<NComponents> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(NComponents::All);
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "n_components must be None, an int or a float in (0, 1), got a bool",
        ));
    }
    if obj.is_instance_of::<PyInt>()
        || obj.hasattr("__index__")? && !obj.is_instance_of::<PyFloat>()
    {
        let k: i64 = obj.extract()?;
        if k < 0 {
            return Err(PyValueError::new_err(format!(
                "n_components must be >= 1, got {k}"
            )));
        }
        return Ok(NComponents::Count(k as usize));
    }
    if let Ok(r) = obj.extract::<f64>() {
        return Ok(NComponents::VarianceRatio(r));
    }
    Err(PyTypeError::new_err(
        "n_components must be None, an int or a float in (0, 1)",
    ))
}

native_estimator! {
    PyPCA(PCA, "PCA");
    new(n_components: Option<&Bound<'_, PyAny>>, whiten: bool) {
        Ok(PCA::builder(parse_n_components(n_components)?).with_whiten(whiten))
    }
    fit(x) => |m, x| m.fit_checked(&x).map(|_| ());
    read transform => |m, x| m.transform_checked(&x);
    read inverse_transform => |m, x| m.inverse_transform_checked(&x);
    write fit_transform => |m, x| m.fit_transform_checked(&x);
    fitted components_ => |m| m.components().cloned();
    fitted explained_variance_ => |m| m.explained_variance().cloned();
    fitted explained_variance_ratio_ => |m| m.explained_variance_ratio().cloned();
    fitted singular_values_ => |m| m.singular_values().cloned();
    fitted mean_ => |m| m.mean().cloned();
    fitted n_components_ => |m| m.n_components_();
    fitted noise_variance_ => |m| m.noise_variance();
    fitted n_samples_ => |m| m.n_samples();
}
