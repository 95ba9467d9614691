//! Native `MaxAbsScaler`.

use super::{native_scaler, read_vector};
use crate::utils::MaxAbsScaler;
use numpy::PyArray1;
use pyo3::prelude::*;

native_scaler!(
    PyMaxAbsScaler(MaxAbsScaler, "MaxAbsScaler"),
    partial_fit = "Raise the fitted maxima with one more batch.",
    inverse_transform = "`x * scale_`.",
    {
        #[new]
        fn new() -> Self {
            Self::wrap(MaxAbsScaler::new())
        }

        #[getter]
        fn max_abs_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| m.get_max_abs().cloned())
        }

        #[getter]
        fn scale_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| m.get_scale().cloned())
        }

        #[getter]
        fn n_samples_seen_(&self, py: Python<'_>) -> Option<usize> {
            self.inner
                .read(py, |m| m.get_n_features().map(|_| m.get_n_samples_seen()))
        }
    }
);
