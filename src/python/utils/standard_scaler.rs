//! Native `StandardScaler`.

use super::{native_scaler, opt_array};
use crate::utils::StandardScaler;
use numpy::PyArray1;
use pyo3::prelude::*;

#[pyclass(name = "StandardScaler", module = "rustyml._native.utils")]
pub(crate) struct PyStandardScaler {
    inner: StandardScaler,
}

native_scaler!(
    PyStandardScaler,
    StandardScaler,
    partial_fit = "Merge the statistics of one more batch.",
    inverse_transform = "`x * scale_ + mean_`.",
    {
        #[new]
        #[pyo3(signature = (with_mean = true, with_std = true))]
        fn new(with_mean: bool, with_std: bool) -> Self {
            Self {
                inner: StandardScaler::new(with_mean, with_std),
            }
        }

        #[getter]
        fn mean_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.mean())
        }

        #[getter]
        fn var_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.var())
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
