//! Native `MinMaxScaler`.

use super::{native_scaler, read_vector};
use crate::python::to_py_err;
use crate::utils::MinMaxScaler;
use numpy::PyArray1;
use pyo3::prelude::*;

native_scaler!(
    PyMinMaxScaler(MinMaxScaler, "MinMaxScaler"),
    partial_fit = "Widen the fitted minima and maxima with one more batch.",
    inverse_transform = "Undo `transform` (without clipping).",
    {
        #[new]
        #[pyo3(signature = (*, feature_range, clip))]
        fn new(feature_range: (f64, f64), clip: bool) -> PyResult<Self> {
            let (lo, hi) = feature_range;
            let model = MinMaxScaler::new()
                .with_feature_range(lo, hi)
                .map_err(to_py_err)?
                .with_clip(clip);
            Ok(Self::wrap(model))
        }

        #[getter]
        fn data_min_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| m.get_data_min().cloned())
        }

        #[getter]
        fn data_max_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| m.get_data_max().cloned())
        }

        #[getter]
        fn data_range_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| m.get_data_range())
        }

        #[getter]
        fn scale_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| m.get_scale().cloned())
        }

        #[getter]
        fn min_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| m.get_min().cloned())
        }

        #[getter]
        fn n_samples_seen_(&self, py: Python<'_>) -> Option<usize> {
            self.inner
                .read(py, |m| m.get_n_features().map(|_| m.get_n_samples_seen()))
        }
    }
);
