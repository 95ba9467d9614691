//! `rustyml._native.metrics`: regression, classification and clustering metrics. Label
//! arrays arrive as int64 or float64 (the Python wrappers encode anything else), see
//! [`crate::python::labels`].

use pyo3::prelude::*;
use pyo3::types::PyModule;

mod classification;
mod clustering;
mod confusion_matrix;
mod ranking;
mod regression;

/// Conversion of one native label type from a Python scalar (`pos_label`).
pub(crate) trait FromPyLabel: Sized {
    fn from_py(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self>;
}

impl FromPyLabel for i64 {
    fn from_py(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        crate::python::labels::label_i64(obj, name)
    }
}

impl FromPyLabel for f64 {
    fn from_py(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        crate::python::labels::label_f64(obj, name)
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    regression::register(m)?;
    classification::register(m)?;
    clustering::register(m)?;
    ranking::register(m)?;
    m.add_class::<confusion_matrix::PyConfusionMatrix>()?;
    Ok(())
}
