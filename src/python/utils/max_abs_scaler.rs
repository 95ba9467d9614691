//! Native `MaxAbsScaler`.

use super::{native_scaler, opt_array};
use crate::utils::MaxAbsScaler;
use numpy::PyArray1;
use pyo3::prelude::*;

#[pyclass(name = "MaxAbsScaler", module = "rustyml._native.utils")]
pub(crate) struct PyMaxAbsScaler {
    inner: MaxAbsScaler,
}

native_scaler!(
    PyMaxAbsScaler,
    MaxAbsScaler,
    partial_fit = "Raise the fitted maxima with one more batch.",
    inverse_transform = "`x * scale_`.",
    {
        #[new]
        fn new() -> Self {
            Self {
                inner: MaxAbsScaler::new(),
            }
        }

        #[getter]
        fn max_abs_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.max_abs())
        }

        #[getter]
        fn scale_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.scale())
        }

        #[getter]
        fn n_samples_seen_(&self) -> Option<usize> {
            self.inner.n_samples_seen()
        }
    }
);
