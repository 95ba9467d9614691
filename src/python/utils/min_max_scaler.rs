//! Native `MinMaxScaler`.

use super::{native_scaler, opt_array};
use crate::utils::MinMaxScaler;
use numpy::PyArray1;
use pyo3::prelude::*;

#[pyclass(name = "MinMaxScaler", module = "rustyml._native.utils")]
pub(crate) struct PyMinMaxScaler {
    inner: MinMaxScaler,
}

native_scaler!(
    PyMinMaxScaler,
    MinMaxScaler,
    partial_fit = "Widen the fitted minima and maxima with one more batch.",
    inverse_transform = "`(x - min_) / scale_`.",
    {
        #[new]
        #[pyo3(signature = (feature_range = (0.0, 1.0), clip = false))]
        fn new(feature_range: (f64, f64), clip: bool) -> Self {
            Self {
                inner: MinMaxScaler::new(feature_range, clip),
            }
        }

        #[getter]
        fn data_min_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.data_min())
        }

        #[getter]
        fn data_max_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.data_max())
        }

        #[getter]
        fn data_range_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.data_range())
        }

        #[getter]
        fn scale_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.scale())
        }

        #[getter]
        fn min_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            opt_array(py, self.inner.min())
        }

        #[getter]
        fn n_samples_seen_(&self) -> Option<usize> {
            self.inner.n_samples_seen()
        }
    }
);
