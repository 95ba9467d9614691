//! Native `RobustScaler`.

use super::{native_scaler, read_vector};
use crate::python::to_py_err;
use crate::utils::RobustScaler;
use numpy::PyArray1;
use pyo3::prelude::*;
use std::sync::Mutex;

#[pyclass(name = "RobustScaler", module = "rustyml._native.utils")]
pub(crate) struct PyRobustScaler {
    inner: Mutex<RobustScaler>,
}

native_scaler!(
    PyRobustScaler,
    RobustScaler,
    inverse_transform = "`x * scale_ + center_`.",
    {
        /// scikit-learn's quantile rule (`0 <= q_min <= q_max <= 100`, equal bounds allowed).
        #[new]
        #[pyo3(signature = (with_centering = true, with_scaling = true, quantile_range = (25.0, 75.0)))]
        fn new(
            with_centering: bool,
            with_scaling: bool,
            quantile_range: (f64, f64),
        ) -> PyResult<Self> {
            let (q_min, q_max) = quantile_range;
            let model = RobustScaler::new()
                .with_centering(with_centering)
                .with_scaling(with_scaling)
                .with_quantile_range_inclusive(q_min, q_max)
                .map_err(to_py_err)?;
            Ok(Self::wrap(model))
        }

        /// `None` without centring, as in scikit-learn.
        #[getter]
        fn center_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| {
                m.get_center().filter(|_| m.get_with_centering()).cloned()
            })
        }

        /// `None` without scaling, as in scikit-learn.
        #[getter]
        fn scale_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
            read_vector(py, &self.inner, |m| {
                m.get_scale().filter(|_| m.get_with_scaling()).cloned()
            })
        }
    }
);
